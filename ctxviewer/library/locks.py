"""Advisory locks between the processes (and the threads) that use one library.

SQLite serializes the writes itself; these say who may do what else:

- ``use``: every open index holds it shared; rebuilding a damaged index (deleting the
  file and its ``-wal``) takes it exclusive, so no connection anywhere still has the
  old file open (SQLite deletes a WAL by its name when its last connection closes:
  a connection left on a deleted index would delete the new index's WAL);
- ``scan``: one scan at a time (a second waits, then finds the work done);
- ``texts``: one second pass (the full text for search) at a time.

``flock`` locks belong to an open file, not to a process: two ``Lock`` objects of one
process exclude each other as two processes' do. Where there is no ``fcntl``
(Windows) the locks are no-ops: there, an open file cannot be deleted anyway.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

POLL_SECONDS = 0.1


class Lock:
    """An advisory lock on the file ``path`` (created when missing)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd: int | None = None
        self.held = ""  # "", "shared" or "exclusive"

    def _open(self) -> int:
        if self.fd is None:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        return self.fd

    def shared(self) -> None:
        """Take it shared, waiting for an exclusive holder."""
        if fcntl is not None:
            fcntl.flock(self._open(), fcntl.LOCK_SH)
        self.held = "shared"

    def exclusive(
        self, wait: float | None = None, cancelled: Callable[[], bool] | None = None
    ) -> bool:
        """Take it exclusive (a shared hold of this object is given up first); waits at
        most ``wait`` seconds (None: until it is free, or ``cancelled()``). False when it
        was not taken (then nothing is held)."""
        if fcntl is None:
            self.held = "exclusive"
            return True
        fd = self._open()
        if self.held:
            fcntl.flock(fd, fcntl.LOCK_UN)
            self.held = ""
        deadline = None if wait is None else time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self.held = "exclusive"
                return True
            except BlockingIOError:
                pass
            if (deadline is not None and time.monotonic() >= deadline) or (
                cancelled is not None and cancelled()
            ):
                return False
            time.sleep(POLL_SECONDS)

    def try_exclusive(self) -> bool:
        """Take it exclusive only if it is free now."""
        return self.exclusive(wait=0)

    def release(self) -> None:
        if self.fd is not None:
            if fcntl is not None:
                fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None
        self.held = ""
