"""Which session of a file to show, when a recording holds several (agents or
conversations): a list with agent, session id, size and time of each."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ctxviewer.analysis.agents.sessions import describe
from ctxviewer.fmt import plural
from ctxviewer.model import Session


class SessionChooserDialog(QDialog):
    """Pick one of ``parts``; ``chosen()`` is its position once accepted."""

    def __init__(self, parts: list[Session], current: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Sessions in this file")
        self.parts = parts
        head = QLabel(
            f"This file holds {len(parts)} sessions (agents or conversations). "
            "Which one should the window show?",
            self,
        )
        head.setWordWrap(True)
        self.list = QListWidget(self)
        for info in describe(parts):
            peak = f"peak {info.peak:,} tokens" if info.peak is not None else "no usage"
            text = (
                f"{info.number}: {info.agent}"
                f"{'  ·  ' + info.conversation[:13] if info.conversation else ''}  ·  "
                f"{plural(info.requests, 'request')} ({info.main} main)  ·  {peak}  ·  "
                f"{(info.first or '?')[:19].replace('T', ' ')}"
            )
            QListWidgetItem(text, self.list)
        self.list.setCurrentRow(current)
        self.list.itemDoubleClicked.connect(lambda _item: self.accept())
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(head)
        layout.addWidget(self.list)
        layout.addWidget(buttons)
        wide = self.list.sizeHintForColumn(0) + 2 * self.list.frameWidth() + 40
        rows = self.list.sizeHintForRow(0) * min(len(parts), 10)
        self.resize(max(560, min(wide, 1100)), 140 + rows)

    def chosen(self) -> int:
        return max(0, self.list.currentRow())
