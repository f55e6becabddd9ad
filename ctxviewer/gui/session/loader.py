"""Loading and analysing sessions on the thread pool.

``load(path, options)`` reads a file and prepares its ``Analysis`` (timeline
and the default breakdown, so that the BPE estimators count off the GUI
thread); ``analyse(session, options)`` re-prepares a loaded session after the
estimator, policy or window changed. Generation counters drop the results of
jobs that a newer one made stale; ``cancel()`` stops the running load
between records.

First view at once: for a line log longer than ``STEP_BYTES`` (not a JSON
document; compressed or not), the job first reads one step (``head_session``)
and emits the ``Analysis`` of those first requests as ``partial``
(the window shows it while the rest loads), then reads the whole file with
the one-shot ``load``; ``loaded`` brings the same session ``load(path)`` reads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from PySide6.QtCore import QObject, QThreadPool, QTimer, Signal

from ctxviewer.analysis.agents.sessions import default_session, split
from ctxviewer.analysis.report import Analysis
from ctxviewer.gui.app_state import Options
from ctxviewer.gui.widgets.worker import Job, Worker, WorkerSignals, start
from ctxviewer.ingest import LoadError, load
from ctxviewer.ingest.loader import head_session
from ctxviewer.model import Session

STEP_BYTES = 4 * 1024 * 1024  # read per step of a progressive load (progress, cancel between)
HANDOFF_SECONDS = 5.0  # the longest a loader waits for the window to show a partial
SETTLE_MS = 60  # after a partial view: the window's follow-up paints, before parsing goes on
PROGRESS_SECONDS = 0.1  # the least time between two progress updates (each one repaints)


def snapshot(s: Session) -> Session:
    """A copy of ``s`` whose lists the follower will not touch (requests are immutable)."""
    return Session(path=s.path, format=s.format, requests=list(s.requests),
                   skipped=list(s.skipped), events=list(s.events), title=s.title,
                   session_id=s.session_id, token_counts=list(s.token_counts), cwd=s.cwd)


def prepare(session: Session, options: Options,
            cancelled: Callable[[], bool] = lambda: False) -> Analysis:
    """The ``Analysis`` of ``session`` with its lazy parts computed (for a worker thread)."""
    a = options.analysis(session)
    _ = a.identity, a.window_source, a.thresholds
    if not cancelled():
        _ = a.timeline, a.compactions, a.attribution  # the views read them: not on the GUI thread
    if session.requests and not cancelled():
        a.breakdown(a.resolve_index("last"))
    return a


def first_requests(path: str) -> Session | None:
    """The session of the first ``STEP_BYTES`` of a line log (compressed ones too,
    counted decompressed), when the log is longer; None otherwise.

    A first view painted at once while ``load`` reads the whole file: reading it
    in steps and repainting growing views costs big files several times the
    one-shot load (measured with bench/gui_first_paint.py), a glimpse does not.
    """
    try:
        return head_session(path, STEP_BYTES)
    except LoadError:
        return None  # ``load`` reports why


def load_job(path: str, options: Options,
             partial: Callable[[Analysis], None] | None = None,
             found: Callable[[list[Session]], None] | None = None) -> Job:
    """Load and prepare ``path``; with ``partial``, line logs also give early analyses.

    A file holding several sessions (agents or conversations of one recording)
    is split: the session that made the last main request is prepared, and
    ``found`` gets them all (the window asks which to show)."""
    def job(progress: Callable[[int, int], None], cancelled: Callable[[], bool]) -> Analysis:
        if partial is not None:
            glimpse = first_requests(path)
            if glimpse is not None and not cancelled():
                parts = split(glimpse)
                a = prepare(parts[default_session(parts)], options, cancelled)
                if not cancelled():
                    partial(a)  # the first requests now; the whole file by the fast path
        parts = split(load(path, progress=progress, cancelled=cancelled))
        if found is not None and len(parts) > 1:
            found(parts)
        return prepare(parts[default_session(parts)], options, cancelled)

    return job


class SessionLoader(QObject):
    """Runs load and analysis jobs; emits their results on the GUI thread."""

    load_started = Signal(str)  # path
    progressed = Signal(int)  # per mille of the file read
    partial = Signal(object)  # Analysis of the part of the loading session read so far
    loaded = Signal(object)  # Analysis of a newly loaded session
    analysed = Signal(object)  # Analysis of the current session with new options
    failed = Signal(str, str)  # path ("" for an analysis), one-line reason
    cancelled = Signal(str)  # path
    busy_changed = Signal(bool)
    sessions_found = Signal(object)  # list[Session]: the loaded file holds several (after loaded)

    def __init__(self, pool: QThreadPool | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = pool or QThreadPool.globalInstance()
        self._load_gen = 0
        self._analysis_gen = 0
        self._loading = False
        self._analysing = False
        self._load_cancel = threading.Event()
        self._partial_ack = threading.Event()
        self._analysis_cancel = threading.Event()
        self._path = ""
        self._found: list[list[Session]] = []  # the sessions of the last load, when several
        self._progress_at = 0.0  # when progress was last shown
        self._load_signals = WorkerSignals()  # no parent: running workers keep it alive
        self._load_signals.progressed.connect(self._on_load_progressed)
        self._load_signals.partial.connect(self._on_load_partial)
        self._load_signals.finished.connect(self._on_load_finished)
        self._load_signals.failed.connect(self._on_load_failed)
        self._load_signals.cancelled.connect(self._on_load_cancelled)
        self._analysis_signals = WorkerSignals()
        self._analysis_signals.finished.connect(self._on_analysis_finished)
        self._analysis_signals.failed.connect(self._on_analysis_failed)
        self._analysis_signals.cancelled.connect(self._on_analysis_cancelled)
        self._analysis_worker: Worker | None = None

    # -- public API ---------------------------------------------------------------
    def is_busy(self) -> bool:
        """A load or an analysis runs. An analysis whose worker has ended counts as done
        even before its result arrives: a result lost on the way (its owner going away)
        must not leave the window busy for good."""
        ended = self._analysis_worker is not None and self._analysis_worker.done.is_set()
        return self._loading or (self._analysing and not ended)

    def load(self, path: str, options: Options) -> None:
        self.cancel()
        self._load_gen += 1
        self._analysis_gen += 1  # a new session makes pending analyses stale
        self._analysis_cancel.set()
        self._analysing = False
        self._path = path
        self._load_cancel = threading.Event()
        gen, signals = self._load_gen, self._load_signals
        ack, cancel = threading.Event(), self._load_cancel
        self._partial_ack = ack

        def hand_over(a: Analysis) -> None:
            """Give the window a partial view, then wait while it shows it: the GUI
            thread paints without fighting the parser for the GIL (a blocking hand-off
            on the worker thread, bounded by the cancel flag and a deadline)."""
            ack.clear()
            signals.partial.emit(gen, a)
            deadline = time.monotonic() + HANDOFF_SECONDS
            while not ack.wait(0.05) and not cancel.is_set() and time.monotonic() < deadline:
                pass

        found: list[list[Session]] = []
        self._found = found
        job = load_job(path, options, hand_over, found.append)
        self._start(Worker(job, gen, signals, self._load_cancel))
        self._loading = True
        self.load_started.emit(path)

    def analyse(self, session: Session, options: Options) -> None:
        self._analysis_cancel.set()
        self._analysis_gen += 1
        self._analysis_cancel = threading.Event()

        def job(_progress: Callable[[int, int], None], cancelled: Callable[[], bool]) -> Analysis:
            return prepare(session, options, cancelled)

        worker = Worker(job, self._analysis_gen, self._analysis_signals, self._analysis_cancel)
        was_busy = self.is_busy()
        self._analysis_worker = worker
        self._analysing = True  # before the worker starts: it may end at once
        self._start(worker, was_busy)

    def load_sync(self, path: str, options: Options, format: str | None = None,
                  session: int | None = None) -> Analysis:
        """Load on the calling thread (the snapshot command); raises ``LoadError``, and
        ``IndexError`` for a ``session`` the file does not hold."""
        parts = split(load(path, format=format))
        if session is None:
            session = default_session(parts)
        if not 0 <= session < len(parts):
            raise IndexError(f"the file holds {len(parts)} session(s) (0..{len(parts) - 1})")
        return prepare(parts[session], options)

    def cancel(self) -> None:
        """Stop the running load (the open session stays)."""
        self._load_cancel.set()

    # -- internals ----------------------------------------------------------------
    def _start(self, worker: Worker, was_busy: bool | None = None) -> None:
        was_busy = self.is_busy() if was_busy is None else was_busy
        start(self._pool, worker)
        if not was_busy:
            self.busy_changed.emit(True)

    def _settle(self) -> None:
        if not self.is_busy():
            self.busy_changed.emit(False)

    def _on_load_progressed(self, gen: int, done: int, total: int) -> None:
        now = time.monotonic()
        if gen == self._load_gen and total and (now - self._progress_at >= PROGRESS_SECONDS
                                                or done >= total):
            self._progress_at = now
            self.progressed.emit(min(1000, done * 1000 // total))

    def _on_load_partial(self, gen: int, analysis: object) -> None:
        if gen == self._load_gen and self._loading:
            self.partial.emit(analysis)
        # Release the worker once the views have painted the partial. Some repaint
        # again just after (delayed item layouts, scrolling to the selected row):
        # with the parser running those take 3-5x longer (each call from Qt into
        # Python waits for the GIL), so the worker waits for them too.
        QTimer.singleShot(SETTLE_MS, self._partial_ack.set)

    def _load_ended(self, gen: int) -> bool:
        if gen != self._load_gen:
            return False
        self._loading = False
        return True

    def _on_load_finished(self, gen: int, analysis: object) -> None:
        if self._load_ended(gen):
            self.loaded.emit(analysis)
            self._settle()
            if self._found:
                self.sessions_found.emit(self._found.pop())

    def show_session(self, session: Session, options: Options) -> None:
        """Prepare another session of the file just loaded; it arrives as ``loaded``."""
        self.cancel()
        self._load_gen += 1
        self._load_cancel = threading.Event()
        self._found = []

        def job(_progress: Callable[[int, int], None], cancelled: Callable[[], bool]) -> Analysis:
            return prepare(session, options, cancelled)

        self._start(Worker(job, self._load_gen, self._load_signals, self._load_cancel))
        self._loading = True

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

    def _on_analysis_cancelled(self, gen: int) -> None:
        if gen == self._analysis_gen:
            self._analysing = False
            self._settle()

    def _on_analysis_failed(self, gen: int, reason: str) -> None:
        if gen == self._analysis_gen:
            self._analysing = False
            self.failed.emit("", reason)
            self._settle()
