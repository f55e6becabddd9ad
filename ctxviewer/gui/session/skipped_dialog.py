"""The records a reader skipped (line and reason), in a small dialog."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ctxviewer.model import Skipped


class SkippedDialog(QDialog):
    def __init__(
        self, skipped: Sequence[Skipped], path: str = "", parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Skipped records")
        self.resize(560, 420)
        self.table = QTableWidget(len(skipped), 2, self)
        self.table.setHorizontalHeaderLabels(["Line", "Reason"])
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for row, s in enumerate(skipped):
            self.table.setItem(row, 0, QTableWidgetItem(str(s.line)))
            self.table.setItem(row, 1, QTableWidgetItem(s.reason))
        self.table.resizeColumnToContents(0)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        what = f" of {path}" if path else ""
        layout.addWidget(QLabel(f"{len(skipped):,} records{what} were skipped:", self))
        layout.addWidget(self.table)
        layout.addWidget(buttons)
