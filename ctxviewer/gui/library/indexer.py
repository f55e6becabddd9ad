"""The library's second pass on a thread of its own: the text for search of the
sessions a large scan listed first (``Library.index_texts``).

One second pass runs at a time, in any process: when another one runs (the command
started it in the background), this one waits for it, telling its progress from the
index, and then does what it left.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from ctxviewer.errors import LibraryError
from ctxviewer.library import Library

if TYPE_CHECKING:  # the scan's module: imported by the second pass when it runs
    from ctxviewer.library.scan import ScanStats

JOIN_SECONDS = 10.0  # how long closing the window waits for a cancelled pass


class TextIndexer(QObject):
    """Runs ``Library.index_texts`` on a thread; one at a time."""

    progressed = Signal(int, int)  # session files whose text is indexed, of how many
    finished = Signal(object)  # ScanStats (cancelled: stopped, the rest left for later)
    failed = Signal(str)  # one-line reason

    def __init__(self, path: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self.pool: bool | None = None  # None: worker processes when there is much to read
        self._thread: threading.Thread | None = None
        self._cancel = threading.Event()
        self._running = False
        self.finished.connect(self._ended)  # connected first: runs before others' slots
        self.failed.connect(self._ended)

    @property
    def busy(self) -> bool:
        """Started, and its end not delivered yet."""
        return self._running

    def _ended(self, *_: object) -> None:
        self._running = False

    def start(self) -> bool:
        """Start the second pass; False when it runs."""
        if self._running:
            return False
        if self._thread is not None:
            self._thread.join()
        self._running = True
        self._cancel = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(self._cancel,), name="ctxviewer-library-texts", daemon=True
        )
        self._thread.start()
        return True

    def cancel(self, wait: bool = False) -> None:
        self._cancel.set()
        if wait and self._thread is not None:
            self._thread.join(JOIN_SECONDS)

    def _run(self, cancel: threading.Event) -> None:
        try:
            with Library(self.path) as lib:
                now = lib.indexing()
                base, total = now["indexed"], now["pending"] + now["indexed"]
                self._emit("progressed", base, total)

                def told(s: ScanStats) -> None:
                    if s.waiting:  # another process's pass: its progress, from the index
                        self._emit("progressed", s.read, s.to_read)
                    else:
                        self._emit("progressed", min(base + s.read, total), total)

                stats = lib.index_texts(
                    progress=told, cancelled=cancel.is_set, wait=True, pool=self.pool
                )
        except LibraryError as e:
            self._emit("failed", str(e))
            return
        except BaseException as e:  # noqa: BLE001 - shown to the user, never lost in a thread
            self._emit("failed", f"{type(e).__name__}: {e}")
            if not isinstance(e, Exception):
                raise
            return
        if stats is None:
            from ctxviewer.library.scan import ScanStats

            stats = ScanStats(cancelled=True)
        self._emit("finished", stats)

    def _emit(self, name: str, *args: object) -> None:
        try:
            getattr(self, name).emit(*args)
        except RuntimeError:  # the window (and this object) is gone
            pass
