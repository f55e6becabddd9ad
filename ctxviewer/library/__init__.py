"""The session library: an index of every session on this machine.

Every session file the agents keep (``ingest.discover``'s roots) and every file
under the folders the user added is summarized once (``analysis.session_summary``,
the numbers ``report`` prints) into an SQLite database in the user's cache
(``location``), with the text of each request for full-text search (FTS5).
Rescans read only new or changed files, and of a grown file only its new bytes
(``reading``, ``scan``). No Qt: the command line and the window both use it.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ctxviewer.errors import LibraryError
from ctxviewer.library import query
from ctxviewer.library import search as text_search
from ctxviewer.library.folders import Folders
from ctxviewer.library.index_file import IndexDamaged, IndexFile, damage, write_failure
from ctxviewer.library.location import db_path
from ctxviewer.library.locks import Lock

if TYPE_CHECKING:  # the scan (the walk, the readers, worker processes): on first use
    from ctxviewer.library.scan import Progress, ScanStats

__all__ = ["IndexDamaged", "Library", "ScanStats"]

T = TypeVar("T")
WAIT_SECONDS = 1.0  # how often a wait for another process's second pass looks


def __getattr__(name: str) -> Any:
    """``ScanStats``, imported with the scan (a window reading the index needs neither)."""
    if name == "ScanStats":
        from ctxviewer.library.scan import ScanStats

        return ScanStats
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Library:
    """The index at ``path`` (default: ``location.db_path()``). One per thread.

    A damaged index is built again where it is found (``index_file``): the call that
    found it is made again on the new, empty index, and ``notes`` says what happened
    (a scan then reads every file again)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or db_path()
        self._folders = Folders(self.path.parent)
        self._folders.take_from_index(self.path)  # an earlier version's, before upgrading
        self.index = IndexFile(self.path)
        self.db: sqlite3.Connection = self.index.open()

    @property
    def notes(self) -> list[str]:
        """What happened to the index or the folders' list since it was opened."""
        problem = self._folders.problem
        return [*self.index.notes, *([problem] if problem else [])]

    def close(self) -> None:
        self.db.close()
        self.index.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _guarded(self, call: Callable[[], T]) -> T:
        """``call()``; when it finds the index damaged, again on a new index."""
        try:
            return call()
        except Exception as e:
            why = damage(e)
            if why is None:
                failure = write_failure(e)
                if failure is not None:  # a disk gone read-only or full, an I/O error
                    raise LibraryError(
                        f"the library's index {self.path} cannot be used ({failure})"
                    ) from None
                raise
        self.rebuild(why)
        return call()

    def rebuild(self, why: str) -> None:
        """Make the index anew (``IndexDamaged`` when another connection holds it)."""
        if self.db.in_transaction:
            try:
                self.db.execute("ROLLBACK")
            except sqlite3.Error:
                pass
        self.db.close()
        self.db = self.index.rebuild(why)

    # -- folders --------------------------------------------------------------

    def folders(self) -> list[str]:
        return self._folders.paths()

    def add_folder(self, folder: str) -> str:
        """Index ``folder`` too (from the next scan). Raises ``ValueError`` for a path
        that is no folder."""
        path = os.path.abspath(os.path.expanduser(folder))
        if not os.path.isdir(path):
            raise ValueError(f"not a folder: {folder}")
        self._folders.add(path)
        return path

    def remove_folder(self, folder: str) -> bool:
        return self._folders.remove(os.path.abspath(os.path.expanduser(folder)))

    # -- scanning and reading ---------------------------------------------------

    def scan(
        self,
        *,
        workers: int | None = None,
        progress: Progress | None = None,
        cancelled: Callable[[], bool] | None = None,
        keep_days: float | None = None,
        pool: bool | None = None,
        two_pass: bool | None = None,
    ) -> ScanStats:
        """Bring the index up to date (``scan``; a large one writes the rows only, and
        ``index_texts`` does the rest). One scan at a time: another one running (another
        process) is waited for (``progress`` is told, ``ScanStats.waiting``), and this one
        then finds its work done."""
        from ctxviewer.library.scan import ScanStats, scan

        lock = self._lock("scan-lock")
        try:
            if not lock.try_exclusive():
                if progress is not None:
                    progress(ScanStats(waiting=True))
                if not lock.exclusive(cancelled=cancelled):
                    return ScanStats(cancelled=True)
            stats = self._guarded(
                lambda: scan(
                    self.db,
                    self.folders(),
                    workers=workers,
                    progress=progress,
                    cancelled=cancelled,
                    keep_days=keep_days,
                    pool=pool,
                    two_pass=two_pass,
                )
            )
        finally:
            lock.release()
        stats.notes = self.notes
        return stats

    def index_texts(
        self,
        *,
        workers: int | None = None,
        progress: Progress | None = None,
        cancelled: Callable[[], bool] | None = None,
        pool: bool | None = None,
        wait: bool = False,
    ) -> ScanStats | None:
        """The second pass (``scan.index_texts``): the full read of the files a large
        scan wrote the rows of. One at a time: when another one runs (another process),
        None at once, or (``wait``) its progress told every ``WAIT_SECONDS`` until it
        ends, and then whatever it left is done here."""
        from ctxviewer.library.scan import ScanStats, index_texts

        lock = self._lock("texts-lock")
        try:
            while not lock.try_exclusive():
                if not wait or (cancelled is not None and cancelled()):
                    return None
                now = self.indexing()
                if progress is not None:
                    progress(
                        ScanStats(
                            waiting=True,
                            to_read=now["pending"] + now["indexed"],
                            read=now["indexed"],
                        )
                    )
                if not now["pending"]:
                    return ScanStats(notes=self.notes)
                time.sleep(WAIT_SECONDS)
            stats = self._guarded(
                lambda: index_texts(
                    self.db,
                    self.folders(),
                    workers=workers,
                    progress=progress,
                    cancelled=cancelled,
                    pool=pool,
                )
            )
        finally:
            lock.release()
        stats.notes = self.notes
        return stats

    def indexing(self) -> dict[str, Any]:
        """How far the text for search is: ``pending`` session files whose rows only are
        indexed, ``indexed`` ones read in full, and whether a second pass ``running``
        now (here or in another process)."""
        pending, indexed = self._guarded(
            lambda: self.db.execute(
                "SELECT count(*) FILTER (WHERE pending = 1), count(*) FILTER (WHERE pending = 0) "
                "FROM files WHERE parent IS NULL AND error IS NULL"
            ).fetchone()
        )
        running = False
        if pending:
            probe = self._lock("texts-lock")
            running = not probe.try_exclusive()
            probe.release()
        return {"pending": pending, "indexed": indexed, "running": running}

    def _lock(self, name: str) -> Lock:
        return Lock(self.path.with_name(f"{self.path.name}.{name}"))

    def sessions(
        self,
        *,
        agent: str | None = None,
        project: str | None = None,
        sort: str = "start",
        limit: int | None = None,
        search: str | None = None,
        snippets: bool = True,
    ) -> list[dict[str, Any]]:
        """The sessions as ``library --json`` lists them; with ``search``, only those
        whose text holds every word, each with ``match_count`` and (``snippets``) the
        first ``matches``. Requests are counted for the sessions listed only, except
        with ``sort="matches"`` or no ``limit`` (every matching session counted: the
        slower way, see ``search``)."""
        return self._guarded(lambda: self._sessions(agent, project, sort, limit, search, snippets))

    def _sessions(
        self,
        agent: str | None,
        project: str | None,
        sort: str,
        limit: int | None,
        search: str | None,
        snippets: bool,
    ) -> list[dict[str, Any]]:
        if not search:
            return query.sessions(self.db, agent=agent, project=project, sort=sort, limit=limit)
        heads: dict[int, list[int]] = {}
        if sort == "matches" or not limit:  # every matching session counted
            if not limit and snippets:  # every match listed: its heads in the same pass
                counts, heads = text_search.count_with_heads(self.db, search)
            else:
                counts = text_search.count(self.db, search)
            keep = query.ordered(
                self.db, counts, agent=agent, project=project, sort=sort, ranks=counts
            )[: limit or None]
        else:
            order = query.ordered(
                self.db,
                text_search.candidates(self.db, search),
                agent=agent,
                project=project,
                sort=sort,
            )
            keep, counts, heads = text_search.first(self.db, search, order, limit)
        out = query.entries(self.db, keep)
        found = text_search.snippets(self.db, search, keep, heads) if snippets else {}
        for e in out:
            e["match_count"] = counts.get(e["id"], 0)
            e["matches"] = [
                {"request": m.request, "snippet": m.snippet} for m in found.get(e["id"], [])
            ]
        return out

    def matches(self, session_id: int, text: str, limit: int = 200) -> dict[str, Any]:
        """Session ``session_id``'s requests that hold every word of ``text``: ``total``,
        and the first ``limit`` as ``matches`` (``request``: its index in the session,
        ``snippet``: the text around the words)."""
        total, found = self._guarded(
            lambda: text_search.session_matches(self.db, text, session_id, limit)
        )
        return {
            "total": total,
            "matches": [{"request": m.request, "snippet": m.snippet} for m in found],
        }

    def matching(self, text: str) -> set[int]:
        """The ids of the sessions with a request that holds every word of ``text``."""
        return self._guarded(lambda: text_search.matching(self.db, text))

    def search_counts(self, text: str, sessions: Iterable[int] | None = None) -> dict[int, int]:
        """Session id -> how many of its requests hold every word of ``text``, for
        ``sessions`` (default: every session, the slower way)."""
        return self._guarded(lambda: text_search.count(self.db, text, sessions))

    def bad_files(self) -> list[dict[str, Any]]:
        return self._guarded(lambda: query.bad_files(self.db))

    def counts(self) -> dict[str, int]:
        return self._guarded(lambda: query.counts(self.db))

    def clear(self) -> None:
        """Forget every file read (the folders stay): the next scan reads all again."""
        self._guarded(self._clear)

    def _clear(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        for table in ("files", "states", "sessions", "bodies"):
            self.db.execute(f"DELETE FROM {table}")
        self.db.execute("INSERT INTO texts (texts) VALUES ('delete-all')")
        self.db.execute("INSERT INTO chunk_texts (chunk_texts) VALUES ('delete-all')")
        self.db.execute("COMMIT")
