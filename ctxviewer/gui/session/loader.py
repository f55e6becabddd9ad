"""Loading and analysing sessions on the thread pool.

``load(path, options)`` reads a file and prepares its ``Analysis`` (timeline
and the default breakdown, so that the BPE estimators count off the GUI
thread); ``analyse(session, options)`` re-prepares a loaded session after the
estimator, policy or window changed. Loads and analyses are two ``LatestJob``:
a newer job makes older results stale (a new load, every analysis too);
``cancel()`` stops the running load between records.

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
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QThreadPool, QTimer, Signal

from ctxviewer.gui.app_state import Options
from ctxviewer.gui.widgets.jobs import LatestJob
from ctxviewer.gui.widgets.worker import Job

if TYPE_CHECKING:  # the readers and the analysis: imported by the first load, on its worker
    from ctxviewer.analysis.analysis import Analysis
    from ctxviewer.model import Session

STEP_BYTES = 4 * 1024 * 1024  # read per step of a progressive load (progress, cancel between)
HANDOFF_SECONDS = 5.0  # the longest a loader waits for the window to show a partial
SETTLE_MS = 60  # after a partial view: the window's follow-up paints, before parsing goes on
PROGRESS_SECONDS = 0.1  # the least time between two progress updates (each one repaints)


def prepare(
    session: Session, options: Options, cancelled: Callable[[], bool] = lambda: False
) -> Analysis:
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
    from ctxviewer.ingest import LoadError
    from ctxviewer.ingest.loader import head_session

    try:
        return head_session(path, STEP_BYTES)
    except LoadError:
        return None  # ``load`` reports why


def load_job(
    path: str,
    options: Options,
    partial: Callable[[Analysis], None] | None = None,
    found: Callable[[list[Session]], None] | None = None,
    session: int | None = None,
) -> Job:
    """Load and prepare ``path``; with ``partial``, line logs also give early analyses.

    A file holding several sessions (agents or conversations of one recording)
    is split: part ``session`` is prepared (the library's row says which; by
    default the session that made the last main request), and ``found`` gets
    them all (the window asks which to show when the load did not say)."""
    from ctxviewer.analysis.agents.sessions import default_session, split
    from ctxviewer.ingest import load

    def pick(parts: list[Session]) -> int | None:
        if session is None:
            return default_session(parts)
        return session if 0 <= session < len(parts) else None

    def job(progress: Callable[[int, int], None], cancelled: Callable[[], bool]) -> Analysis:
        if partial is not None:
            glimpse = first_requests(path)
            if glimpse is not None and not cancelled():
                parts = split(glimpse)  # the parts begun so far, in the whole file's order
                chosen = pick(parts)
                if chosen is not None:
                    a = prepare(parts[chosen], options, cancelled)
                    if not cancelled():
                        partial(a)  # the first requests now; the whole file by the fast path
        parts = split(load(path, progress=progress, cancelled=cancelled))
        if found is not None and len(parts) > 1:
            found(parts)
        chosen = pick(parts)
        return prepare(
            parts[chosen if chosen is not None else default_session(parts)], options, cancelled
        )

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
    # the loaded file holds several sessions (list[Session]), emitted after loaded; and
    # whether to ask which one to show (False: the load was told which)
    sessions_found = Signal(object, bool)

    def __init__(self, pool: QThreadPool | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._partial_ack = threading.Event()
        self._path = ""
        self._found: list[list[Session]] = []  # the sessions of the last load, when several
        self._ask = True  # the last load did not say which session to show
        self._progress_at = 0.0  # when progress was last shown
        self._busy = False  # what busy_changed said last
        self._loads = LatestJob(pool, self)
        self._loads.progressed.connect(self._on_load_progressed)
        self._loads.partial.connect(self._on_load_partial)
        self._loads.finished.connect(self._on_load_finished)
        self._loads.failed.connect(self._on_load_failed)
        self._loads.cancelled.connect(self._on_load_cancelled)
        # An analysis whose worker has ended counts as done even before its result
        # arrives: a result lost on the way (its owner going away) must not leave the
        # window busy for good.
        self._analyses = LatestJob(pool, self, done_when_ended=True)
        self._analyses.finished.connect(self._on_analysis_finished)
        self._analyses.failed.connect(self._on_analysis_failed)
        self._analyses.cancelled.connect(self._settle)

    # -- public API ---------------------------------------------------------------
    def is_busy(self) -> bool:
        """A load or an analysis runs."""
        return self._loads.is_busy() or self._analyses.is_busy()

    def load(self, path: str, options: Options, session: int | None = None) -> None:
        """Load ``path``; ``session``: which part of a file of several to show (None: the
        default one, and the window asks)."""
        self._analyses.drop()  # a new session makes pending analyses stale
        self._path = path
        ticket = self._loads.begin()  # the running load is cancelled
        ack = self._partial_ack = threading.Event()

        def hand_over(a: Analysis) -> None:
            """Give the window a partial view, then wait while it shows it: the GUI
            thread paints without fighting the parser for the GIL (a blocking hand-off
            on the worker thread, bounded by the cancel flag and a deadline)."""
            ack.clear()
            ticket.partial(a)
            deadline = time.monotonic() + HANDOFF_SECONDS
            while not ack.wait(0.05) and not ticket.cancelled() and time.monotonic() < deadline:
                pass

        found: list[list[Session]] = []
        self._found = found
        self._ask = session is None
        self._loads.run(ticket, load_job(path, options, hand_over, found.append, session))
        self._settle(started=True)
        self.load_started.emit(path)

    def analyse(self, session: Session, options: Options) -> None:
        def job(_progress: Callable[[int, int], None], cancelled: Callable[[], bool]) -> Analysis:
            return prepare(session, options, cancelled)

        self._analyses.start(job)
        self._settle(started=True)

    def load_sync(
        self, path: str, options: Options, format: str | None = None, session: int | None = None
    ) -> Analysis:
        """Load on the calling thread (the snapshot command); raises ``LoadError``, and
        ``IndexError`` for a ``session`` the file does not hold."""
        from ctxviewer.analysis.agents.sessions import default_session, split
        from ctxviewer.ingest import load

        parts = split(load(path, format=format))
        if session is None:
            session = default_session(parts)
        if not 0 <= session < len(parts):
            raise IndexError(f"the file holds {len(parts)} session(s) (0..{len(parts) - 1})")
        return prepare(parts[session], options)

    def cancel(self) -> None:
        """Stop the running load (the open session stays)."""
        self._loads.cancel()

    # -- internals ----------------------------------------------------------------
    def _settle(self, started: bool = False) -> None:
        """Say when the loader turns busy (``started``: a job was just started) or idle."""
        busy = started or self.is_busy()
        if busy != self._busy:
            self._busy = busy
            self.busy_changed.emit(busy)

    def _on_load_progressed(self, done: int, total: int) -> None:
        now = time.monotonic()
        if total and (now - self._progress_at >= PROGRESS_SECONDS or done >= total):
            self._progress_at = now
            self.progressed.emit(min(1000, done * 1000 // total))

    def _on_load_partial(self, analysis: object) -> None:
        self.partial.emit(analysis)
        # Release the worker once the views have painted the partial. Some repaint
        # again just after (delayed item layouts, scrolling to the selected row):
        # with the parser running those take 3-5x longer (each call from Qt into
        # Python waits for the GIL), so the worker waits for them too.
        QTimer.singleShot(SETTLE_MS, self._partial_ack.set)

    def _on_load_finished(self, analysis: object) -> None:
        self.loaded.emit(analysis)
        self._settle()
        if self._found:
            self.sessions_found.emit(self._found.pop(), self._ask)

    def show_session(self, session: Session, options: Options) -> None:
        """Prepare another session of the file just loaded; it arrives as ``loaded``."""
        self._found = []

        def job(_progress: Callable[[int, int], None], cancelled: Callable[[], bool]) -> Analysis:
            return prepare(session, options, cancelled)

        self._loads.start(job)  # the running load is cancelled
        self._settle(started=True)

    def _on_load_failed(self, reason: str) -> None:
        self.failed.emit(self._path, reason)
        self._settle()

    def _on_load_cancelled(self) -> None:
        self.cancelled.emit(self._path)
        self._settle()

    def _on_analysis_finished(self, analysis: object) -> None:
        self.analysed.emit(analysis)
        self._settle()

    def _on_analysis_failed(self, reason: str) -> None:
        self.failed.emit("", reason)
        self._settle()
