"""The breakdown tree with its filter box.

A passive view: ``set_breakdown`` shows a breakdown (keeping the selected row
when the same row exists in the new one), ``select_category`` selects a
category row, and ``node_selected(obj)`` reports the ``Category`` or ``Item``
the user picked.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QHeaderView, QLineEdit, QTreeView, QVBoxLayout, QWidget

from ctxviewer.analysis.breakdown import Breakdown, Item
from ctxviewer.gui.session.breakdown_model import CATEGORY_ROLE, SORT_ROLE, BreakdownModel
from ctxviewer.gui.widgets.row_views import fit_columns

EXPAND_LIMIT = 300  # categories with more rows start collapsed
NUMBER_COLUMNS = (1, 2, 3)


class BreakdownPanel(QWidget):
    node_selected = Signal(object)  # Category | Item | None

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = BreakdownModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.proxy.setRecursiveFilteringEnabled(True)  # keep the parents of matches
        self.proxy.setAutoAcceptChildRows(True)  # and the children of matching rows
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setFilterKeyColumn(0)

        self.filter_edit = QLineEdit(self)
        self.filter_edit.setPlaceholderText("Filter rows (Ctrl+F)")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self._on_filter_edit_changed)
        clear = QShortcut(QKeySequence(Qt.Key.Key_Escape), self.filter_edit)
        clear.setContext(Qt.ShortcutContext.WidgetShortcut)  # Escape empties the filter
        clear.activated.connect(self.filter_edit.clear)

        self.tree = QTreeView(self)
        self.tree.setModel(self.proxy)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        header = self.tree.header()
        header.setSortIndicatorClearable(True)  # a third click restores the breakdown's order
        header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.tree.setSortingEnabled(True)
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in NUMBER_COLUMNS:  # sized by fit_columns in set_breakdown, resizable by hand
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive)
        self.tree.selectionModel().currentChanged.connect(self._on_tree_current_changed)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.filter_edit)
        layout.addWidget(self.tree)

    # -- setters ------------------------------------------------------------------
    def set_breakdown(self, b: Breakdown | None) -> None:
        path = self._path(self.tree.currentIndex())
        self.model.set_breakdown(b)
        # The widest numbers are on category rows (an item never exceeds its category):
        # those few rows are measured. ResizeToContents would measure every row -
        # thousands of messages - on every layout pass.
        fit_columns(self.tree, columns=NUMBER_COLUMNS)
        for row in range(self.proxy.rowCount()):
            index = self.proxy.index(row, 0)
            if self.proxy.rowCount(index) <= EXPAND_LIMIT:  # messages can be thousands
                self.tree.expand(index)
        restored = self._find(path)
        if restored.isValid():
            self.tree.setCurrentIndex(restored)
            self.tree.scrollTo(restored)
        else:
            self.node_selected.emit(None)

    def select_category(self, name: str) -> None:
        for row in range(self.proxy.rowCount()):
            index = self.proxy.index(row, 0)
            if index.data(CATEGORY_ROLE) == name:
                self.tree.setCurrentIndex(index)
                self.tree.scrollTo(index)
                self.tree.setFocus()
                return

    def select_items(
        self, names: Sequence[str], messages: Sequence[int] = (), category: str | None = None
    ) -> bool:
        """Select the message at ``messages[0]`` (then the next...), else the first row
        whose item is named ``names[0]`` (then the next name...), else ``category``'s row.
        True when an item row was found."""
        for want in (*((None, i) for i in messages), *((n, None) for n in names)):
            found = self._find_item(QModelIndex(), *want)
            if found.isValid():
                self.tree.setCurrentIndex(found)
                self.tree.scrollTo(found)
                return True
        if category is not None:
            self.select_category(category)
        return False

    def _find_item(
        self, parent: QModelIndex, name: str | None, message: int | None, depth: int = 0
    ) -> QModelIndex:
        for row in range(self.proxy.rowCount(parent)):
            index = self.proxy.index(row, 0, parent)
            obj = index.data(Qt.ItemDataRole.UserRole)
            if isinstance(obj, Item) and (
                (name is not None and obj.name == name)
                or (message is not None and obj.kind == "message" and obj.index == message)
            ):
                return index
            if depth < 2 and (message is None or depth == 0):
                found = self._find_item(index, name, message, depth + 1)
                if found.isValid():
                    return found
        return QModelIndex()

    def focus_filter(self) -> None:
        self.filter_edit.setFocus()
        self.filter_edit.selectAll()

    def current_object(self) -> object:
        return self.tree.currentIndex().data(Qt.ItemDataRole.UserRole)

    # -- helpers ------------------------------------------------------------------
    def _path(self, index: QModelIndex) -> tuple[str, ...]:
        names: list[str] = []
        while index.isValid():
            names.insert(0, str(index.siblingAtColumn(0).data()))
            index = index.parent()
        return tuple(names)

    def _find(self, path: tuple[str, ...]) -> QModelIndex:
        index = QModelIndex()
        for name in path:
            matches = [self.proxy.index(r, 0, index) for r in range(self.proxy.rowCount(index))]
            found = next((m for m in matches if m.data() == name), None)
            if found is None:
                return QModelIndex()
            index = found
        return index

    # -- slots --------------------------------------------------------------------
    def _on_filter_edit_changed(self, text: str) -> None:
        self.proxy.setFilterFixedString(text)
        if text:
            self.tree.expandAll()

    def _on_tree_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self.node_selected.emit(
            current.data(Qt.ItemDataRole.UserRole) if current.isValid() else None
        )
