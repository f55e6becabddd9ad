"""The library in the main window: a page in front of the session views.

``install(window)`` puts the window's central widget and the library page in a
stack, adds File > Library… (Ctrl+Shift+L) and shows the session views again as
soon as a file starts loading (from the library, File > Open, a drop…).
``show_library`` brings the page to the front and starts a scan on a thread; the
table fills as the scan commits. Opened at start with no file, an empty library
(a fresh machine) opens the bundled demo session instead. The page reads the index
on the thread pool (``queries``), never on the GUI thread.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QStackedWidget, QWidget

from ctxviewer.gui.library.indexer import TextIndexer
from ctxviewer.gui.library.queries import Found, Hits, LibraryQueries, Listing
from ctxviewer.gui.library.row_menu import RowMenu
from ctxviewer.gui.library.scanner import Scanner
from ctxviewer.gui.library.view import LibraryView
from ctxviewer.gui.widgets.menus import find_menu
from ctxviewer.jsonish import printable
from ctxviewer.library.location import db_path
from ctxviewer.resources import demo_session_path

if TYPE_CHECKING:
    from ctxviewer.analysis.analysis import Analysis
    from ctxviewer.gui.host import PanelHost
    from ctxviewer.gui.session.main_window import MainWindow
    from ctxviewer.library.scan import ScanStats

REFRESH_SECONDS = 1.5  # during a scan, the table shows what was committed this often
SESSIONS, LIBRARY = 0, 1  # the stack's pages


class LibraryPanel(QObject):
    """The library page: a stack holds it and the session's views, one shown at a time.
    It takes the window's centre, so it needs the window itself, not only its host."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.path = db_path()
        self.opened = False  # shown once: where the index is was decided then
        self.view = LibraryView()
        self.stack = QStackedWidget(window)
        self.stack.setObjectName("library_stack")
        central = window.takeCentralWidget()
        if central is None:
            raise RuntimeError("the window has no centre for the library to stand beside")
        self.stack.addWidget(central)
        self.stack.addWidget(self.view)
        window.setCentralWidget(self.stack)
        self.scanner = Scanner(self.path, self)
        self.indexer = TextIndexer(self.path, self)  # the second pass: the text for search
        self._texts: tuple[int, int] | None = None  # its progress while it runs
        self.queries = LibraryQueries(self.path, self)
        self.row_menu = RowMenu(
            self.view.tree, self.open_entry, lambda title, why: self.window.show_error(title, why)
        )
        self.demo_if_empty: str | None = None
        self._last_refresh = 0.0
        self._note = ""  # what the summary says after the count (the last scan's outcome)
        self._bad: list[dict[str, Any]] = []
        self._scanned = False  # a scan ended: its listing decides the demo or "none found"
        self._hid: list[QWidget] = []  # the bars the library page hid
        self._from_library = False  # the file loading was opened from the library
        self._land_here = False  # the next file opened lands on the library if it fails
        self._goto: tuple[str, int] | None = None  # (file, request) to show once loaded
        self._hits_for: tuple[int, str] | None = None  # (session, search) of the hits asked
        self._found = ""  # the search whose sessions the table shows (its matches)
        self._last_found: Found | None = None  # its sessions, as last told
        self._index_notes: list[str] = []  # what happened to the index (made anew…),
        # said until the next scan the user starts
        self._rebuild: str | None = None  # a damaged index to make anew once the scan ends
        self.ask_folder = self._ask_folder  # replaceable (tests answer it)
        self.action = QAction("&Library…", window)
        self.action.setShortcut(QKeySequence("Ctrl+Shift+L"))
        self.action.setToolTip("Every session on this machine")
        self.action.triggered.connect(lambda: self.show_library())
        window.addAction(self.action)
        menu = find_menu(window, "File")
        if menu is not None:
            menu.insertAction(window.actions_.reopen_last, self.action)
        self._connect()

    def _connect(self) -> None:
        v, w = self.view, self.window
        v.open_requested.connect(self.open_entry)
        v.open_file_requested.connect(w.actions_.open.trigger)
        v.demo_requested.connect(self.open_demo)
        v.rescan_requested.connect(lambda: self.scan(rescan=False))
        v.add_folder_requested.connect(self.add_folder)
        v.search_changed.connect(self.search)
        w.actions_.find.triggered.connect(self._on_find)  # after the window's own slot
        v.picked.connect(lambda _entry: self._pick_hits())
        v.hits.open_requested.connect(self.open_at)
        w.loader.loaded.connect(self._on_loaded)  # after the window's own slot: it shows
        w.loader.load_started.connect(self._on_load_started)
        w.loader.failed.connect(self._on_load_ended_early)
        w.loader.cancelled.connect(self._on_load_ended_early)
        w.closing.connect(self._on_window_closing)
        w.session_views_wanted.connect(self.show_sessions)  # live follow, the proxy
        w.notice.library_requested.connect(self.action.trigger)  # the demo's notice
        self.scanner.progressed.connect(self._on_scan_progressed)
        self.scanner.finished.connect(self._on_scan_finished)
        self.scanner.failed.connect(self._on_scan_failed)
        self.indexer.progressed.connect(self._on_texts_progressed)
        self.indexer.finished.connect(self._on_texts_finished)
        self.indexer.failed.connect(self._on_texts_failed)
        self.queries.listed.connect(self._on_listed)
        self.queries.found.connect(self._on_found)
        self.queries.counted.connect(self._on_counted)
        self.queries.hits_found.connect(self._on_hits)
        self.queries.failed.connect(self._on_query_failed)
        self.queries.noted.connect(self._on_index_noted)
        self.queries.damaged.connect(self._on_index_damaged)

    # -- pages --------------------------------------------------------------------------
    @property
    def showing(self) -> bool:
        return self.stack.currentIndex() == LIBRARY

    def show_library(self, scan: bool = True, demo_if_empty: str | None = None) -> None:
        """Bring the library to the front and bring it up to date (``scan``).

        ``demo_if_empty``: a file to open when the scan finds no session at all."""
        if not self.opened:  # where the index is, decided now (the environment may say)
            self.opened = True
            self.path = self.scanner.path = self.queries.path = self.indexer.path = db_path()
        self.demo_if_empty = demo_if_empty
        self.stack.setCurrentIndex(LIBRARY)
        self._toolbars(False)
        self.window.setWindowTitle("Library — ctxviewer")
        self.refresh()
        self.view.search.setFocus()  # typing searches; Down goes to the table
        if scan:
            self.scan()

    def show_sessions(self) -> None:
        if self.showing:
            self.stack.setCurrentIndex(SESSIONS)
            self._toolbars(True)
            s = self.window.state.session
            name = os.path.basename(s.path) if s is not None and s.path else ""
            self.window.setWindowTitle(f"{name} — ctxviewer" if name else "ctxviewer")

    def _toolbars(self, on: bool) -> None:
        """The analysis controls (estimator, policy, window…) and what the status bar says
        of the session mean nothing on the library: hidden there, shown again as they were.
        The status bar itself stays: its messages and the proxy's indicator are the
        results of actions taken from the library too."""
        self.window.status.show_session_parts(on)
        if not on:
            bars = [self.window.controls]
            self._hid += [b for b in bars if not b.isHidden() and b not in self._hid]
        for bar in self._hid:
            bar.setHidden(not on)
        if on:
            self._hid = []

    def _on_load_started(self, _path: str) -> None:
        self.demo_if_empty = None  # a file is on its way: no demo in its place
        self._from_library = self.showing or self._land_here
        self._land_here = False
        self.show_sessions()

    def _on_load_ended_early(self, *_: object) -> None:
        """A file opened from the library (or at start) could not be read: to the library
        (the error says why), unless a session shows."""
        came, self._from_library = self._from_library, False
        self._goto = None
        s = self.window.state.session
        if came and (s is None or not s.requests):
            self.show_library(scan=not self.opened)

    def open_or_land(self, path: str) -> None:
        """Open ``path`` (the file given at start, or the last one); when it cannot be
        read, the window lands on the library instead of an empty session."""
        self._land_here = True
        self.window.open_file(path)

    # -- opening ------------------------------------------------------------------------
    def open_entry(self, entry: dict[str, Any]) -> None:
        """Open a row's session: of a file that holds several, the part the row shows."""
        entry = self.view.proxy.entries.get(entry.get("id", -1), entry)  # not through Qt:
        path = entry.get("path")  # a name that is no UTF-8 keeps its bytes
        if path and os.path.exists(path):
            self.window.open_file(path, entry.get("part") if entry.get("parts", 1) > 1 else None)
        else:
            self.window.show_error(
                "Cannot open file",
                f"{path} is not there any more; Rescan takes it out of the library",
            )

    def _on_find(self) -> None:
        """Ctrl+F on the library page goes to its search box (not the hidden session's)."""
        if self.showing:
            self.view.search.setFocus()
            self.view.search.selectAll()

    def open_at(self, entry: dict[str, Any], request: int) -> None:
        """Open a row's session and show ``request`` (a search's match) once it is read."""
        self._goto = (str(entry.get("path")), request)
        self.open_entry(entry)

    def _on_loaded(self, a: Analysis) -> None:
        goto, self._goto = self._goto, None
        requests = a.session.requests
        if goto is not None and a.session.path == goto[0] and requests:
            self.window.state.select_request(min(goto[1], len(requests) - 1))

    def open_demo(self) -> None:
        demo = demo_session_path()
        if demo.is_file():
            self.window.open_file(str(demo))

    def add_folder(self) -> None:
        """Ask for a folder; the scan adds it to the library (on its thread) and reads it."""
        folder = self.ask_folder()
        if not folder:
            return
        if not os.path.isdir(folder):
            self.window.show_error("Cannot add the folder", f"not a folder: {folder}")
            return
        self.scanner.pending.append(folder)
        self.scan()  # a scan running now: the next one, when it ends

    def _ask_folder(self) -> str:
        from PySide6.QtWidgets import QFileDialog

        from ctxviewer.gui.widgets.file_dialog import FileDialog

        dialog = FileDialog(
            self.window,
            "Add a folder of sessions (the proxy's recordings…)",
            os.path.expanduser("~"),
            "",
            save=False,
        )
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        return dialog.chosen()

    # -- scanning -------------------------------------------------------------------------
    def scan(
        self, rescan: bool = False, rebuild: str | None = None, keep_note: bool = False
    ) -> None:
        """Bring the index up to date (``rebuild``: a damaged index made anew first;
        ``keep_note``: what happened to the index is still said meanwhile)."""
        if self.scanner.start(rescan, rebuild):
            if not (keep_note or rebuild):
                self._index_notes = []
            self._scanned = False  # this scan's end decides, not an earlier one's
            self.view.rescan.setEnabled(False)
            self.view.set_progress(None, None)
            if not self.view.entries:
                self.view.set_empty_text("Looking for sessions…")

    def _on_scan_progressed(self, stats: ScanStats) -> None:
        if stats.waiting:
            self.view.set_progress(0, 0, "waiting for another ctxviewer's scan…")
        self.view.set_progress(stats.read, stats.to_read) if stats.to_read else None
        if not self.view.entries and stats.to_read:
            self.view.set_empty_text(f"Indexing {stats.to_read:,} sessions for the first time…")
        if time.monotonic() - self._last_refresh >= REFRESH_SECONDS and stats.read:
            self.refresh()

    def _on_scan_finished(self, stats: ScanStats) -> None:
        self.view.rescan.setEnabled(True)
        self.view.set_progress(None, None)
        self._note_index(stats.notes)
        if self.scanner.pending or self._rebuild:  # a folder added, a damage found meanwhile
            rebuild, self._rebuild = self._rebuild, None
            self.scan(rebuild=rebuild, keep_note=True)
            return
        self.refresh(note=_scan_note(stats))
        self._scanned = True

    def _on_scan_failed(self, reason: str) -> None:
        self.view.rescan.setEnabled(True)
        self.view.set_progress(None, None)
        if self._rebuild:
            rebuild, self._rebuild = self._rebuild, None
            self.scan(rebuild=rebuild, keep_note=True)
            return
        self.view.set_summary(len(self.view.entries), [], f"the scan failed: {reason}")
        if not self.view.entries:
            self.view.set_empty_text(f"The library cannot be used: {reason}")
            self._open_demo_if_empty()

    def _on_index_noted(self, notes: list[str]) -> None:
        """A read found the index damaged and made it anew: say so, and fill it again."""
        self._note_index(notes)
        self._hits_for = None  # asked of the old index: asked again
        self._summarize()
        if not self.scanner.busy:
            self.scan(keep_note=True)

    def _note_index(self, notes: list[str]) -> None:
        """What happened to the index, each said once (a read and the scan may both say)."""
        self._index_notes += [n for n in notes if n not in self._index_notes]

    def _on_index_damaged(self, reason: str) -> None:
        """A read found the index damaged while the scan held it: made anew after it."""
        self._note_index([reason])
        self._summarize()
        if self.scanner.busy:
            self._rebuild = reason
            self.scanner.cancel()
        else:
            self.scan(rebuild=reason)

    def _open_demo_if_empty(self) -> bool:
        """The library found nothing: open the demo when asked to (a start without a file)."""
        if not (self.demo_if_empty and self.showing):
            return False
        demo, self.demo_if_empty = self.demo_if_empty, None
        self.window.open_file(demo)
        return True

    # -- reading the index (on the thread pool) -------------------------------------------
    @property
    def querying(self) -> bool:
        """A read of the index runs, or its result is on its way."""
        return self.queries.busy()

    def refresh(self, note: str = "") -> None:
        """Show what the index holds now (it arrives as ``_on_listed``)."""
        if not self.opened:
            return
        self._last_refresh = time.monotonic()
        self._note = note
        self.queries.list_sessions()

    def _on_listed(self, listing: Listing) -> None:
        self._bad = listing.bad
        self.view.set_entries(listing.entries)
        self._summarize()
        if (
            listing.indexing.get("pending") and not self.scanner.busy and self.indexer.start()
        ):  # the text of what a large scan listed first
            self._texts = (
                listing.indexing["indexed"],
                listing.indexing["indexed"] + listing.indexing["pending"],
            )
            self._show_texts()
        if self.queries.searching:  # new sessions may match too
            self.queries.search(self.queries.searching)
        if self._scanned:  # the scan's thread may not have exited yet: its end was handled
            self._scanned = False
            if not self.view.entries:
                if self._open_demo_if_empty():
                    return
                self.view.set_empty_text(_nothing_found())
            self.demo_if_empty = None

    def search(self, text: str) -> None:
        """Look for ``text`` in the sessions' messages (``""``: show every session)."""
        if not self.opened:
            return
        self.queries.search(text)
        self.view.show_hits(bool(text))
        self._pick_hits()
        if not text:
            self.view.set_matches(None)
            self.view.set_empty_text("")
            self._summarize()
        else:
            self.view.set_summary(len(self.view.entries), self._bad, f"searching: {text}…")

    def _on_found(self, found: Found) -> None:
        self._found = found.text
        self._last_found = found
        self.view.set_matches(found.counts)
        self.view.set_empty_text(self._no_match(found.text))
        self._summarize(found)
        self._pick_hits()

    def _no_match(self, text: str) -> str:
        if self._texts is None:
            return f"No session's messages hold: {text}"
        done, total = self._texts
        return (
            f"No session indexed so far holds: {text}\n(still indexing the text: "
            f"{done:,} of {total:,} session files)"
        )

    def _pick_hits(self) -> None:
        """The picked session's matching requests, under the table (while searching)."""
        text, entry = self.queries.searching, self.view.current_entry()
        if (
            text
            and text == self._found
            and entry is not None
            and entry["id"] in (self.view.matches or {})
        ):  # not the last search's sessions
            if self._hits_for != (entry["id"], text):
                self._hits_for = (entry["id"], text)
                self.view.hits.waiting(entry, text)
                self.queries.hits(entry, text)
            return
        self._hits_for = None
        self.queries.drop_hits()
        if text:
            self.view.hits.prompt(text)

    def _on_hits(self, hits: Hits) -> None:
        entry = self.view.current_entry()
        if (
            hits.text == self.queries.searching
            and entry is not None
            and entry["id"] == hits.entry["id"]
        ):
            self.view.hits.show_hits(hits)

    def _on_counted(self, found: Found) -> None:
        self._last_found = found
        if self.view.matches is not None and set(self.view.matches) == set(found.counts):
            self.view.set_counts(found.counts)
        else:  # a scan committed meanwhile: other sessions
            self.view.set_matches(found.counts)
        self._summarize(found)

    def _summarize(self, found: Found | None = None) -> None:
        note = self._note
        if found is not None:
            so_far = " so far" if self._texts is not None else ""
            note = f"{len(found.counts):,} match{so_far}: {found.text}"
            if found.counted:
                note += f" ({sum(found.counts.values()):,} requests)"
            if self._texts is not None:
                done, total = self._texts
                note += f"; still indexing the text ({done:,} of {total:,} session files)"
        note = "; ".join(n for n in (*self._index_notes, note) if n)
        self.view.set_summary(len(self.view.entries), self._bad, note)

    # -- the second pass: the text for search -------------------------------------------
    def _on_texts_progressed(self, done: int, total: int) -> None:
        self._texts = (done, total)
        self._show_texts()

    def _show_texts(self) -> None:
        """The search box (and a search's summary) say how far the text is indexed."""
        done, total = self._texts or (0, 0)
        self.view.set_indexing(done, total if self._texts is not None else None)
        if not self.scanner.busy:  # the scan's own progress first
            self.view.set_progress(done, total, f"indexing text {done:,}/{total:,}…")
        if self.queries.searching and self._found == self.queries.searching:
            self._summarize(self._last_found)
            self.view.set_empty_text(self._no_match(self._found))

    def _on_texts_finished(self, stats: ScanStats) -> None:
        self._texts = None
        self.view.set_indexing(0, None)
        if not self.scanner.busy:
            self.view.set_progress(None, None)
        if stats.cancelled:
            return
        self.refresh(note=self._note)  # the rows' details came with the text
        if self.queries.searching:  # complete now
            self.queries.search(self.queries.searching)

    def _on_texts_failed(self, reason: str) -> None:
        self._texts = None
        self.view.set_indexing(0, None)
        if not self.scanner.busy:
            self.view.set_progress(None, None)
        self._note_index([f"the text for search could not be indexed: {reason}"])
        self._summarize()

    def _on_query_failed(self, reason: str) -> None:
        self.view.set_summary(
            len(self.view.entries), self._bad, f"cannot read the library: {reason}"
        )

    def _on_window_closing(self) -> None:
        self.queries.stop()
        self.scanner.cancel()
        self.indexer.cancel()  # stopped: the next start resumes it
        self.scanner.cancel(wait=True)
        self.indexer.cancel(wait=True)


def _scan_note(stats: ScanStats) -> str:
    missing = "".join(
        f"; the folder {printable(f)} you added is not there any more"
        for f in stats.missing_folders
    )
    if stats.failed:
        return f"{stats.failed}: {stats.to_read - stats.read:,} changed files not read" + missing
    if stats.cancelled:
        return "the scan was stopped" + missing
    if not stats.read and not stats.removed:
        return "up to date" + missing
    return (
        f"read {stats.read:,} changed files ({stats.bytes_read / 1e6:,.1f} MB) "
        f"in {stats.seconds:.1f} s" + missing
    )


def _nothing_found() -> str:
    from ctxviewer.ingest.discover import default_roots

    where = ", ".join(sorted({str(r.path.parent) for r in default_roots()}))
    return (
        f"No sessions found (looked in {where}).\nAdd a folder of recordings, open a "
        "file, or open the demo session."
    )


def install(host: PanelHost) -> LibraryPanel:
    from ctxviewer.gui.session.main_window import MainWindow

    window = host.window()
    if not isinstance(window, MainWindow):
        raise TypeError("the library page needs the main window")
    return LibraryPanel(window)


def panel_of(host: PanelHost) -> LibraryPanel | None:
    """The window's library page (a child of the window), when installed."""
    return host.window().findChild(LibraryPanel)
