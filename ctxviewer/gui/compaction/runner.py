"""Runs ``simulate_compaction`` on the thread pool (an API summary can take a while).

The anthropic summarizer is kept across runs, so that its circuit breaker
(3 consecutive failures stop automatic summaries until a forced one
succeeds) behaves as in qwen-code. A failed summary comes back as
``failed(message, stopped)``; cancelling stops the API stream.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, Signal

from ctxviewer.analysis.compaction import LocalSummarizer, Params, simulate_compaction
from ctxviewer.analysis.estimators import Estimator
from ctxviewer.analysis.thresholds import Thresholds
from ctxviewer.gui.widgets.worker import Worker, WorkerSignals, start
from ctxviewer.ingest import Cancelled
from ctxviewer.model import Request


def anthropic_configured() -> bool:
    return bool(os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_BASE_URL"))


class _Failure:
    def __init__(self, message: str, stopped: bool) -> None:
        self.message = message
        self.stopped = stopped


class CompactionRunner(QObject):
    finished = Signal(object)  # CompactionResult
    failed = Signal(str, bool)  # message, stopped (the three-failure breaker is open)
    cancelled = Signal()
    busy_changed = Signal(bool)

    def __init__(self, pool: QThreadPool | None = None, parent: QObject | None = None,
                 anthropic_factory: Callable[[], Any] | None = None) -> None:
        super().__init__(parent)
        self._pool = pool or QThreadPool.globalInstance()
        self._gen = 0
        self._cancel = threading.Event()
        self._busy = False
        self._factory = anthropic_factory
        self._anthropic: Any = None
        self._signals = WorkerSignals()
        self._signals.finished.connect(self._on_finished)
        self._signals.failed.connect(self._on_failed)
        self._signals.cancelled.connect(self._on_cancelled)

    def is_busy(self) -> bool:
        return self._busy

    def summarizer(self, name: str) -> Any:
        if name != "anthropic":
            return LocalSummarizer()
        if self._anthropic is None:
            if self._factory is not None:
                self._anthropic = self._factory()
            else:
                from ctxviewer.analysis.compaction.summarize_anthropic import AnthropicSummarizer

                self._anthropic = AnthropicSummarizer()
        return self._anthropic

    def run(self, req: Request, strategy: str, est: Estimator, thresholds: Thresholds,
            params: Params, summarizer: str = "local", inferred: int | None = None,
            force: bool = True) -> None:
        self._cancel.set()
        self._gen += 1
        self._cancel = threading.Event()
        cancel = self._cancel
        s = self.summarizer(summarizer)
        if hasattr(s, "cancelled"):
            s.cancelled = cancel.is_set

        def job(_progress: Callable[[int, int], None], _cancelled: Callable[[], bool]) -> Any:
            from ctxviewer.analysis.compaction.summarize_anthropic import (
                SummarizerError,
                SummarizerStopped,
                SummaryCancelled,
            )

            try:
                return simulate_compaction(req, strategy, est, thresholds, summarizer=s,
                                           params=params, inferred_overhead=inferred, force=force)
            except SummaryCancelled:
                raise Cancelled() from None
            except SummarizerError as e:
                return _Failure(str(e), isinstance(e, SummarizerStopped))

        start(self._pool, Worker(job, self._gen, self._signals, cancel))
        self._set_busy(True)

    def cancel(self) -> None:
        self._cancel.set()

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busy_changed.emit(busy)

    def _on_finished(self, gen: int, result: object) -> None:
        if gen != self._gen:
            return
        self._set_busy(False)
        if isinstance(result, _Failure):
            self.failed.emit(result.message, result.stopped)
        else:
            self.finished.emit(result)

    def _on_failed(self, gen: int, reason: str) -> None:
        if gen == self._gen:
            self._set_busy(False)
            self.failed.emit(reason, False)

    def _on_cancelled(self, gen: int) -> None:
        if gen == self._gen:
            self._set_busy(False)
            self.cancelled.emit()
