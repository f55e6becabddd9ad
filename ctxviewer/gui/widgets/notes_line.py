"""Notes in one line, the rest on demand: on a small screen four wrapped notes above
the tabs left the Compare tab two table rows. Collapsed, the first note shows elided
to the width, with a button saying how many more there are; expanded, every note
wraps in full. The whole text is the tooltip either way."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette, QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QToolButton, QWidget


class NotesLine(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.lines: list[str] = []
        self.expanded = False
        self.label = QLabel(self)
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.more = QToolButton(self)
        self.more.setAutoRaise(True)
        self.more.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.more.clicked.connect(self.toggle)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.more, 0, Qt.AlignmentFlag.AlignTop)
        self.hide()

    def set_notes(self, lines: list[str], tip: str = "") -> None:
        self.lines = [line for line in lines if line]
        self.setToolTip(tip or "\n".join(self.lines))
        self.setVisible(bool(self.lines))
        self._show()

    def text(self) -> str:
        """Every note, one a line (whatever is shown)."""
        return "\n".join(self.lines)

    def toggle(self) -> None:
        self.expanded = not self.expanded
        self._show()

    def _show(self) -> None:
        one = len(self.lines) <= 1 and self._fits()
        self.more.setVisible(not one)
        if self.expanded or one:
            self.label.setWordWrap(True)
            self.label.setText(self.text())
            self.more.setText("less")
            self.more.setToolTip("Show the first note only")
            return
        self.label.setWordWrap(False)
        first = self.lines[0] if self.lines else ""
        width = max(self.label.width(), 40)
        self.label.setText(
            self.label.fontMetrics().elidedText(first, Qt.TextElideMode.ElideRight, width)
        )
        extra = len(self.lines) - 1
        self.more.setText(f"+{extra} more" if extra else "more")
        self.more.setToolTip("Show every note in full")

    def _fits(self) -> bool:
        """The one note fits the label's width on one line."""
        first = self.lines[0] if self.lines else ""
        return self.label.fontMetrics().horizontalAdvance(first) <= max(self.label.width(), 40)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._show()
