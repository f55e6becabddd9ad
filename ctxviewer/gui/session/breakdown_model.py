"""The breakdown of one request as a read-only Qt tree model.

Rows: the categories in the breakdown's order, then the rows the agent shows outside its
total (Claude Code's deferred tools: no share of the tokens in use), each with its items
(an MCP server and its tools, a memory file, a skill, a message and its blocks). Columns: Name,
Tokens, % of window, % of used. ``UserRole`` returns the core object of the
row (``Category`` or ``Item``), ``REF_ROLE`` the model object behind it
(``Block``, ``ToolDef``, ``Message`` or text), ``SORT_ROLE`` a value that
sorts numerically.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QFont

from ctxviewer.analysis.agents.counting import OUTSIDE
from ctxviewer.analysis.breakdown import SPACE, Breakdown, Category, Item
from ctxviewer.gui.widgets.palette import category_color, is_dark

REF_ROLE = Qt.ItemDataRole.UserRole + 1
SORT_ROLE = Qt.ItemDataRole.UserRole + 2
CATEGORY_ROLE = Qt.ItemDataRole.UserRole + 3  # name of the category a row belongs to

COLUMNS = ("Name", "Tokens", "% window", "% used")
Index = QModelIndex | QPersistentModelIndex
ROOT = QModelIndex()  # the invisible root, as a default argument


@dataclass
class _Node:
    """A row of the breakdown tree: a category or one of its items."""

    obj: Category | Item | None
    category: str
    parent: int  # id of the parent node (-1 for categories)
    row: int
    children: list[int] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.obj.label if isinstance(self.obj, Category) else self.obj.name  # type: ignore[union-attr]

    @property
    def tokens(self) -> int:
        return self.obj.tokens  # type: ignore[union-attr]


class BreakdownModel(QAbstractItemModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._breakdown: Breakdown | None = None
        self._nodes: list[_Node] = []
        self._top: list[int] = []
        self._dark = False

    @property
    def breakdown(self) -> Breakdown | None:
        return self._breakdown

    def set_breakdown(self, b: Breakdown | None) -> None:
        self.beginResetModel()
        self._breakdown = b
        self._nodes, self._top = [], []
        self._dark = is_dark()
        if b is not None:
            for row, c in enumerate((*b.categories, *b.outside)):
                nid = self._add(_Node(c, c.name, -1, row))
                self._top.append(nid)
                self._add_items(nid, c.items, c.name)
        self.endResetModel()

    def _add(self, node: _Node) -> int:
        self._nodes.append(node)
        return len(self._nodes) - 1

    def _add_items(self, parent: int, items: tuple[Item, ...], category: str) -> None:
        for row, item in enumerate(items):
            nid = self._add(_Node(item, category, parent, row))
            self._nodes[parent].children.append(nid)
            self._add_items(nid, item.items, category)

    # -- structure ----------------------------------------------------------------
    def _children(self, parent: Index) -> list[int]:
        if not parent.isValid():
            return self._top
        return self._nodes[parent.internalId()].children

    def index(self, row: int, column: int, parent: Index = ROOT) -> QModelIndex:
        if not self.hasIndex(row, column, parent):
            return QModelIndex()
        return self.createIndex(row, column, self._children(parent)[row])

    def parent(self, child: Index = ROOT) -> QModelIndex:  # type: ignore[override]
        if not child.isValid():
            return QModelIndex()
        pid = self._nodes[child.internalId()].parent
        if pid < 0:
            return QModelIndex()
        return self.createIndex(self._nodes[pid].row, 0, pid)

    def rowCount(self, parent: Index = ROOT) -> int:
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self._children(parent))

    def columnCount(self, parent: Index = ROOT) -> int:
        return len(COLUMNS)

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole:
            return (
                "Category or item",
                "Tokens under the current estimator (API-scaled in mode B)",
                "Percent of the context window",
                "Percent of the tokens in use",
            )[section]
        return None

    # -- data ---------------------------------------------------------------------
    def node_at(self, index: Index) -> _Node | None:
        return self._nodes[index.internalId()] if index.isValid() else None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        node = self.node_at(index)
        if node is None or self._breakdown is None:
            return None
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(node, col)
        if role == SORT_ROLE:
            return node.name.lower() if col == 0 else self._number(node, col)
        if role == Qt.ItemDataRole.UserRole:
            return node.obj
        if role == REF_ROLE:
            return node.obj.ref if isinstance(node.obj, Item) else None
        if role == CATEGORY_ROLE:
            return node.category
        if role == Qt.ItemDataRole.TextAlignmentRole and col > 0:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.DecorationRole and col == 0 and node.parent < 0:
            return category_color(node.category, self._dark)
        if role == Qt.ItemDataRole.FontRole and _unsent(node.obj):
            font = QFont()
            font.setItalic(True)  # counted by the agent, never sent
            return font
        if role == Qt.ItemDataRole.ToolTipRole and col == 0:
            return _tooltip(node.name, node.obj)
        return None

    def _number(self, node: _Node, col: int) -> float:
        b = self._breakdown
        assert b is not None
        if col == 1:
            return float(node.tokens)
        if col == 2:
            return 100.0 * node.tokens / b.window if b.window else 0.0
        if node.category in SPACE or node.category in OUTSIDE or not b.used:
            return -1.0
        return 100.0 * node.tokens / b.used

    def _display(self, node: _Node, col: int) -> str:
        if col == 0:
            outside = node.parent < 0 and node.category in OUTSIDE
            return f"{node.name} (not in the total)" if outside else node.name
        if col == 1:
            return f"{node.tokens:,}"
        value = self._number(node, col)
        return "" if value < 0 else f"{value:.1f}%"


BASIS = {
    "count_tokens": "the agent's own count (count_tokens)",
    "estimate": "a local estimate",
    "api - overhead": "the API's total minus the rest",
    "window": "from the window and the policy",
}


def _unsent(obj: object) -> bool:
    return isinstance(obj, Item) and obj.kind == "unsent"


def _tooltip(name: str, obj: object) -> str:
    if isinstance(obj, Category):
        lines = [name, f"number: {BASIS.get(obj.basis, obj.basis)}"]
        return "\n".join(lines + ([obj.note] if obj.note else []))
    if _unsent(obj):
        return str(getattr(obj, "ref", ""))
    return name
