"""The index's file: opening it, and building it again when it is damaged.

The index is a cache of the session files: a damaged one (cut short, emptied,
overwritten, a bad page, a text that no longer decompresses) is deleted and made
anew, and the next scan reads every file again. What happened is kept in ``notes``
for the caller to say once. The folders the user added are not in it
(``folders``).

Every open index holds ``locks.Lock`` *use* shared; deleting the file takes it
exclusive, so that no connection, in this process or another, is left on the
deleted file (see ``locks``). An index another process holds open cannot be
rebuilt now: ``IndexDamaged`` says so.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import zlib
from pathlib import Path

from ctxviewer.errors import LibraryError
from ctxviewer.library.locks import Lock
from ctxviewer.library.schema import connect

REBUILD_WAIT = 5.0  # seconds to wait for others to close a damaged index
_DAMAGE_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
_CANNOT_WRITE = frozenset(
    {
        sqlite3.SQLITE_READONLY,
        sqlite3.SQLITE_CANTOPEN,
        sqlite3.SQLITE_FULL,
        sqlite3.SQLITE_IOERR,
        sqlite3.SQLITE_PERM,
    }
)


class IndexDamaged(LibraryError):
    """The index is damaged and cannot be rebuilt now (another process has it open)."""


def damage(e: BaseException) -> str | None:
    """Why ``e`` means the index is damaged, in a few words; None when it does not."""
    if isinstance(e, sqlite3.DatabaseError):
        code = getattr(e, "sqlite_errorcode", None)
        if code is not None:
            return str(e) if code & 0xFF in _DAMAGE_CODES else None
        text = str(e)
        return text if "malformed" in text or "not a database" in text else None
    if isinstance(e, zlib.error):
        return f"a text it keeps does not decompress: {e}"
    if isinstance(e, UnicodeDecodeError):
        return f"a text it keeps is not UTF-8: {e}"
    if isinstance(e, ValueError) and type(e).__name__ == "JSONDecodeError":
        return f"a session's row is not JSON: {e}"
    return None


def write_failure(e: BaseException) -> str | None:
    """What ``e`` says when the index cannot be written (a read-only folder, no
    permission, a full disk), else None."""
    if isinstance(e, sqlite3.Error):
        code = getattr(e, "sqlite_errorcode", None)
        return str(e) if code is not None and code & 0xFF in _CANNOT_WRITE else None
    if isinstance(e, OSError):
        return "the disk is full" if e.errno == errno.ENOSPC else e.strerror or str(e)
    return None


def cannot_write(e: BaseException, where: Path) -> str | None:
    """A one-line reason when ``e`` says the index's folder cannot be written, else None."""
    why = write_failure(e)
    if why is None:
        return None
    return (
        f"cannot write the library's index in {where} ({why}); CTXVIEWER_LIBRARY_DIR "
        "puts it elsewhere"
    )


class IndexFile:
    """The database at ``path`` and its *use* lock (``path``.lock)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = Lock(path.with_name(path.name + ".lock"))
        self.notes: list[str] = []  # what happened to the index, for the caller to say

    def open(self) -> sqlite3.Connection:
        """Connect (creating the index, or making a damaged one anew)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.lock.shared()
            return self._open()
        except (OSError, sqlite3.Error) as e:
            why = cannot_write(e, self.path.parent)
            if why is None:
                raise
            self.lock.release()
            raise LibraryError(why) from None

    def _open(self) -> sqlite3.Connection:
        if not self._usable_size():
            self.lock.exclusive()  # made (or emptied) by one process at a time
            try:
                if self.path.exists() and not self._usable_size():
                    self._delete()
                    self.notes.append(
                        "the index was empty (0 bytes): built anew from the session files"
                    )
                return connect(self.path)
            finally:
                self.lock.shared()
        try:
            return connect(self.path)
        except sqlite3.DatabaseError as e:
            why = damage(e)
            if why is None:
                raise
        return self.rebuild(why)

    def _usable_size(self) -> bool:
        try:
            return os.path.getsize(self.path) > 0
        except FileNotFoundError:
            return False

    def rebuild(self, why: str) -> sqlite3.Connection:
        """Delete the damaged index (its connection closed by the caller) and open a new
        one. ``IndexDamaged`` when another connection keeps it open."""
        if not self.lock.exclusive(wait=REBUILD_WAIT):
            self.lock.shared()
            raise IndexDamaged(
                f"the library's index {self.path} is damaged ({why}) and "
                "another ctxviewer has it open: close it, then try again"
            )
        try:
            self._delete()
            self.notes.append(f"the index was damaged ({why}): built anew from the session files")
            return connect(self.path)
        finally:
            self.lock.shared()

    def _delete(self) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.unlink(f"{self.path}{suffix}")
            except FileNotFoundError:
                pass

    def close(self) -> None:
        self.lock.release()
