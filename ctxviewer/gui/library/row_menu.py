"""The library table's right-click menu: on a session, open it, copy its file's path or
show the file in its folder; on a project's row, copy the project's path."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, QPoint, Qt, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QMenu, QTreeView

from ctxviewer.gui.library import model as rows


class RowMenu(QObject):
    """Builds and shows the menu; ``open_entry`` opens a session, ``failed`` says why a
    folder could not be shown."""

    def __init__(
        self,
        tree: QTreeView,
        open_entry: Callable[[dict[str, Any]], None],
        failed: Callable[[str, str], None],
    ) -> None:
        super().__init__(tree)
        self.tree = tree
        self.open_entry = open_entry
        self.failed = failed
        self.reveal: Callable[[QUrl], bool] = QDesktopServices.openUrl  # tests record it
        self.last_menu: QMenu | None = None
        tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        tree.customContextMenuRequested.connect(self._on_menu_requested)

    def menu_for(self, index: QModelIndex) -> QMenu | None:
        """The menu for the row at ``index`` (None: no row there)."""
        first = index.siblingAtColumn(rows.SESSION)
        entry = first.data(rows.ENTRY_ROLE)
        project = first.data(rows.PROJECT_ROLE)
        menu = QMenu(self.tree)
        if isinstance(entry, dict):
            path = str(entry.get("path") or "")
            opened = menu.addAction("Open")
            font = opened.font()
            font.setBold(True)
            opened.setFont(font)
            opened.triggered.connect(lambda: self.open_entry(entry))
            menu.addAction("Copy path").triggered.connect(lambda: _copy(path))
            menu.addAction("Show in folder").triggered.connect(lambda: self._show(path))
            project = entry.get("project")
        if isinstance(project, str) and project and project != rows.NO_PROJECT:
            if isinstance(entry, dict):
                menu.addSeparator()
            menu.addAction("Copy project path").triggered.connect(lambda: _copy(project))
        if menu.isEmpty():
            return None
        self.last_menu = menu
        return menu

    def _on_menu_requested(self, pos: QPoint) -> None:
        index = self.tree.indexAt(pos)
        menu = self.menu_for(index) if index.isValid() else None
        if menu is not None:
            menu.popup(self.tree.viewport().mapToGlobal(pos))

    def _show(self, path: str) -> None:
        folder = os.path.dirname(path)
        if not os.path.isdir(folder):
            self.failed("Cannot show the folder", f"{folder} is not there any more")
        elif not self.reveal(QUrl.fromLocalFile(folder)):
            self.failed("Cannot show the folder", f"no file manager opened {folder}")


def _copy(text: str) -> None:
    clipboard = QGuiApplication.clipboard()
    if clipboard is not None:
        clipboard.setText(text)
