"""Computes insights and request diffs on the thread pool.

``compute(session, est)`` runs ``insights(...)`` (prices read from disk,
the user's override merged) plus the previous request of every request in
its conversation (for the diff page); ``diff(session, a, b, est)`` runs
``diff_requests``. Each is a ``LatestJob`` (a newer job makes older results
stale); ``busy_changed`` says when anything is running.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise

from PySide6.QtCore import QObject, QThreadPool, Signal

from ctxviewer.analysis.insights import (
    Insights,
    conversations,
    diff_requests,
    insights,
    load_prices,
)
from ctxviewer.analysis.tokens.estimators import Estimator
from ctxviewer.gui.widgets.jobs import LatestJob
from ctxviewer.model import Session


@dataclass(frozen=True)
class InsightsResult:
    """Insights computed off the GUI thread, for one session and estimator."""

    session: Session
    estimator: str
    insights: Insights
    previous: dict[int, int] = field(
        default_factory=dict
    )  # request -> previous in its conversation


def compute_insights(session: Session, est: Estimator) -> InsightsResult:
    """What the insights panel shows for ``session`` (runs on a worker thread)."""
    try:
        prices = load_prices()
    except ValueError as e:
        raise ValueError(f"price table: {e}") from None
    result = insights(session, est, prices)
    previous = {b.index: a.index for c in conversations(session) for a, b in pairwise(c.requests)}
    return InsightsResult(session, est.name, result, previous)


class InsightsRunner(QObject):
    computed = Signal(object)  # InsightsResult
    diffed = Signal(object)  # RequestDiff
    failed = Signal(str)  # one-line reason
    busy_changed = Signal(bool)

    def __init__(self, pool: QThreadPool | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._busy = False
        self._insights = LatestJob(pool, self)
        self._diffs = LatestJob(pool, self)
        self._insights.finished.connect(self.computed)
        self._diffs.finished.connect(self.diffed)
        for jobs in (self._insights, self._diffs):
            jobs.failed.connect(self.failed)
            jobs.busy_changed.connect(self._settle)

    def is_busy(self) -> bool:
        return self._insights.is_busy() or self._diffs.is_busy()

    def compute(self, session: Session, est: Estimator) -> None:
        self._insights.start(lambda _p, _c: compute_insights(session, est), soon=True)

    def diff(self, session: Session, a: int, b: int, est: Estimator) -> None:
        ra, rb = session.requests[a], session.requests[b]
        self._diffs.start(lambda _p, _c: diff_requests(ra, rb, est), soon=True)

    def _settle(self, _busy: bool = False) -> None:
        busy = self.is_busy()
        if busy != self._busy:
            self._busy = busy
            self.busy_changed.emit(busy)
