"""A line above the session's views saying what the window shows when that is not
obvious: the bundled demo session (not the user's), or a file with no model request
(Claude Code keeps files holding only a conversation's summary). Hidden otherwise.

``no_requests_note`` is the same explanation for the library's rows."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QWidget

from ctxviewer.resources import is_demo

if TYPE_CHECKING:
    from ctxviewer.analysis.analysis import Analysis

# why an agent's file holds no request, by the agent that wrote it
WHY_EMPTY = {
    "claude-code": "Claude Code keeps a file like this for a conversation's summary or "
    "title alone, or for a session closed before its first prompt reached "
    "the model",
    "codex": "Codex writes a rollout like this for a session closed before its first turn "
    "reached the model",
    "gemini-cli": "Gemini CLI writes a chat like this for a session closed before its first "
    "prompt reached the model",
    "qwen-code": "qwen-code writes a chat like this for a session closed before its first "
    "prompt reached the model",
}
WHY_EMPTY_ELSE = (
    "none of its records is a call to the model (a recording made before its "
    "first exchange, or an agent still starting)"
)
LIBRARY_LINK = "library"


def _size(size: int | None) -> str:
    if size is None:
        return ""
    return f"{size:,} bytes" if size < 10_000 else f"{size / 1000:,.0f} kB"


def no_requests_note(agent: str, size: int | None = None, skipped: int = 0) -> str:
    """One sentence or two: a file of ``agent`` holding no model request, and why."""
    held = f" ({_size(size)})" if size is not None else ""
    text = f"No model requests in this file{held}: {WHY_EMPTY.get(agent, WHY_EMPTY_ELSE)}."
    if skipped:
        text += f" {skipped:,} record{'s' if skipped != 1 else ''} could not be read."
    return text


class SessionNotice(QLabel):
    """The notice; ``link_activated`` with ``LIBRARY_LINK`` asks for the library page."""

    library_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("session_notice")
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse)
        self.setStyleSheet(
            "#session_notice { border: 1px solid palette(mid); "
            "border-radius: 3px; padding: 4px 8px; "
            "background: palette(alternate-base); }"
        )
        self.linkActivated.connect(self._on_link_activated)
        self.hide()

    def set_analysis(self, a: Analysis | None) -> None:
        text = notice_text(a)
        self.setText(text)
        self.setVisible(bool(text))

    def _on_link_activated(self, link: str) -> None:
        if link == LIBRARY_LINK:
            self.library_requested.emit()


def notice_text(a: Analysis | None) -> str:
    """The notice for ``a`` (rich text), "" when there is nothing to say."""
    path = a.session.path if a is not None else None
    if a is None or not path:
        return ""
    s = a.session
    if is_demo(path):
        return (
            f"<b>The bundled demo session</b> (made up). Yours: the <a href='{LIBRARY_LINK}'>"
            "library</a> (Ctrl+Shift+L), File &gt; Open… or a drop."
        )
    if not s.requests:
        try:
            size: int | None = os.path.getsize(path)
        except OSError:
            size = None
        return f"<b>{os.path.basename(path)}</b>: " + no_requests_note(
            a.identity.profile.id, size, len(s.skipped)
        )
    return ""
