"""The original messages of a compacted request, each marked kept / summarized / dropped.

A read-only table: #, role, fate, tokens (the estimator's), preview. The
fate cell is tinted (kept green, summarized amber, dropped red) and
``FATE_ROLE`` returns the fate; ``UserRole`` the ``Message``.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from ctxviewer.analysis.compaction import CompactionResult
from ctxviewer.analysis.tokens.estimators import Estimator
from ctxviewer.gui.widgets.palette import is_dark, tier_background, tier_color
from ctxviewer.model import Message

FATE_ROLE = Qt.ItemDataRole.UserRole + 4
COLUMNS = ("#", "Role", "Fate", "Tokens", "Preview")
FATE_TIER = {"kept": "safe", "slimmed": "safe", "summarized": "warn", "dropped": "hard"}
Index = QModelIndex | QPersistentModelIndex
ROOT = QModelIndex()


def _preview(m: Message, n: int = 140) -> str:
    text = " ".join(" ".join(b.text.split()[:60]) or f"({b.kind})" for b in m.blocks)
    return text if len(text) <= n else text[: n - 1] + "…"


class CompactionMessagesModel(QAbstractTableModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[tuple[int, Message, str, int]] = []
        self._dark = False

    def set_result(
        self, original: tuple[Message, ...], r: CompactionResult | None, est: Estimator | None
    ) -> None:
        self.beginResetModel()
        self.rows = []
        self._dark = is_dark()
        if r is not None and est is not None:
            fate = dict.fromkeys(r.kept, "kept")
            fate.update({s.message: "slimmed" for s in r.slimmed if s.message in fate})
            fate.update(dict.fromkeys(r.summarized, "summarized"))
            fate.update(dict.fromkeys(r.dropped, "dropped"))
            self.rows = [
                (i, m, fate.get(i, "kept"), est.message(m)) for i, m in enumerate(original)
            ]
        self.endResetModel()

    def indices(self, fate: str) -> list[int]:
        return [i for i, _, f, _ in self.rows if f == fate]

    def rowCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (
            role == Qt.ItemDataRole.DisplayRole
            and orientation == Qt.Orientation.Horizontal
            and 0 <= section < len(COLUMNS)
        ):
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        i, m, fate, tokens = self.rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return (str(i), m.role, fate, f"{tokens:,}", _preview(m))[col]
        if role == FATE_ROLE:
            return fate
        if role == Qt.ItemDataRole.UserRole:
            return m
        if role == Qt.ItemDataRole.BackgroundRole and col == 2:
            return tier_background(FATE_TIER[fate], self._dark)
        if role == Qt.ItemDataRole.DecorationRole and col == 2:
            return tier_color(FATE_TIER[fate], self._dark)
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (0, 3):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and col == 4:
            return _preview(m, 1000)
        return None
