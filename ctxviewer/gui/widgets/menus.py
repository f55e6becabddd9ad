"""The window's menus, found by their title (the panels add their actions to them)."""

from __future__ import annotations

from PySide6.QtWidgets import QMainWindow, QMenu


def find_menu(window: QMainWindow, title: str) -> QMenu | None:
    """The menu bar's menu named ``title`` (its mnemonic ``&`` ignored), or None."""
    for action in window.menuBar().actions():
        menu = action.menu()
        if isinstance(menu, QMenu) and action.text().replace("&", "") == title.replace("&", ""):
            return menu
    return None
