"""The library's scan on a thread of its own, reporting through Qt signals.

The scan reads files (in worker processes when there is much to read, see
``library.scan``) and writes the index through its own SQLite connection; the
window reads the index through another, and sees each batch once committed.
"""

from __future__ import annotations

import copy
import threading
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from ctxviewer.errors import LibraryError
from ctxviewer.library import Library

JOIN_SECONDS = 10.0  # how long closing the window waits for a cancelled scan


class Scanner(QObject):
    """Runs ``Library.scan`` on a thread; one scan at a time."""

    progressed = Signal(object)  # ScanStats so far (a copy)
    finished = Signal(object)  # ScanStats
    failed = Signal(str)  # one-line reason

    def __init__(self, path: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self.pool: bool | None = None  # None: worker processes when there is much to read
        self.pending: list[str] = []  # folders to add to the library, by the next scan
        self._thread: threading.Thread | None = None
        self._cancel = threading.Event()
        self._running = False  # from start() until its end is delivered here
        self.finished.connect(self._ended)  # connected first: runs before others' slots
        self.failed.connect(self._ended)

    @property
    def busy(self) -> bool:
        """A scan started and its end (``finished`` or ``failed``) has not arrived yet.

        Not the thread's liveness: the thread outlives its last signal by a moment, and a
        listing that arrives in that moment must already see the scan as over."""
        return self._running

    def _ended(self, *_: object) -> None:
        self._running = False

    def start(self, rescan: bool = False, rebuild: str | None = None) -> bool:
        """Start a scan (``rescan``: read every file again; ``rebuild``: why the index is
        damaged, made anew first; the ``pending`` folders are added first); False when
        one runs."""
        if self._running:
            return False
        if self._thread is not None:  # has sent its end; may still be returning
            self._thread.join()
        self._running = True
        self._cancel = threading.Event()
        cancel = self._cancel
        folders, self.pending = self.pending, []
        self._thread = threading.Thread(
            target=self._run,
            args=(cancel, rescan, folders, rebuild),
            name="ctxviewer-library-scan",
            daemon=True,
        )
        self._thread.start()
        return True

    def cancel(self, wait: bool = False) -> None:
        self._cancel.set()
        if wait and self._thread is not None:
            self._thread.join(JOIN_SECONDS)

    def _run(
        self, cancel: threading.Event, rescan: bool, folders: list[str], rebuild: str | None
    ) -> None:
        try:
            with Library(self.path) as lib:
                for folder in folders:
                    lib.add_folder(folder)
                if rebuild:  # a read of the index found it damaged while this held it
                    lib.rebuild(rebuild)
                if rescan:
                    lib.clear()
                stats = lib.scan(
                    progress=lambda s: self._emit("progressed", copy.copy(s)),
                    cancelled=cancel.is_set,
                    pool=self.pool,
                )
        except LibraryError as e:  # the index cannot be used: one line, said as it is
            self._emit("failed", str(e))
            return
        except BaseException as e:  # noqa: BLE001 - shown to the user, never lost in a thread
            self._emit("failed", f"{type(e).__name__}: {e}")  # and busy ends
            if not isinstance(e, Exception):
                raise
            return
        self._emit("finished", stats)

    def _emit(self, name: str, *args: object) -> None:
        try:
            getattr(self, name).emit(*args)
        except RuntimeError:  # the window (and this object) is gone
            pass


__all__ = ["Scanner"]
