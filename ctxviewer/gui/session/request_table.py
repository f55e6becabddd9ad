"""The request navigator: one row per request, in session order.

A passive view: ``set_timeline`` fills it, ``set_current`` moves the
selection without echoing it back, and ``request_selected(index)`` reports a
row the user picked (mouse, Up/Down, Home/End).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QItemSelection, QItemSelectionModel, QModelIndex, QSize, Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from ctxviewer.analysis.timeline import Point
from ctxviewer.gui.session.request_model import COL_EVENTS, COL_MODEL, RequestListModel
from ctxviewer.gui.widgets.row_views import fit_columns, rows_view

CursorAction = QAbstractItemView.CursorAction


class RequestTable(QTableView):
    request_selected = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.request_model = RequestListModel(self)
        self.setModel(self.request_model)
        rows_view(self)
        self.setShowGrid(False)
        self.setIconSize(QSize(10, 10))
        header = self.horizontalHeader()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self._guard = False
        self.selectionModel().currentRowChanged.connect(self._on_selection_row_changed)

    def set_timeline(self, points: list[Point]) -> None:
        self._guard = True
        try:
            self.request_model.set_timeline(points)
        finally:
            self._guard = False
        header = self.horizontalHeader()
        header.setStretchLastSection(False)  # else the old stretched width sticks
        fit_columns(self)
        if self.columnWidth(COL_MODEL) > 150:
            self.setColumnWidth(COL_MODEL, 150)
        self.setColumnWidth(COL_EVENTS, max(self.columnWidth(COL_EVENTS), 60))
        header.setStretchLastSection(True)

    def set_current(self, index: int) -> None:
        if not 0 <= index < self.request_model.rowCount():
            return
        if self.currentIndex().row() == index:
            return
        self._guard = True
        try:
            column = max(self.currentIndex().column(), 0)
            self.setCurrentIndex(self.request_model.index(index, column))
            self.scrollTo(self.currentIndex())
        finally:
            self._guard = False

    def select_rows(self, rows: Sequence[int]) -> None:
        """Select ``rows`` (those of one source, say), the current row kept: a click on
        any row goes back to one."""
        model = self.request_model
        last = model.columnCount() - 1
        selection = QItemSelection()
        for r in rows:
            if 0 <= r < model.rowCount():
                selection.select(model.index(r, 0), model.index(r, last))
        self.selectionModel().select(selection, QItemSelectionModel.SelectionFlag.ClearAndSelect)

    def selected_rows(self) -> list[int]:
        return sorted({i.row() for i in self.selectionModel().selectedIndexes()})

    def needed_width(self) -> int:
        """Width that shows every column without a horizontal scroll bar."""
        columns = sum(self.columnWidth(c) for c in range(self.request_model.columnCount()))
        return columns + self.verticalScrollBar().sizeHint().width() + 2 * self.frameWidth() + 4

    def current_row(self) -> int:
        return self.currentIndex().row()

    def moveCursor(self, action: CursorAction, modifiers: Qt.KeyboardModifier) -> QModelIndex:
        rows = self.request_model.rowCount()
        column = max(self.currentIndex().column(), 0)
        if action == CursorAction.MoveHome and rows:
            return self.request_model.index(0, column)
        if action == CursorAction.MoveEnd and rows:
            return self.request_model.index(rows - 1, column)
        return super().moveCursor(action, modifiers)

    def _on_selection_row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not self._guard and current.isValid():
            self.request_selected.emit(current.row())
