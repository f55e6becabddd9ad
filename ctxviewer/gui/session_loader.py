"""Loading and analysing sessions on the thread pool.

``load(path, options)`` reads a file and prepares its ``Analysis`` (timeline
and the default breakdown, so that the BPE estimators count off the GUI
thread); ``analyse(session, options)`` re-prepares a loaded session after the
estimator, policy or window changed. Generation counters drop the results of
jobs that a newer one made stale; ``cancel()`` stops the running load
between records.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, QThreadPool, Signal

from ctxviewer.analysis.report import Analysis
from ctxviewer.gui.app_state import Options
from ctxviewer.gui.worker import Job, Worker, WorkerSignals, start
from ctxviewer.ingest import load
from ctxviewer.model import Session


def prepare(session: Session, options: Options,
            cancelled: Callable[[], bool] = lambda: False) -> Analysis:
    """The ``Analysis`` of ``session`` with its lazy parts computed (for a worker thread)."""
    a = Analysis(session, options.estimator, options.policy, options.window or None)
    _ = a.window_source, a.thresholds
    if not cancelled():
        _ = a.timeline
    if session.requests and not cancelled():
        a.breakdown(a.resolve_index("last"))
    return a


def load_job(path: str, options: Options) -> Job:
    def job(progress: Callable[[int, int], None], cancelled: Callable[[], bool]) -> Analysis:
        session = load(path, progress=progress, cancelled=cancelled)
        return prepare(session, options, cancelled)

    return job


class SessionLoader(QObject):
    """Runs load and analysis jobs; emits their results on the GUI thread."""

    load_started = Signal(str)  # path
    progressed = Signal(int)  # per mille of the file read
    loaded = Signal(object)  # Analysis of a newly loaded session
    analysed = Signal(object)  # Analysis of the current session with new options
    failed = Signal(str, str)  # path ("" for an analysis), one-line reason
    cancelled = Signal(str)  # path
    busy_changed = Signal(bool)

    def __init__(self, pool: QThreadPool | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = pool or QThreadPool.globalInstance()
        self._load_gen = 0
        self._analysis_gen = 0
        self._loading = False
        self._analysing = False
        self._load_cancel = threading.Event()
        self._analysis_cancel = threading.Event()
        self._path = ""
        self._load_signals = WorkerSignals()  # no parent: running workers keep it alive
        self._load_signals.progressed.connect(self._on_load_progressed)
        self._load_signals.finished.connect(self._on_load_finished)
        self._load_signals.failed.connect(self._on_load_failed)
        self._load_signals.cancelled.connect(self._on_load_cancelled)
        self._analysis_signals = WorkerSignals()
        self._analysis_signals.finished.connect(self._on_analysis_finished)
        self._analysis_signals.failed.connect(self._on_analysis_failed)

    # -- public API ---------------------------------------------------------------
    def is_busy(self) -> bool:
        return self._loading or self._analysing

    def load(self, path: str, options: Options) -> None:
        self.cancel()
        self._load_gen += 1
        self._analysis_gen += 1  # a new session makes pending analyses stale
        self._analysis_cancel.set()
        self._analysing = False
        self._path = path
        self._load_cancel = threading.Event()
        self._start(Worker(load_job(path, options), self._load_gen, self._load_signals,
                           self._load_cancel))
        self._loading = True
        self.load_started.emit(path)

    def analyse(self, session: Session, options: Options) -> None:
        self._analysis_cancel.set()
        self._analysis_gen += 1
        self._analysis_cancel = threading.Event()

        def job(_progress: Callable[[int, int], None], cancelled: Callable[[], bool]) -> Analysis:
            return prepare(session, options, cancelled)

        self._start(Worker(job, self._analysis_gen, self._analysis_signals,
                           self._analysis_cancel))
        self._analysing = True

    def load_sync(self, path: str, options: Options, format: str | None = None) -> Analysis:
        """Load on the calling thread (the snapshot command); raises ``LoadError``."""
        return prepare(load(path, format=format), options)

    def cancel(self) -> None:
        """Stop the running load (the open session stays)."""
        self._load_cancel.set()

    # -- internals ----------------------------------------------------------------
    def _start(self, worker: Worker) -> None:
        was_busy = self.is_busy()
        start(self._pool, worker)
        if not was_busy:
            self.busy_changed.emit(True)

    def _settle(self) -> None:
        if not self.is_busy():
            self.busy_changed.emit(False)

    def _on_load_progressed(self, gen: int, done: int, total: int) -> None:
        if gen == self._load_gen and total:
            self.progressed.emit(min(1000, done * 1000 // total))

    def _load_ended(self, gen: int) -> bool:
        if gen != self._load_gen:
            return False
        self._loading = False
        return True

    def _on_load_finished(self, gen: int, analysis: object) -> None:
        if self._load_ended(gen):
            self.loaded.emit(analysis)
            self._settle()

    def _on_load_failed(self, gen: int, reason: str) -> None:
        if self._load_ended(gen):
            self.failed.emit(self._path, reason)
            self._settle()

    def _on_load_cancelled(self, gen: int) -> None:
        if self._load_ended(gen):
            self.cancelled.emit(self._path)
            self._settle()

    def _on_analysis_finished(self, gen: int, analysis: object) -> None:
        if gen == self._analysis_gen:
            self._analysing = False
            self.analysed.emit(analysis)
            self._settle()

    def _on_analysis_failed(self, gen: int, reason: str) -> None:
        if gen == self._analysis_gen:
            self._analysing = False
            self.failed.emit("", reason)
            self._settle()
