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
from typing import TYPE_CHECKING, Any

from ctxviewer.library import query
from ctxviewer.library import search as text_search
from ctxviewer.library.location import db_path
from ctxviewer.library.schema import connect

if TYPE_CHECKING:  # the scan (the walk, the readers, worker processes): on first use
    from ctxviewer.library.scan import Progress, ScanStats

__all__ = ["Library", "ScanStats"]


def __getattr__(name: str) -> Any:
    """``ScanStats``, imported with the scan (a window reading the index needs neither)."""
    if name == "ScanStats":
        from ctxviewer.library.scan import ScanStats

        return ScanStats
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Library:
    """The index at ``path`` (default: ``location.db_path()``). One per thread."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or db_path()
        self.db: sqlite3.Connection = connect(self.path)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- folders --------------------------------------------------------------

    def folders(self) -> list[str]:
        return [p for (p,) in self.db.execute("SELECT path FROM folders ORDER BY path")]

    def add_folder(self, folder: str) -> str:
        """Index ``folder`` too (from the next scan). Raises ``ValueError`` for a path
        that is no folder."""
        path = os.path.abspath(os.path.expanduser(folder))
        if not os.path.isdir(path):
            raise ValueError(f"not a folder: {folder}")
        self.db.execute("INSERT OR IGNORE INTO folders VALUES (?, ?)",
                        (path, time.strftime("%Y-%m-%dT%H:%M:%S")))
        return path

    def remove_folder(self, folder: str) -> bool:
        path = os.path.abspath(os.path.expanduser(folder))
        return self.db.execute("DELETE FROM folders WHERE path = ?", (path,)).rowcount > 0

    # -- scanning and reading ---------------------------------------------------

    def scan(self, *, workers: int | None = None, progress: Progress | None = None,
             cancelled: Callable[[], bool] | None = None,
             keep_days: float | None = None, pool: bool | None = None) -> ScanStats:
        """Bring the index up to date (``scan``)."""
        from ctxviewer.library.scan import scan

        return scan(self.db, self.folders(), workers=workers, progress=progress,
                    cancelled=cancelled, keep_days=keep_days, pool=pool)

    def sessions(self, *, agent: str | None = None, project: str | None = None,
                 sort: str = "start", limit: int | None = None,
                 search: str | None = None, snippets: bool = True) -> list[dict[str, Any]]:
        """The sessions as ``library --json`` lists them; with ``search``, only those
        whose text holds every word, each with ``match_count`` and (``snippets``) the
        first ``matches``. Requests are counted for the sessions listed only, except
        with ``sort="matches"`` or no ``limit`` (every matching session counted: the
        slower way, see ``search``)."""
        if not search:
            return query.sessions(self.db, agent=agent, project=project, sort=sort,
                                  limit=limit)
        heads: dict[int, list[int]] = {}
        if sort == "matches" or not limit:  # every matching session counted
            if not limit and snippets:  # every match listed: its heads in the same pass
                counts, heads = text_search.count_with_heads(self.db, search)
            else:
                counts = text_search.count(self.db, search)
            keep = query.ordered(self.db, counts, agent=agent, project=project, sort=sort,
                                 ranks=counts)[:limit or None]
        else:
            order = query.ordered(self.db, text_search.candidates(self.db, search),
                                  agent=agent, project=project, sort=sort)
            keep, counts, heads = text_search.first(self.db, search, order, limit)
        out = query.entries(self.db, keep)
        found = text_search.snippets(self.db, search, keep, heads) if snippets else {}
        for e in out:
            e["match_count"] = counts.get(e["id"], 0)
            e["matches"] = [{"request": m.request, "snippet": m.snippet}
                            for m in found.get(e["id"], [])]
        return out

    def matches(self, session_id: int, text: str, limit: int = 200) -> dict[str, Any]:
        """Session ``session_id``'s requests that hold every word of ``text``: ``total``,
        and the first ``limit`` as ``matches`` (``request``: its index in the session,
        ``snippet``: the text around the words)."""
        total, found = text_search.session_matches(self.db, text, session_id, limit)
        return {"total": total, "matches": [{"request": m.request, "snippet": m.snippet}
                                            for m in found]}

    def matching(self, text: str) -> set[int]:
        """The ids of the sessions with a request that holds every word of ``text``."""
        return text_search.matching(self.db, text)

    def search_counts(self, text: str, sessions: Iterable[int] | None = None) -> dict[int, int]:
        """Session id -> how many of its requests hold every word of ``text``, for
        ``sessions`` (default: every session, the slower way)."""
        return text_search.count(self.db, text, sessions)

    def bad_files(self) -> list[dict[str, Any]]:
        return query.bad_files(self.db)

    def counts(self) -> dict[str, int]:
        return query.counts(self.db)

    def clear(self) -> None:
        """Forget every file read (the folders stay): the next scan reads all again."""
        self.db.execute("BEGIN IMMEDIATE")
        for table in ("files", "states", "sessions", "bodies"):
            self.db.execute(f"DELETE FROM {table}")
        self.db.execute("INSERT INTO texts (texts) VALUES ('delete-all')")
        self.db.execute("INSERT INTO chunk_texts (chunk_texts) VALUES ('delete-all')")
        self.db.execute("COMMIT")
