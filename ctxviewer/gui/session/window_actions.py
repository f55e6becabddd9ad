"""The actions and menus of the main window (File, View, Go).

Only creates ``QAction`` objects with their shortcuts and puts them in
menus; the main window connects them to its slots.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu

Key = QKeySequence.StandardKey


class WindowActions(QObject):
    recent_chosen = Signal(str)
    recent_cleared = Signal()

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self.open = self._action(window, "&Open…", [QKeySequence(Key.Open)])
        self.reopen_last = self._action(window, "Reopen the last file at start")
        self.reopen_last.setCheckable(True)
        self.sessions = self._action(window, "&Sessions in this file…")
        self.sessions.setEnabled(False)  # a recording of several agents or conversations
        self.export_json = self._action(window, "Export breakdown as &JSON…")
        self.export_csv = self._action(window, "Export breakdown as &CSV…")
        self.export_png = self._action(window, "Export bar as &PNG…")
        self.quit = self._action(window, "&Quit", [QKeySequence(Key.Quit)])
        self.find = self._action(window, "&Filter rows", [QKeySequence(Key.Find)])
        # Alt+arrows anywhere; PgUp/PgDn stay with the focused widget (they scroll the
        # content and the breakdown, and page through the request list)
        self.previous = self._action(window, "&Previous request", [QKeySequence("Alt+Left")])
        self.next = self._action(window, "&Next request", [QKeySequence("Alt+Right")])
        self.first = self._action(window, "&First request", [QKeySequence("Alt+Home")])
        self.last = self._action(window, "&Last request", [QKeySequence("Alt+End")])
        self.show_breakdown = self._action(window, "&Breakdown", [QKeySequence("Ctrl+1")])
        self.show_timeline = self._action(window, "&Timeline", [QKeySequence("Ctrl+2")])

        bar = window.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addAction(self.open)
        self.recent_menu = QMenu("Open &Recent", window)
        file_menu.addMenu(self.recent_menu)
        file_menu.addAction(self.reopen_last)
        file_menu.addAction(self.sessions)
        file_menu.addSeparator()
        for a in (self.export_json, self.export_csv, self.export_png):
            file_menu.addAction(a)
        file_menu.addSeparator()
        file_menu.addAction(self.quit)
        view_menu = bar.addMenu("&View")
        for a in (self.find, self.show_breakdown, self.show_timeline):
            view_menu.addAction(a)
        go_menu = bar.addMenu("&Go")
        for a in (self.previous, self.next, self.first, self.last):
            go_menu.addAction(a)
        self.set_recent([])

    @staticmethod
    def _action(window: QMainWindow, text: str, keys: list[QKeySequence] | None = None) -> QAction:
        action = QAction(text, window)
        if keys:
            action.setShortcuts(keys)
        window.addAction(action)  # shortcuts work while the menu bar is hidden too
        return action

    def set_recent(self, paths: list[str]) -> None:
        self.recent_menu.clear()
        for path in paths:
            action = self.recent_menu.addAction(path)
            action.triggered.connect(lambda _checked=False, p=path: self.recent_chosen.emit(p))
        if paths:
            self.recent_menu.addSeparator()
        clear = self.recent_menu.addAction("Clear the list")
        clear.setEnabled(bool(paths))
        clear.triggered.connect(self.recent_cleared)
        self.recent_menu.setEnabled(True)

    def set_session_open(self, on: bool) -> None:
        for a in (
            self.export_json,
            self.export_csv,
            self.export_png,
            self.previous,
            self.next,
            self.first,
            self.last,
        ):
            a.setEnabled(on)
