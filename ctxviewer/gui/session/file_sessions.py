"""A file that holds several sessions (a recording of several agents or
conversations): after it loads, ask which one to show (unless it was opened on
one, from the library); File > Sessions in this file asks again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget

from ctxviewer.gui.app_state import AppState
from ctxviewer.gui.session.loader import SessionLoader

if TYPE_CHECKING:
    from ctxviewer.gui.session.chooser import SessionChooserDialog
    from ctxviewer.model import Session


class FileSessions(QObject):
    def __init__(
        self, state: AppState, loader: SessionLoader, action: QAction, window: QWidget
    ) -> None:
        super().__init__(window)
        self.state, self.loader, self.action, self.window = state, loader, action, window
        self.parts: list[Session] = []
        self.dialog: SessionChooserDialog | None = None
        loader.load_started.connect(self._on_loader_started)
        loader.sessions_found.connect(self._on_loader_sessions_found)
        action.triggered.connect(self.choose)

    def _on_loader_started(self, _path: str) -> None:
        self.parts = []
        self.action.setEnabled(False)

    def _on_loader_sessions_found(self, parts: list[Session], ask: bool) -> None:
        """The default session shows already; ask which one the user wants (unless the
        file was opened on one of them, as the library's rows do)."""
        self.parts = parts
        self.action.setEnabled(True)
        if ask:
            self.choose()

    def current(self) -> int:
        shown = self.state.session
        return next(
            (
                i
                for i, p in enumerate(self.parts)
                if shown is not None and (p.session_id, p.title) == (shown.session_id, shown.title)
            ),
            0,
        )

    def choose(self) -> None:
        if len(self.parts) < 2:
            return
        from ctxviewer.gui.session.chooser import SessionChooserDialog

        current = self.current()
        dialog = self.dialog = SessionChooserDialog(self.parts, current, self.window)
        dialog.accepted.connect(lambda: self._on_dialog_accepted(dialog.chosen(), current))
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()

    def _on_dialog_accepted(self, chosen: int, current: int) -> None:
        if chosen != current:
            self.loader.show_session(self.parts[chosen], self.state.options)
