"""Right-click menus on the request list and the breakdown tree, and View > Timeline shows.

The request list: copy the row or the request as JSON, simulate a compaction of
that request. The breakdown tree: copy the row's exact text (what the content
pane shows) or its name and tokens, expand or collapse everything, export the
breakdown. The timeline's own toggles (time axis, cache view, sub-agents, side
calls, output, what-if), so far only in the plot's right-click menu, are also
in View > Timeline shows.

Part of the window itself (``MainWindow`` builds it before installing its
panels): it reaches into the session's own views. Simulating a compaction asks
the ``analysis_panels`` panel, when it is installed.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, QObject, QPoint, Qt
from PySide6.QtGui import QAction, QGuiApplication
from PySide6.QtWidgets import QMenu

from ctxviewer.analysis.report import point_json
from ctxviewer.gui.session.content import node_content

if TYPE_CHECKING:
    from ctxviewer.gui.session.main_window import MainWindow


class ContextMenus(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.last_menu: QMenu | None = None  # the menu shown last (for tests)
        table = window.requests
        table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        table.customContextMenuRequested.connect(self._on_requests_menu)
        tree = window.breakdown.tree
        tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        tree.customContextMenuRequested.connect(self._on_tree_menu)

    def add_timeline_menu(self) -> None:
        """View > Timeline shows: the plot's own toggles (building the plot)."""
        plot = self.window.timeline_plot()
        if plot is not None:
            # the tab itself is View > Timeline
            sub = self.window.menu("&View").addMenu("Timeline sho&ws")
            for key in ("reset", "time", "cache", "subagents", "auxiliary", "output", "whatif"):
                sub.addAction(plot.menu_actions[key])

    # -- the request list ---------------------------------------------------------
    def requests_menu(self, index: QModelIndex) -> QMenu:
        """The menu for the request list's row at ``index``."""
        model = self.window.requests.request_model
        point = model.index(index.row(), 0).data(Qt.ItemDataRole.UserRole)
        menu = QMenu(self.window)
        copy_row = menu.addAction("Copy row")
        copy_row.triggered.connect(
            lambda: self._copy(
                "\t".join(
                    str(model.index(index.row(), c).data() or "")
                    for c in range(model.columnCount())
                )
            )
        )
        copy_json = menu.addAction("Copy request as JSON")
        copy_json.triggered.connect(lambda: self._copy(json.dumps(point_json(point), indent=2)))
        if self.window.request_actions:
            menu.addSeparator()
        for text, act in self.window.request_actions:  # the panels' (host.add_request_action)
            action = menu.addAction(text)
            action.triggered.connect(lambda _c=False, a=act: a(point.index))
        self.last_menu = menu
        return menu

    def _on_requests_menu(self, pos: QPoint) -> None:
        table = self.window.requests
        index = table.indexAt(pos)
        if index.isValid():
            self.requests_menu(index).popup(table.viewport().mapToGlobal(pos))

    # -- the breakdown tree ---------------------------------------------------------
    def tree_menu(self, index: QModelIndex) -> QMenu:
        """The menu for the breakdown tree's row at ``index`` (invalid: no row)."""
        tree = self.window.breakdown.tree
        menu = QMenu(self.window)
        obj = index.data(Qt.ItemDataRole.UserRole) if index.isValid() else None
        a = self.window.state.analysis
        if obj is not None and a is not None:
            content = node_content(obj, a.estimator, self.window.state.breakdown)
            copy_text = menu.addAction("Copy text")
            copy_text.triggered.connect(lambda: self._copy(content.text))
            copy_text.setEnabled(bool(content.text))
            row = index.siblingAtColumn(0).data()
            tokens = index.siblingAtColumn(1).data()
            copy_name = menu.addAction("Copy name and tokens")
            copy_name.triggered.connect(lambda: self._copy(f"{row}\t{tokens}"))
            menu.addSeparator()
        expand = menu.addAction("Expand all")
        expand.triggered.connect(tree.expandAll)
        collapse = menu.addAction("Collapse all")
        collapse.triggered.connect(tree.collapseAll)
        menu.addSeparator()
        for action in (self.window.actions_.export_json, self.window.actions_.export_csv):
            menu.addAction(action)
        self.last_menu = menu
        return menu

    def _on_tree_menu(self, pos: QPoint) -> None:
        tree = self.window.breakdown.tree
        self.tree_menu(tree.indexAt(pos)).popup(tree.viewport().mapToGlobal(pos))

    @staticmethod
    def _copy(text: str) -> None:
        QGuiApplication.clipboard().setText(text)


def actions_of(menu: QMenu) -> dict[str, QAction]:
    """A menu's actions by their text (for tests and the shortcut list)."""
    return {a.text(): a for a in menu.actions() if not a.isSeparator()}
