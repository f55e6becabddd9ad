"""The library page's reads of the index, on the thread pool: no SQLite on the GUI
thread (a migration, a busy writer or a slow search would freeze the window).

Two kinds of job, each a ``LatestJob`` (a newer one makes the older stale: its
results are never emitted):

- ``list_sessions()``: every session and the bad files (at start, while a scan commits,
  after it);
- ``search(text)``: the sessions whose messages hold ``text``. The set comes
  first (``found``, fast: ``library.search.matching``), then every session's
  count of matching requests (``counted``, the slower grouping of every match);
- ``hits(entry, text)``: the requests of the picked session that hold the words, with
  the text around them (``hits_found``).

Each job opens its own connection to the index (``Library``), and closes it. A job
that finds the index damaged makes it anew (``Library``) and says so (``noted``); one
that cannot, because a scan holds the index, says why (``damaged``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Signal

from ctxviewer.gui.widgets.jobs import LatestJob
from ctxviewer.library import IndexDamaged, Library

T = TypeVar("T")


@dataclass
class Listing:
    """What the index holds: the sessions (``library --json``'s entries), the bad files."""

    entries: list[dict[str, Any]] = field(default_factory=list)
    bad: list[dict[str, Any]] = field(default_factory=list)
    indexing: dict[str, Any] = field(default_factory=dict)  # ``Library.indexing``


@dataclass
class Found:
    """A search's sessions: id -> matching requests (0 while not counted yet)."""

    text: str
    counts: dict[int, int]
    counted: bool


@dataclass
class Hits:
    """A picked session's requests that hold a search's words (``Library.matches``)."""

    entry: dict[str, Any]  # the session's row
    text: str
    total: int
    matches: list[dict[str, Any]]  # {"request", "snippet"}


class LibraryQueries(QObject):
    """Runs the page's reads of the index at ``path`` on the thread pool."""

    listed = Signal(object)  # Listing
    found = Signal(object)  # Found, not counted yet
    counted = Signal(object)  # Found, counted
    hits_found = Signal(object)  # Hits
    failed = Signal(str)  # one-line reason
    noted = Signal(list)  # what happened to the index (damaged: made anew), once
    damaged = Signal(str)  # the index is damaged and a scan holds it: why

    def __init__(self, path: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self._lists = LatestJob(parent=self)
        self._lists.finished.connect(self.listed)
        self._lists.failed.connect(self.failed)
        self._searches = LatestJob(parent=self)
        self._searches.partial.connect(self.found)
        self._searches.finished.connect(self._on_search_finished)
        self._searches.failed.connect(self.failed)
        self._hits = LatestJob(parent=self)
        self._hits.finished.connect(self.hits_found)
        self._hits.failed.connect(self.failed)
        self.searching = ""  # the text of the newest search ("" none)

    def busy(self) -> bool:
        return self._lists.is_busy() or self._searches.is_busy() or self._hits.is_busy()

    def hits(self, entry: dict[str, Any], text: str) -> None:
        """The requests of ``entry``'s session that hold ``text`` (``hits_found``)."""
        path, sid = self.path, int(entry["id"])

        def job(_progress: Callable[[int, int], None], _cancelled: Callable[[], bool]) -> Hits:
            found = self._read(path, lambda lib: lib.matches(sid, text))
            return Hits(entry, text, found["total"], found["matches"])

        self._hits.start(job)

    def drop_hits(self) -> None:
        self._hits.drop()

    def list_sessions(self) -> None:
        path = self.path

        def job(_progress: Callable[[int, int], None], _cancelled: Callable[[], bool]) -> Listing:
            return self._read(
                path, lambda lib: Listing(lib.sessions(), lib.bad_files(), lib.indexing())
            )

        self._lists.start(job)

    def search(self, text: str) -> None:
        """Look for ``text`` (``""``: no search; the running one is dropped)."""
        self.searching = text
        if not text:
            self._searches.drop()
            return
        path = self.path
        ticket = self._searches.begin()

        def search(lib: Library, cancelled: Callable[[], bool]) -> Found:
            ids = lib.matching(text)
            ticket.partial(Found(text, dict.fromkeys(ids, 0), counted=False))
            if cancelled() or not ids:
                return Found(text, dict.fromkeys(ids, 0), counted=not ids)
            return Found(text, lib.search_counts(text), counted=True)

        def job(_progress: Callable[[int, int], None], cancelled: Callable[[], bool]) -> Found:
            return self._read(path, lambda lib: search(lib, cancelled))

        self._searches.run(ticket, job)

    def _read(self, path: Path, read: Callable[[Library], T]) -> T:
        """``read`` on a connection of its own (on the job's thread); what happened to
        the index said by ``noted``, a damaged index a scan holds by ``damaged``."""
        try:
            with Library(path) as lib:
                out = read(lib)
                notes = lib.notes
        except IndexDamaged as e:
            self._tell(self.damaged, str(e))
            raise
        if notes:
            self._tell(self.noted, notes)
        return out

    def _tell(self, signal: Any, value: object) -> None:
        try:  # from the job's thread: queued to the window's
            signal.emit(value)
        except RuntimeError:  # the window is gone
            pass

    def _on_search_finished(self, found: object) -> None:
        if isinstance(found, Found) and found.counted:
            self.counted.emit(found)

    def stop(self) -> None:
        self._lists.drop()
        self._searches.drop()
        self._hits.drop()
