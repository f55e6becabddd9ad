"""File > Attach…: the agents' session files on this machine, newest first.

A passive view: ``set_sessions(infos, roots, now)`` fills it (the owner runs
``discover_sessions`` off the GUI thread); ``refresh_requested``,
``attach_requested(path)`` (open and follow live) and ``open_requested(path)``
are its intents. Files no reader takes are greyed out, the reason in their
tooltip.
"""

from __future__ import annotations

import os
import time

from PySide6.QtCore import Qt, Signal, SignalInstance
from PySide6.QtGui import QBrush, QPalette
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QStackedWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ctxviewer.ingest.discover import (
    AIDER,
    CLAUDE_CODE,
    CLINE,
    CODEX,
    GEMINI_CLI,
    OPENCODE,
    QWEN_CODE,
    ROO_CODE,
    SessionInfo,
)

AGENT_NAMES = {
    CLAUDE_CODE: "Claude Code",
    CODEX: "Codex",
    GEMINI_CLI: "Gemini CLI",
    QWEN_CODE: "qwen-code",
    CLINE: "Cline",
    ROO_CODE: "Roo Code",
    OPENCODE: "OpenCode",
    AIDER: "Aider",
}
COL_ACTIVE, COL_AGENT, COL_PROJECT, COL_FILE, COL_WHEN, COL_SIZE = range(6)
HEADERS = ["", "Agent", "Project", "Session file", "Last written", "Size"]
ACTIVE_MARK = "●"
PATH_ROLE = Qt.ItemDataRole.UserRole


def ago(mtime: float, now: float) -> str:
    """``mtime`` relative to ``now`` for people: "just now", "2 min ago", "3 days ago"."""
    s = max(0.0, now - mtime)
    if s < 45:
        return "just now"
    for unit, size in (("day", 86400), ("h", 3600), ("min", 60)):
        if s >= size:
            n = int(s // size)
            if unit == "day":
                return f"{n} day{'s' if n > 1 else ''} ago"
            return f"{n} {unit} ago"
    return "1 min ago"


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


class AttachDialog(QDialog):
    refresh_requested = Signal()
    attach_requested = Signal(str)
    open_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Attach to an agent session")
        self.filter = QLineEdit(self)
        self.filter.setPlaceholderText("Filter by agent, project or file…")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._on_filter_text_changed)
        self.refresh_button = QPushButton("Refresh", self)
        self.refresh_button.clicked.connect(self.refresh_requested)
        top = QHBoxLayout()
        top.addWidget(self.filter, 1)
        top.addWidget(self.refresh_button)
        self.tree = QTreeWidget(self)
        self.tree.setHeaderLabels(HEADERS)
        self.tree.headerItem().setToolTip(COL_ACTIVE, "Active: written in the last 5 minutes")
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(COL_PROJECT, QHeaderView.ResizeMode.Stretch)
        self.tree.itemDoubleClicked.connect(self._on_tree_item_double_clicked)
        self.tree.currentItemChanged.connect(self._on_tree_current_changed)
        self.empty = QLabel(self)
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.tree)
        self.stack.addWidget(self.empty)
        self.legend = QLabel(
            f"{ACTIVE_MARK} written in the last 5 minutes · greyed out: "
            "no reader takes the file (hover for why) · Attach opens the "
            "file and follows it as the agent writes",
            self,
        )
        self.legend.setWordWrap(True)
        self.legend.setEnabled(False)  # secondary text
        self.buttons = QDialogButtonBox(self)
        self.attach_button = self.buttons.addButton(
            "Attach (follow live)", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.open_button = self.buttons.addButton("Open", QDialogButtonBox.ButtonRole.ActionRole)
        self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.attach_button.clicked.connect(lambda: self._request(self.attach_requested))
        self.open_button.clicked.connect(lambda: self._request(self.open_requested))
        self.buttons.rejected.connect(self.reject)
        box = QVBoxLayout(self)
        box.addLayout(top)
        box.addWidget(self.stack, 1)
        box.addWidget(self.legend)
        box.addWidget(self.buttons)
        self.resize(980, 520)
        self.set_searching()

    # -- filling ------------------------------------------------------------------
    def set_searching(self) -> None:
        self.tree.clear()
        self.empty.setText("Looking for agent sessions…")
        self.stack.setCurrentWidget(self.empty)
        self.refresh_button.setEnabled(False)
        self._update_buttons()

    def set_sessions(
        self, infos: list[SessionInfo], roots: list[str], now: float | None = None
    ) -> None:
        """Show ``infos`` (newest first); ``roots`` are the folders that were searched."""
        now = time.time() if now is None else now
        self.refresh_button.setEnabled(True)
        self.tree.clear()
        grey = QBrush(self.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text))
        for info in infos:
            self.tree.addTopLevelItem(self._item(info, now, grey))
        for col in (COL_ACTIVE, COL_AGENT, COL_FILE, COL_WHEN, COL_SIZE):
            self.tree.resizeColumnToContents(col)
        self.tree.setColumnWidth(COL_FILE, min(self.tree.columnWidth(COL_FILE), 300))
        if infos:
            self.stack.setCurrentWidget(self.tree)
            openable = [it for it in self.items() if it.data(0, PATH_ROLE + 1)]
            self.tree.setCurrentItem((openable or self.items())[0])
            self._on_filter_text_changed(self.filter.text())
        else:
            self.empty.setText("No agent session files found.\n\nLooked in:\n" + "\n".join(roots))
            self.stack.setCurrentWidget(self.empty)
        self._update_buttons()

    def _item(self, info: SessionInfo, now: float, grey: QBrush) -> QTreeWidgetItem:
        agent = AGENT_NAMES.get(info.agent, info.agent)
        if info.subagent:
            agent += " · sub-agent"
        item = QTreeWidgetItem(
            [
                ACTIVE_MARK if info.active else "",
                agent,
                info.label,
                os.path.basename(info.path),
                ago(info.mtime, now),
                human_size(info.size),
            ]
        )
        item.setData(0, PATH_ROLE, info.path)
        item.setData(0, PATH_ROLE + 1, info.openable)
        item.setTextAlignment(COL_SIZE, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        item.setTextAlignment(COL_ACTIVE, Qt.AlignmentFlag.AlignCenter)
        if info.active:
            item.setForeground(COL_ACTIVE, QBrush(Qt.GlobalColor.green))
            item.setToolTip(COL_ACTIVE, "written in the last 5 minutes")
        tip = info.path if info.openable else f"{info.path}\nCannot be opened: {info.error}"
        for col in range(1, len(HEADERS)):
            item.setToolTip(col, tip)
            if not info.openable:
                item.setForeground(col, grey)
        return item

    # -- reading ------------------------------------------------------------------
    def items(self) -> list[QTreeWidgetItem]:
        items = (self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount()))
        return [it for it in items if it is not None]

    def visible_paths(self) -> list[str]:
        return [it.data(0, PATH_ROLE) for it in self.items() if not it.isHidden()]

    def current_path(self) -> str | None:
        item = self.tree.currentItem()
        if item is None or item.isHidden() or not item.data(0, PATH_ROLE + 1):
            return None
        path = item.data(0, PATH_ROLE)
        return path if isinstance(path, str) else None

    # -- slots ----------------------------------------------------------------------
    def _on_filter_text_changed(self, text: str) -> None:
        words = text.lower().split()
        for it in self.items():
            hay = " ".join(it.text(c) for c in range(len(HEADERS))).lower()
            hay += " " + str(it.data(0, PATH_ROLE)).lower()
            it.setHidden(not all(w in hay for w in words))
        self._update_buttons()

    def _on_tree_current_changed(self, *_: object) -> None:
        self._update_buttons()

    def _on_tree_item_double_clicked(self, item: QTreeWidgetItem, _col: int) -> None:
        if item.data(0, PATH_ROLE + 1):
            self.attach_requested.emit(item.data(0, PATH_ROLE))
            self.accept()

    def _update_buttons(self) -> None:
        ok = self.current_path() is not None
        self.attach_button.setEnabled(ok)
        self.open_button.setEnabled(ok)

    def _request(self, signal: SignalInstance) -> None:
        path = self.current_path()
        if path is not None:
            signal.emit(path)
            self.accept()
