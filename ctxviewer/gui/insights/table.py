"""One insights page made of a summary line, a sortable table and a note.

The cache-breaks, redundancy and sub-agents pages are each an
``InsightsTable`` with their own columns: a passive view with ``set_rows`` /
``set_summary`` / ``set_note`` that emits ``request_selected`` when the user
picks a row (click or keyboard) whose record maps to a request.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ctxviewer.gui.insights.model import SORT_ROLE, Column, InsightsTableModel
from ctxviewer.gui.widgets.row_views import fit_columns, rows_view

MAX_COLUMN_WIDTH = 280


class InsightsTable(QWidget):
    request_selected = Signal(int)  # the request a picked row points at

    def __init__(
        self,
        columns: Sequence[Column],
        request_of: Callable[[Any], int | None],
        parent: QWidget | None = None,
        *,
        tint: Callable[[Any], QColor | None] | None = None,
        stretch: int | None = None,
        describe: Callable[[Any], str] | None = None,
    ) -> None:
        super().__init__(parent)
        self._request_of = request_of
        self._describe = describe
        self.model = InsightsTableModel(columns, self, tint=tint)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.view = rows_view(QTableView(self))
        self.view.setModel(self.proxy)
        self.view.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.view.setSortingEnabled(True)  # the core's order until the user sorts
        self.view.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(stretch is None)
        self._stretch = stretch
        self.detail = QLabel(self)  # the picked row in full (``describe``)
        self.detail.setWordWrap(True)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail.setVisible(describe is not None)
        self.note = QLabel(self)
        self.note.setWordWrap(True)
        self.note.setVisible(False)
        self.box = QVBoxLayout(self)
        self.box.setContentsMargins(6, 6, 6, 6)
        for w, factor in ((self.summary, 0), (self.view, 1), (self.detail, 0), (self.note, 0)):
            self.box.addWidget(w, factor)
        self.view.clicked.connect(self._on_view_clicked)
        self.view.selectionModel().currentRowChanged.connect(self._on_view_current_changed)

    # -- setters --------------------------------------------------------------------
    def set_rows(self, rows: Sequence[Any]) -> None:
        self.model.set_rows(rows)
        self.detail.setText("Pick a row to see it in full." if rows else "")
        fit_columns(self.view, MAX_COLUMN_WIDTH)  # long texts: full in the tooltip
        if self._stretch is not None:
            header = self.view.horizontalHeader()
            header.setSectionResizeMode(self._stretch, QHeaderView.ResizeMode.Stretch)

    def set_summary(self, text: str) -> None:
        self.summary.setText(text)

    def set_note(self, text: str) -> None:
        self.note.setText(text)
        self.note.setVisible(bool(text))

    # -- helpers for tests and callers ------------------------------------------------
    def record_at(self, row: int) -> Any:
        """The record shown in view row ``row`` (after sorting)."""
        return self.proxy.index(row, 0).data(Qt.ItemDataRole.UserRole)

    def _emit_for(self, index: QModelIndex) -> None:
        if not index.isValid():
            return
        request = self._request_of(index.data(Qt.ItemDataRole.UserRole))
        if request is not None:
            self.request_selected.emit(request)

    def _on_view_clicked(self, index: QModelIndex) -> None:
        self._emit_for(index)

    def _on_view_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self._describe is not None and current.isValid():
            self.detail.setText(self._describe(current.data(Qt.ItemDataRole.UserRole)))
        self._emit_for(current)
