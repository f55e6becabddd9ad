"""The library page: every session on this machine in a sortable, filterable table,
grouped by project, with a sparkline of each session's prompt size."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from ctxviewer.fmt import plural
from ctxviewer.gui.library import model as rows
from ctxviewer.gui.library.hits import HitsPane
from ctxviewer.gui.library.sparkline import SparklineDelegate
from ctxviewer.jsonish import printable

SEARCH_DELAY_MS = 350
WIDTHS = {
    rows.SESSION: 230,
    rows.AGENT: 128,
    rows.REQUESTS: 72,
    rows.PEAK: 62,
    rows.SHARE: 62,
    rows.PROMPT: 120,
    rows.COST: 72,
    rows.COMPACTIONS: 86,
    rows.MATCHES: 66,
}


class SessionTree(QTreeView):
    """The table; Enter opens the current session as a double-click does."""

    activated_entry = Signal(object)  # the session's dict

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            entry = self.currentIndex().siblingAtColumn(rows.SESSION).data(rows.ENTRY_ROLE)
            if isinstance(entry, dict):
                self.activated_entry.emit(entry)
                return
        super().keyPressEvent(event)


class SearchField(QLineEdit):
    """The search box; Down moves to the table (the keyboard's way from typing to rows),
    Escape clears it (and so ends the search)."""

    down = Signal()
    cleared = Signal()  # by Escape

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Down and not event.modifiers():
            self.down.emit()
            return
        if event.key() == Qt.Key.Key_Escape and self.text():
            self.clear()
            self.cleared.emit()
            return
        super().keyPressEvent(event)


class LibraryView(QWidget):
    """The page. It shows what it is given (``set_entries``) and asks for the rest
    through signals: the panel owns the library and the scan."""

    open_requested = Signal(object)  # a session's dict
    open_file_requested = Signal()
    demo_requested = Signal()
    rescan_requested = Signal()
    add_folder_requested = Signal()
    search_changed = Signal(str)  # the full-text search to run ("" to clear it)
    picked = Signal(object)  # the current session's dict (None: a project's row, none)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("library_view")
        self.entries: list[dict[str, Any]] = []
        self.matches: dict[int, int] | None = None
        self._groups: list[list[dict[str, Any]]] = []  # each top row's sessions
        self._counted = False  # the Matches column holds counts
        self._build()

    def _build(self) -> None:
        self.title = QLabel("<b>Sessions on this machine</b>", self)
        self.summary = QLabel("", self)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.summary.setMinimumWidth(80)  # a long note is cut, never widens the window: the
        # tooltip holds it whole
        self.progress = QProgressBar(self)
        self.progress.setFixedWidth(120)
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.progress_label = QLabel("", self)
        self.progress_label.hide()
        self.open_file = QPushButton("Open file…", self)
        self.demo = QPushButton("Open the demo session", self)
        self.add_folder = QPushButton("Add folder…", self)
        self.rescan = QPushButton("Rescan", self)
        self.rescan.setToolTip("Look for new and changed session files (read only what changed)")
        top = QHBoxLayout()
        top.addWidget(self.title)
        top.addWidget(self.summary, 1)
        top.addWidget(self.progress_label)
        top.addWidget(self.progress)
        for b in (self.open_file, self.demo, self.add_folder, self.rescan):
            top.addWidget(b)
        self.search = SearchField(self)
        self.search.setPlaceholderText('Search messages (every word; "a phrase")…')
        self.search.setClearButtonEnabled(True)
        self.filter = QLineEdit(self)
        self.filter.setPlaceholderText("Filter rows…")
        self.filter.setClearButtonEnabled(True)
        self.agent = QComboBox(self)
        self.project = QComboBox(self)
        self.project.setMinimumContentsLength(18)
        self.project.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.grouped = QCheckBox("Group by project", self)
        self.grouped.setChecked(True)
        filters = QHBoxLayout()
        filters.addWidget(self.search, 3)
        filters.addWidget(self.filter, 2)
        filters.addWidget(self.agent)
        filters.addWidget(self.project, 1)
        filters.addWidget(self.grouped)
        self.model = QStandardItemModel(self)
        self.proxy = rows.LibraryFilter(self)
        self.proxy.setSourceModel(self.model)
        self.tree = SessionTree(self)
        self.tree.setModel(self.proxy)
        self.tree.setSortingEnabled(True)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tree.setItemDelegateForColumn(rows.PROMPT, SparklineDelegate(self.tree))
        self.tree.sortByColumn(rows.SESSION, Qt.SortOrder.DescendingOrder)
        self.search.down.connect(self._to_table)
        self.tree.selectionModel().currentChanged.connect(
            lambda *_: self.picked.emit(self.current_entry())
        )
        self.hits = HitsPane(self)  # a search's matches in the picked session
        self.hits.hide()
        self._hits_on = False
        self.split = QSplitter(Qt.Orientation.Vertical, self)
        self.split.addWidget(self.tree)
        self.split.addWidget(self.hits)
        self.split.setChildrenCollapsible(False)
        self.split.setStretchFactor(0, 3)
        self.split.setStretchFactor(1, 1)
        self.empty = QLabel("", self)
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.hide()
        box = QVBoxLayout(self)
        box.setContentsMargins(8, 6, 8, 4)
        box.addLayout(top)
        box.addLayout(filters)
        box.addWidget(self.split, 1)
        box.addWidget(self.empty, 1)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(
            lambda: self.search_changed.emit(self.search.text().strip())
        )
        self.search.textChanged.connect(lambda _t: self._search_timer.start())
        self.search.returnPressed.connect(self._search_now)
        self.search.cleared.connect(self._search_now)  # the search ends now, not after a delay
        self.filter.textChanged.connect(lambda _t: self._apply_filters())
        self.agent.currentIndexChanged.connect(lambda _i: self._refilter())
        self.project.currentIndexChanged.connect(lambda _i: self._refilter())
        self.grouped.toggled.connect(lambda _on: self._rebuild())
        self.tree.doubleClicked.connect(self._on_double_clicked)
        self.tree.activated_entry.connect(self.open_requested)
        self.open_file.clicked.connect(self.open_file_requested)
        self.demo.clicked.connect(self.demo_requested)
        self.add_folder.clicked.connect(self.add_folder_requested)
        self.rescan.clicked.connect(self.rescan_requested)
        self._set_choices()
        self._size_columns()

    # -- content ------------------------------------------------------------------------
    def set_entries(self, entries: list[dict[str, Any]]) -> None:
        """Every session of the library (the rows are built again only when they changed:
        a refresh with nothing new costs no rebuild)."""
        if entries == self.entries and self.model.rowCount():
            return
        old, self.entries = self.entries, entries
        self._set_choices()
        if not self.model.rowCount():
            self._rebuild()
            return
        # a scan brings a few sessions at a time: only their rows change
        self.proxy.setDynamicSortFilter(False)
        self.proxy.entries = {e["id"]: e for e in self.entries}
        self._groups = rows.patch(self.model, old, entries, self.grouped.isChecked(), self.matches)
        self.proxy.setDynamicSortFilter(True)
        self._refilter()

    def set_matches(self, matches: dict[int, int] | None) -> None:
        """A search's sessions (id -> matching requests, 0: not counted yet); None ends
        the search. The rows stay: the search filters them."""
        self.matches = matches
        self.tree.setColumnHidden(rows.MATCHES, matches is None)
        self._write_counts()
        self._refilter()

    def set_counts(self, counts: dict[int, int]) -> None:
        """The search's counts, once known, for the sessions it shows already."""
        self.matches = counts
        self._write_counts()

    def _write_counts(self) -> None:
        counted = bool(self.matches and any(self.matches.values()))
        if not counted and not self._counted:  # the column is blank, and stays so
            return
        self._counted = counted
        self.proxy.setDynamicSortFilter(False)  # one sort after, not one per row
        rows.set_counts(self.model, self.matches or {})
        rows.retotal(
            self.model, self._groups, {e["id"] for e in self.shown_entries()}, self.matches
        )
        self.proxy.setDynamicSortFilter(True)

    def _rebuild(self) -> None:
        """Build the rows of every session (the filters then hide some)."""
        current = self.current_entry()
        header = self.tree.header()
        column, order = header.sortIndicatorSection(), header.sortIndicatorOrder()
        self.proxy.setDynamicSortFilter(False)
        self.proxy.entries = {e["id"]: e for e in self.entries}
        self._groups = rows.build(self.model, self.entries, self.grouped.isChecked(), self.matches)
        self._counted = bool(self.matches and any(self.matches.values()))
        self.proxy.setDynamicSortFilter(True)
        self._size_columns()
        self.tree.setColumnHidden(rows.MATCHES, self.matches is None)
        self.tree.sortByColumn(column, order)
        self._refilter()
        if current is not None:
            self.select(current["id"])

    def _size_columns(self) -> None:
        header = self.tree.header()
        header.setStretchLastSection(True)
        for col, width in WIDTHS.items():
            header.resizeSection(col, width)
        header.setSectionResizeMode(rows.PROMPT, QHeaderView.ResizeMode.Interactive)

    def _set_choices(self) -> None:
        for combo, key, every in (
            (self.agent, "agent", "All agents"),
            (self.project, "project", "All projects"),
        ):
            chosen = combo.currentData()
            counts: dict[str, int] = {}
            labels: dict[str, str] = {}
            for e in self.entries:
                value = e.get(key) or rows.NO_PROJECT
                counts[value] = counts.get(value, 0) + 1
                if value not in labels:
                    labels[value] = (
                        e.get("agent_label", value).split(" ")[0]
                        if key == "agent"
                        else rows.home(value)
                    )
            combo.blockSignals(True)
            combo.clear()
            combo.addItem(every, None)
            for value in sorted(counts, key=lambda v: (-counts[v], v)):
                name = value if key == "agent" else labels[value]
                combo.addItem(f"{name} ({counts[value]})", value)
            i = combo.findData(chosen)
            combo.setCurrentIndex(i if i >= 0 else 0)
            combo.blockSignals(False)

    def shown_entries(self) -> list[dict[str, Any]]:
        """The sessions of the chosen agent and project that match the search: a
        project's row totals these (the filter text, typed live, only hides rows)."""
        agent, project, ids = self.agent.currentData(), self.project.currentData(), self.matches
        return [
            e
            for e in self.entries
            if (not agent or e["agent"] == agent)
            and (not project or (e.get("project") or rows.NO_PROJECT) == project)
            and (ids is None or e["id"] in ids)
        ]

    def _refilter(self) -> None:
        """Show the sessions of the chosen agent and project that match the search, and
        total them in their project's row."""
        self.proxy.setDynamicSortFilter(False)
        rows.retotal(
            self.model, self._groups, {e["id"] for e in self.shown_entries()}, self.matches
        )
        self.proxy.setDynamicSortFilter(True)
        ids = set(self.matches) if self.matches is not None else None
        self.proxy.set_filters(
            self.agent.currentData(), self.project.currentData(), self.filter.text(), ids
        )
        self.tree.expandAll()
        self._show_empty()

    def _apply_filters(self) -> None:
        self.proxy.set_filters(
            self.proxy.agent, self.proxy.project, self.filter.text(), self.proxy.ids
        )
        self.tree.expandAll()
        self._show_empty()

    def _show_empty(self) -> None:
        nothing = self.visible_sessions() == 0 and bool(self.empty.text())
        self.empty.setHidden(not nothing)
        self.tree.setHidden(nothing)
        self.split.setHidden(nothing)
        self.hits.setVisible(self._hits_on and not nothing)

    def show_hits(self, on: bool) -> None:
        """The pane of a search's matches under the table (while a search is on)."""
        self._hits_on = on
        self._show_empty()

    def _to_table(self) -> None:
        """From the search box to the table, on the current row or the first session."""
        if self.tree.isHidden():
            return
        if not self.tree.currentIndex().isValid():
            first = self._session_indexes()
            if first:
                self.tree.setCurrentIndex(first[0])
        self.tree.setFocus()

    def set_empty_text(self, text: str) -> None:
        """What the page says when no session shows (indexing, none found, no match)."""
        self.empty.setText(text)
        self._show_empty()

    def _search_now(self) -> None:
        self._search_timer.stop()
        self.search_changed.emit(self.search.text().strip())

    # -- selection ----------------------------------------------------------------------
    def visible_sessions(self) -> int:
        n = 0
        for r in range(self.proxy.rowCount()):
            top = self.proxy.index(r, 0)
            kids = self.proxy.rowCount(top)
            n += kids if kids or top.data(rows.ID_ROLE) is None else 1
        return n

    def current_entry(self) -> dict[str, Any] | None:
        e = self.tree.currentIndex().siblingAtColumn(rows.SESSION).data(rows.ENTRY_ROLE)
        return e if isinstance(e, dict) else None

    def select(self, sid: int) -> bool:
        for index in self._session_indexes():
            if index.data(rows.ID_ROLE) == sid:
                self.tree.setCurrentIndex(index)
                self.tree.scrollTo(index)
                return True
        return False

    def _session_indexes(self) -> list[QModelIndex]:
        out = []
        for r in range(self.proxy.rowCount()):
            top = self.proxy.index(r, 0)
            if top.data(rows.ID_ROLE) is not None:
                out.append(top)
            out += [self.proxy.index(k, 0, top) for k in range(self.proxy.rowCount(top))]
        return out

    def _on_double_clicked(self, index: QModelIndex) -> None:
        entry = index.siblingAtColumn(rows.SESSION).data(rows.ENTRY_ROLE)
        if isinstance(entry, dict):
            self.open_requested.emit(entry)

    # -- status -------------------------------------------------------------------------
    def set_summary(self, sessions: int, bad: list[dict[str, Any]], note: str = "") -> None:
        text = plural(sessions, "session")
        if bad:
            text += f" · {plural(len(bad), 'file')} cannot be read"
        tips = [f"{printable(b['path'])}: {b['reason']}" for b in bad[:30]]
        tips += ["…"] if len(bad) > 30 else []
        text += f" · {note}" if note else ""
        self.summary.setToolTip("\n".join([text, *tips]))
        self.summary.setText(text)

    def set_indexing(self, done: int, total: int | None) -> None:
        """How far the text for search is (None: all of it): the search box says so."""
        text = 'Search messages (every word; "a phrase")…'
        if total is not None:
            pct = done * 100 // total if total else 100
            text = f"Search messages (still indexing the text: {pct}%)…"
        self.search.setPlaceholderText(text)
        self.search.setToolTip(
            ""
            if total is None
            else f"The text of {done:,} of {total:,} session files is indexed: "
            "until the rest is, a search finds only what is."
        )

    def set_progress(self, done: int | None, total: int | None, label: str = "") -> None:
        """A scan's progress (None: hide the bar; a ``total`` of 0: busy, no count)."""
        if done is None or total is None:
            self.progress.hide()
            self.progress_label.hide()
            return
        self.progress.setRange(0, total)
        self.progress.setValue(min(done, total))
        self.progress_label.setText(label or f"reading {done:,} of {total:,}…")
        self.progress.show()
        self.progress_label.show()
