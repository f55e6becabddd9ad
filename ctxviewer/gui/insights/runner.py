"""Computes insights and request diffs on the thread pool.

``compute(session, est)`` runs ``insights(...)`` (prices read from disk,
the user's override merged) plus the previous request of every request in
its conversation (for the diff page); ``diff(session, a, b, est)`` runs
``diff_requests``. Each has its own generation counter so a newer job makes
older results stale; ``busy_changed`` says when anything is running.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from itertools import pairwise

from PySide6.QtCore import QObject, QThreadPool, Signal

from ctxviewer.analysis.estimators import Estimator
from ctxviewer.analysis.insights import (
    Insights,
    conversations,
    diff_requests,
    insights,
    load_prices,
)
from ctxviewer.gui.widgets.worker import Job, Worker, WorkerSignals, start_soon
from ctxviewer.model import Session


@dataclass(frozen=True)
class InsightsResult:
    """Insights computed off the GUI thread, for one session and estimator."""

    session: Session
    estimator: str
    insights: Insights
    previous: dict[int, int] = field(default_factory=dict)  # request -> previous in its conversation


def compute_insights(session: Session, est: Estimator) -> InsightsResult:
    """What the insights panel shows for ``session`` (runs on a worker thread)."""
    try:
        prices = load_prices()
    except ValueError as e:
        raise ValueError(f"price table: {e}") from None
    result = insights(session, est, prices)
    previous = {b.index: a.index for c in conversations(session)
                for a, b in pairwise(c.requests)}
    return InsightsResult(session, est.name, result, previous)


class InsightsRunner(QObject):
    computed = Signal(object)  # InsightsResult
    diffed = Signal(object)  # RequestDiff
    failed = Signal(str)  # one-line reason
    busy_changed = Signal(bool)

    def __init__(self, pool: QThreadPool | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = pool or QThreadPool.globalInstance()
        self._gen = {"insights": 0, "diff": 0}
        self._running: set[str] = set()
        self._cancel = {"insights": threading.Event(), "diff": threading.Event()}
        self._signals = {"insights": WorkerSignals(), "diff": WorkerSignals()}  # no parent:
        # running workers keep them alive; bound slots of this QObject run on its thread
        self._signals["insights"].finished.connect(self._on_insights_finished)
        self._signals["insights"].failed.connect(self._on_insights_failed)
        self._signals["diff"].finished.connect(self._on_diff_finished)
        self._signals["diff"].failed.connect(self._on_diff_failed)

    def is_busy(self) -> bool:
        return bool(self._running)

    def compute(self, session: Session, est: Estimator) -> None:
        self._start("insights", lambda _p, _c: compute_insights(session, est))

    def diff(self, session: Session, a: int, b: int, est: Estimator) -> None:
        ra, rb = session.requests[a], session.requests[b]
        self._start("diff", lambda _p, _c: diff_requests(ra, rb, est))

    def _start(self, kind: str, job: Job) -> None:
        self._cancel[kind].set()
        self._cancel[kind] = threading.Event()
        self._gen[kind] += 1
        was_busy = self.is_busy()
        self._running.add(kind)
        start_soon(self._pool, Worker(job, self._gen[kind], self._signals[kind],
                                      self._cancel[kind]), self)
        if not was_busy:
            self.busy_changed.emit(True)

    def _ended(self, kind: str, gen: int) -> bool:
        if gen != self._gen[kind]:
            return False
        self._running.discard(kind)
        return True

    def _on_insights_finished(self, gen: int, result: object) -> None:
        if self._ended("insights", gen):
            self.computed.emit(result)
            self._settle()

    def _on_diff_finished(self, gen: int, result: object) -> None:
        if self._ended("diff", gen):
            self.diffed.emit(result)
            self._settle()

    def _on_insights_failed(self, gen: int, reason: str) -> None:
        if self._ended("insights", gen):
            self.failed.emit(reason)
            self._settle()

    def _on_diff_failed(self, gen: int, reason: str) -> None:
        if self._ended("diff", gen):
            self.failed.emit(reason)
            self._settle()

    def _settle(self) -> None:
        if not self.is_busy():
            self.busy_changed.emit(False)
