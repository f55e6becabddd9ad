"""Runs ``compare`` (and one request's category table) on the thread pool.

``run(session, names)`` computes the comparison; with ``anthropic`` among the
names it first counts every scorable request through the API (progress and
cancel between calls). ``table(index)`` computes the category table of one
request for the last comparison. Generation counters drop stale results.
Requests of a compacted branch carry an estimated usage: they are not scored.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, Signal

from ctxviewer.analysis.compare import CategoryTable, Comparison, PromptCounter, compare, scorable
from ctxviewer.analysis.compare_table import category_table
from ctxviewer.gui.widgets.worker import Worker, WorkerSignals, start_soon
from ctxviewer.model import Session

ANTHROPIC = "anthropic"


def anthropic_available() -> bool:
    return bool(os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_BASE_URL"))


def compare_job(session: Session, names: Sequence[str], counters: dict[str, PromptCounter],
                index: int | None = None
                ) -> Callable[[Callable[[int, int], None], Callable[[], bool]], Any]:
    """The comparison, and with ``index`` the category table of that request: a
    separate job right after would compete with the paint of the comparison."""
    def job(progress: Callable[[int, int], None], cancelled: Callable[[], bool]
            ) -> tuple[Comparison, CategoryTable | None]:
        if ANTHROPIC in names:
            from ctxviewer.analysis.anthropic_count import AnthropicCounter

            counter = AnthropicCounter.from_env()
            counter.prefetch([r for r in session.requests if r.complete and r.api_prompt_tokens],
                             progress=progress, cancelled=cancelled)
            counters[ANTHROPIC] = counter
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
        self._pool = pool or QThreadPool.globalInstance()
        self._gen = 0
        self._table_gen = 0
        self._cancel = threading.Event()
        self._busy = False
        self.session: Session | None = None
        self.comparison: Comparison | None = None
        self._ready: CategoryTable | None = None  # the table computed with the comparison
        self._counters: dict[str, PromptCounter] = {}
        self._signals = WorkerSignals()
        self._signals.finished.connect(self._on_finished)
        self._signals.failed.connect(self._on_failed)
        self._signals.cancelled.connect(self._on_cancelled)
        self._signals.progressed.connect(self._on_progressed)
        self._table_signals = WorkerSignals()
        self._table_signals.finished.connect(self._on_table_finished)

    def is_busy(self) -> bool:
        return self._busy

    def run(self, session: Session, names: Sequence[str], index: int | None = None) -> None:
        """Compare ``names`` on ``session``; with ``index``, that request's category
        table comes with the result (``table(index)`` then needs no job)."""
        self._cancel.set()
        self._gen += 1
        self._cancel = threading.Event()
        self.session = scorable(session)
        self.comparison = None
        self._ready = None
        self._counters = {}
        job = compare_job(self.session, list(names), self._counters, index)
        start_soon(self._pool, Worker(job, self._gen, self._signals, self._cancel), self)
        self._set_busy(True)

    def table(self, index: int) -> None:
        c, s = self.comparison, self.session
        if c is None or s is None or not 0 <= index < len(s.requests):
            return
        self._table_gen += 1
        if self._ready is not None and self._ready.request == index:
            self.table_ready.emit(self._ready)  # computed with the comparison
            return
        counters = dict(self._counters)

        def job(_p: Callable[[int, int], None], _c: Callable[[], bool]) -> Any:
            return category_table(s, index, c, counters)

        start_soon(self._pool, Worker(job, self._table_gen, self._table_signals,
                                      threading.Event()), self)

    def cancel(self) -> None:
        self._cancel.set()

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busy_changed.emit(busy)

    def _on_progressed(self, gen: int, done: object, total: object) -> None:
        if gen == self._gen:
            self.progressed.emit(int(done), int(total))  # type: ignore[call-overload]

    def _on_finished(self, gen: int, result: object) -> None:
        if gen == self._gen:
            self.comparison, self._ready = result  # type: ignore[misc]
            self._set_busy(False)
            self.finished.emit(self.comparison)

    def _on_failed(self, gen: int, reason: str) -> None:
        if gen == self._gen:
            self._set_busy(False)
            self.failed.emit(reason)

    def _on_cancelled(self, gen: int) -> None:
        if gen == self._gen:
            self._set_busy(False)
            self.cancelled.emit()

    def _on_table_finished(self, gen: int, table: object) -> None:
        if gen == self._table_gen:
            self.table_ready.emit(table)
