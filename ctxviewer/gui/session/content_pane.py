"""The exact text of the selected row, with its token count.

The text is set once into a read-only ``QPlainTextEdit`` (fast for large
texts); anything above ``MAX_CHARS`` is cut, with a note saying so.
"""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase, QTextOption
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QSizePolicy, QVBoxLayout, QWidget

from ctxviewer.gui.session.content import Content

MAX_CHARS = 2 * 1024 * 1024


class ContentPane(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel(self)
        self.title.setWordWrap(True)
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.info = QLabel(self)
        self.info.setWordWrap(True)
        self.info.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.text = QPlainTextEdit(self)
        self.text.setReadOnly(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.text.setPlaceholderText("Select a row of the breakdown to see its exact text.")
        self.truncated = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(3)
        layout.addWidget(self.title)
        layout.addWidget(self.info)
        layout.addWidget(self.text)

    def set_content(self, content: Content, estimator: str = "") -> None:
        self.title.setText(content.title)
        self.title.setToolTip(content.title)
        text = content.text
        self.truncated = len(text) > MAX_CHARS
        if self.truncated:
            text = text[:MAX_CHARS]
        self.text.setPlainText(text)
        self.info.setText(self._info(content, estimator, len(content.text)))

    def clear(self) -> None:
        self.set_content(Content("", "", None, None))

    def _info(self, c: Content, estimator: str, chars: int) -> str:
        parts: list[str] = []
        if c.tokens is not None:
            parts.append(
                f"{c.tokens:,} tokens ({estimator})" if estimator else f"{c.tokens:,} tokens"
            )
        if c.shown_tokens is not None and c.shown_tokens != c.tokens:
            parts.append(f"{c.shown_tokens:,} in the breakdown")
        if c.title or c.text:
            parts.append(f"{chars:,} characters")
        if self.truncated:
            parts.append(f"showing the first {MAX_CHARS // (1024 * 1024)} MB only")
        return "  ·  ".join(parts)
