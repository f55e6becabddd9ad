"""Runs ``simulate_compaction`` on the thread pool (an API summary can take a while).

The anthropic summarizer is kept across runs, so that its circuit breaker
(3 consecutive failures stop automatic summaries until a forced one
succeeds) behaves as in qwen-code. A failed summary comes back as
``failed(message, stopped)``; cancelling stops the API stream.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, Signal

from ctxviewer.analysis.compaction import LocalSummarizer, Params, simulate_compaction
from ctxviewer.analysis.thresholds import Thresholds
from ctxviewer.analysis.tokens.estimators import Estimator
from ctxviewer.gui.widgets.jobs import LatestJob
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

    def __init__(
        self,
        pool: QThreadPool | None = None,
        parent: QObject | None = None,
        anthropic_factory: Callable[[], Any] | None = None,
    ) -> None:
        super().__init__(parent)
        self._factory = anthropic_factory
        self._anthropic: Any = None
        self._jobs = LatestJob(pool, self)
        self._jobs.finished.connect(self._on_finished)
        self._jobs.failed.connect(self._on_failed)
        self._jobs.cancelled.connect(self.cancelled)
        self._jobs.busy_changed.connect(self.busy_changed)

    def is_busy(self) -> bool:
        return self._jobs.is_busy()

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

    def run(
        self,
        req: Request,
        strategy: str,
        est: Estimator,
        thresholds: Thresholds,
        params: Params,
        summarizer: str = "local",
        inferred: int | None = None,
        force: bool = True,
    ) -> None:
        ticket = self._jobs.begin()
        s = self.summarizer(summarizer)
        if hasattr(s, "cancelled"):  # the API stream stops when the job is cancelled
            s.cancelled = ticket.cancelled

        def job(_progress: Callable[[int, int], None], _cancelled: Callable[[], bool]) -> Any:
            from ctxviewer.analysis.compaction.summarize_anthropic import (
                SummarizerError,
                SummarizerStopped,
                SummaryCancelled,
            )

            try:
                return simulate_compaction(
                    req,
                    strategy,
                    est,
                    thresholds,
                    summarizer=s,
                    params=params,
                    inferred_overhead=inferred,
                    force=force,
                )
            except SummaryCancelled:
                raise Cancelled() from None
            except SummarizerError as e:
                return _Failure(str(e), isinstance(e, SummarizerStopped))

        self._jobs.run(ticket, job)

    def cancel(self) -> None:
        self._jobs.cancel()

    def _on_finished(self, result: object) -> None:
        if isinstance(result, _Failure):
            self.failed.emit(result.message, result.stopped)
        else:
            self.finished.emit(result)

    def _on_failed(self, reason: str) -> None:
        self.failed.emit(reason, False)
