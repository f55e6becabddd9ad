"""Follow a growing session log and keep ``AppState`` up to date (live attach).

A ``Follower`` (``ctxviewer.ingest.follow.follower``) is polled on a ``QTimer``; each
poll runs as a job of a ``LatestJob`` on the thread pool, one at a time, so the GUI never
blocks on a big first read (taken in ``CHUNK_BYTES`` steps, with progress).

One snapshot per step: the follower's own ``Session`` grows in place on worker
threads, so nothing else looks at it. After each poll that brought something,
the job takes ``Follower.snapshot()`` (new lists, the same immutable requests)
and prepares an ``Analysis`` of it there. On the GUI thread the first snapshot
is a new session (``AppState.set_session_analysis``); each later one is the
same session one step further (``AppState.grow_analysis``), the path a
progressive load takes too. No session is changed once shown: a view holding
the previous step's analysis keeps it whole.

Tail mode (``AppState.grow_analysis``): a user on the last request follows the
newest one; anyone else keeps their selection.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QThreadPool, QTimer, Signal

from ctxviewer.gui.app_state import AppState, Options
from ctxviewer.gui.session.loader import prepare
from ctxviewer.gui.widgets.jobs import LatestJob

if TYPE_CHECKING:  # the readers and the analysis: imported when a file is first followed
    from ctxviewer.analysis.analysis import Analysis
    from ctxviewer.ingest.follow.follower import Follower
    from ctxviewer.model import Session

POLL_MS = 250
CHUNK_BYTES = 8 * 1024 * 1024  # bytes read per poll step: progress and cancellation between


@dataclass
class PollResult:
    """What one poll job brings back to the GUI thread."""

    analysis: Analysis | None  # of a snapshot of the followed session; None: nothing to show
    new: list[int] = field(default_factory=list)
    changed: list[int] = field(default_factory=list)
    reloaded: bool = False
    waiting: str | None = None  # why nothing can be shown yet (file empty, format unknown)


def poll_job(follower: Follower, options: Options, first: bool) -> Callable[..., PollResult]:
    def job(progress: Callable[[int, int], None], cancelled: Callable[[], bool]) -> PollResult:
        up = follower.poll(max_bytes=CHUNK_BYTES)
        new, changed, reloaded = set(up.new), set(up.changed), up.reloaded
        while up.more and not cancelled():
            progress(follower.offset, _size(follower.path))
            up = follower.poll(max_bytes=CHUNK_BYTES)
            if up.reloaded:
                new, changed, reloaded = set(), set(), True
            new |= set(up.new)
            changed |= set(up.changed)
        if follower.session is None:
            return PollResult(None, reloaded=reloaded, waiting=follower.error)
        if not (first or new or changed or reloaded):
            return PollResult(None)
        s = follower.snapshot()
        assert s is not None
        return PollResult(prepare(s, options, cancelled), sorted(new), sorted(changed), reloaded)

    return job


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


class LiveFollower(QObject):
    """Follows one file at a time into ``state``; see the module docstring."""

    following_changed = Signal(bool)
    updated = Signal(object)  # PollResult that changed the view
    waiting = Signal(str)  # why the file shows nothing yet
    failed = Signal(str, str)  # path, one-line reason (following stopped)
    progressed = Signal(int)  # per mille of a big first read

    def __init__(
        self,
        state: AppState,
        pool: QThreadPool | None = None,
        parent: QObject | None = None,
        interval_ms: int = POLL_MS,
    ) -> None:
        super().__init__(parent)
        self.state = state
        self._follower: Follower | None = None
        self._shown: Session | None = None  # the snapshot AppState shows for us
        self._polls = LatestJob(pool, self)
        self._polls.finished.connect(self._on_job_finished)
        self._polls.failed.connect(self._on_job_failed)
        self._polls.progressed.connect(self._on_job_progressed)
        self.timer = QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._on_timer_timeout)
        state.session_loaded.connect(self._on_state_session_loaded)

    # -- public API ---------------------------------------------------------------
    @property
    def path(self) -> str | None:
        return self._follower.path if self._follower is not None else None

    def is_following(self) -> bool:
        return self._follower is not None

    def is_busy(self) -> bool:
        return self._polls.is_busy()

    def follow(self, path: str) -> None:
        """Show ``path`` and keep showing what is appended to it."""
        from ctxviewer.ingest.follow.follower import Follower

        self._drop()
        self._follower = Follower(os.path.abspath(path))
        self._shown = None
        self.timer.start()
        self._poll()
        self.following_changed.emit(True)

    def stop(self) -> None:
        if self._follower is None:
            return
        self._drop()
        self.following_changed.emit(False)

    def poll_now(self) -> None:
        """Poll at once (when no poll is running) instead of waiting for the timer."""
        if self._follower is not None and not self.is_busy():
            self._poll()

    # -- internals ----------------------------------------------------------------
    def _drop(self) -> None:
        self.timer.stop()
        self._polls.drop()
        self._follower = None
        self._shown = None

    def _poll(self, refresh: bool = False) -> None:
        """Start a poll job; ``refresh`` re-analyses even when the file did not change."""
        assert self._follower is not None
        job = poll_job(self._follower, self.state.options, first=refresh or self._shown is None)
        self._polls.start(job)

    def _on_timer_timeout(self) -> None:
        self.poll_now()

    def _on_job_progressed(self, done: int, total: int) -> None:
        if total:
            self.progressed.emit(min(1000, done * 1000 // total))

    def _on_job_failed(self, reason: str) -> None:
        path = self.path or ""
        self.stop()
        self.failed.emit(path, reason)

    def _on_job_finished(self, result: object) -> None:
        assert isinstance(result, PollResult)
        if result.analysis is None:
            if result.waiting:
                self.waiting.emit(result.waiting)
            return
        if self._shown is None or result.reloaded:
            self._show_new(result.analysis)
        else:
            self._show_grown(result.analysis)
        self.updated.emit(result)

    def _show_new(self, a: Analysis) -> None:
        """First poll or reload: a new session object for the views."""
        old = self.state.analysis
        keep = None
        if (
            old is not None
            and not self.state.in_tail()
            and self.state.index is not None
            and old.session.path == a.session.path
            and self._shown is None
        ):
            keep = self.state.index  # the same file was open: keep the user's place
        self._shown = a.session
        self.state.set_session_analysis(a)
        if keep is not None and keep < len(a.session.requests):
            self.state.select_request(keep)

    def _show_grown(self, a: Analysis) -> None:
        """The next step: a new snapshot of the same session (see the module docstring)."""
        self._shown = a.session
        self.state.grow_analysis(a)

    def _on_state_session_loaded(self, a: Analysis) -> None:
        if self._follower is not None and self._shown is not None and a.session is not self._shown:
            self.stop()  # another file was opened
