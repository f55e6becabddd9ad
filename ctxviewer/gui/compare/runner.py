"""Runs ``compare`` (and one request's category table) on the thread pool.

``run(session, names)`` computes the comparison; with ``anthropic`` among the
names it first counts every scorable request through the API (progress and
cancel between calls). ``table(index)`` computes the category table of one
request for the last comparison. Generation counters drop stale results.
Requests of a compacted branch carry an estimated usage: they are not scored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, Signal

from ctxviewer.analysis.compare.scoring import Comparison, compare, scorable
from ctxviewer.analysis.compare.table import CategoryTable, category_table
from ctxviewer.analysis.tokens.counter import PromptCounter
from ctxviewer.analysis.tokens.registry import remote_counters
from ctxviewer.gui.widgets.jobs import LatestJob
from ctxviewer.model import Session


def compare_job(
    session: Session,
    names: Sequence[str],
    counters: dict[str, PromptCounter],
    index: int | None = None,
) -> Callable[[Callable[[int, int], None], Callable[[], bool]], Any]:
    """The comparison, and with ``index`` the category table of that request: a
    separate job right after would compete with the paint of the comparison."""

    def job(
        progress: Callable[[int, int], None], cancelled: Callable[[], bool]
    ) -> tuple[Comparison, CategoryTable | None]:
        counters.update(remote_counters(session, names, progress=progress, cancelled=cancelled))
        c = compare(session, names, counters=counters, cancelled=cancelled)
        table = None
        if index is not None and 0 <= index < len(session.requests) and not cancelled():
            table = category_table(session, index, c, dict(counters))
        return c, table

    return job


class CompareRunner(QObject):
    finished = Signal(object)  # Comparison
    table_ready = Signal(object)  # CategoryTable
    progressed = Signal(int, int)  # done, total (API counts)
    failed = Signal(str)
    cancelled = Signal()
    busy_changed = Signal(bool)

    def __init__(self, pool: QThreadPool | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session: Session | None = None
        self.comparison: Comparison | None = None
        self._ready: CategoryTable | None = None  # the table computed with the comparison
        self._counters: dict[str, PromptCounter] = {}
        self._jobs = LatestJob(pool, self)  # the comparison
        self._jobs.finished.connect(self._on_finished)
        self._jobs.failed.connect(self.failed)
        self._jobs.cancelled.connect(self.cancelled)
        self._jobs.progressed.connect(self._on_progressed)
        self._jobs.busy_changed.connect(self.busy_changed)
        self._tables = LatestJob(pool, self)  # one request's category table
        self._tables.finished.connect(self.table_ready)

    def is_busy(self) -> bool:
        return self._jobs.is_busy()

    def run(self, session: Session, names: Sequence[str], index: int | None = None) -> None:
        """Compare ``names`` on ``session``; with ``index``, that request's category
        table comes with the result (``table(index)`` then needs no job)."""
        self.session = scorable(session)
        self.comparison = None
        self._ready = None
        self._counters = {}
        job = compare_job(self.session, list(names), self._counters, index)
        self._jobs.start(job, soon=True)

    def table(self, index: int) -> None:
        c, s = self.comparison, self.session
        if c is None or s is None or not 0 <= index < len(s.requests):
            return
        if self._ready is not None and self._ready.request == index:
            self._tables.drop()  # a table asked for before is stale
            self.table_ready.emit(self._ready)  # computed with the comparison
            return
        counters = dict(self._counters)

        def job(_p: Callable[[int, int], None], _c: Callable[[], bool]) -> Any:
            return category_table(s, index, c, counters)

        self._tables.start(job, soon=True)

    def cancel(self) -> None:
        self._jobs.cancel()

    def _on_progressed(self, done: object, total: object) -> None:
        self.progressed.emit(int(done), int(total))  # type: ignore[call-overload]

    def _on_finished(self, result: object) -> None:
        self.comparison, self._ready = result  # type: ignore[misc]
        self.finished.emit(self.comparison)
