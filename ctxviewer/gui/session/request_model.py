"""The requests of a session (timeline points) as a read-only Qt table model.

Columns: index, time, model, prompt size (API count, or ``~estimate``; its
cell carries the tier colour), role (sub-agent / auxiliary / sidechain
marked) and events. ``UserRole``
returns the ``Point``; ``SORT_ROLE`` a sortable value.
"""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette

from ctxviewer.analysis.timeline import Point
from ctxviewer.gui.widgets.palette import is_dark, tier_background, tier_color
from ctxviewer.ingest.claude.subagents import is_compaction

COLUMNS = ("#", "Time", "Model", "Prompt", "Role", "Events")
COL_INDEX, COL_TIME, COL_MODEL, COL_PROMPT, COL_ROLE, COL_EVENTS = range(6)
SORT_ROLE = Qt.ItemDataRole.UserRole + 2
TIER_ROLE = Qt.ItemDataRole.UserRole + 3
EVENT_LABELS = {
    "compact_boundary": "compaction",
    "compact_summary": "summary",
    "context_overflow": "overflow",
    "api_error": "API error",
    "proxy_undo": "compaction undone",
}
_DATE_SUFFIX = re.compile(r"-\d{8}$")
Index = QModelIndex | QPersistentModelIndex
ROOT = QModelIndex()  # the invisible root, as a default argument


def short_model(model: str | None) -> str:
    """'claude-sonnet-4-20250514' -> 'sonnet-4'."""
    if not model:
        return "?"
    name = model.rsplit("/", 1)[-1]
    name = name.removeprefix("claude-")
    return _DATE_SUFFIX.sub("", name)


def short_time(ts: str | None) -> str:
    """'2025-05-29T21:38:24.293Z' -> '21:38:24'."""
    if not ts or "T" not in ts:
        return ts or ""
    return ts.split("T", 1)[1][:8]


def role_text(p: Point) -> str:
    if is_compaction(p.agent):
        return "compaction"
    role = {"main": "main", "subagent": "sub", "auxiliary": "aux"}.get(p.role, p.role)
    return f"{role} ↳" if p.sidechain else role


class RequestListModel(QAbstractTableModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.points: list[Point] = []
        self._dark = False
        self._dim = QColor("gray")

    def set_timeline(self, points: list[Point]) -> None:
        self.beginResetModel()
        self.points = list(points)
        self._dark = is_dark()
        self._dim = QGuiApplication.palette().color(QPalette.ColorRole.PlaceholderText)
        self.endResetModel()

    def rowCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self.points)

    def columnCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole and orientation == Qt.Orientation.Horizontal:
            return (
                "Request index",
                "Time (UTC)",
                "Model",
                (
                    "Prompt size: API count, or ~local estimate when the API gave none; "
                    "the colour is its threshold tier (safe, warn, auto, hard)"
                ),
                "main, sub (a sub-agent; ↳ sidechain) or aux (an auxiliary call)",
                "Events at this request",
            )[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        p = self.points[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(p, col)
        if role == Qt.ItemDataRole.UserRole:
            return p
        if role == SORT_ROLE:
            return (
                p.index,
                p.timestamp or "",
                p.model or "",
                p.prompt_tokens,
                p.role,
                len(p.events),
            )[col]
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (COL_INDEX, COL_PROMPT):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if (
            role == Qt.ItemDataRole.BackgroundRole
            and col == COL_PROMPT
            and p.tier != "safe"
            and not p.unanswered
        ):
            return tier_background(p.tier, self._dark)
        if role == Qt.ItemDataRole.DecorationRole and col == COL_PROMPT and not p.unanswered:
            return tier_color(p.tier, self._dark)
        if role == TIER_ROLE:
            return p.tier
        if role == Qt.ItemDataRole.ForegroundRole and p.role != "main":
            return self._dim
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(p)
        return None

    @staticmethod
    def _display(p: Point, col: int) -> str:  # noqa: C901 - one branch per column
        if col == COL_INDEX:
            return str(p.index)
        if col == COL_TIME:
            return short_time(p.timestamp)
        if col == COL_MODEL:
            return short_model(p.model)
        if col == COL_PROMPT:
            if p.simulated:  # its usage is the simulator's estimate
                return f"~{p.prompt_tokens:,}"
            if p.api_prompt_tokens is not None:
                return f"{p.api_prompt_tokens:,}"
            if p.unanswered:
                return "failed"
            return f"~{p.estimated_prompt_tokens:,}"
        if col == COL_ROLE:
            return role_text(p)
        events = [EVENT_LABELS.get(e, e) for e in p.events]
        return ", ".join(["simulated", *events] if p.simulated else events)

    @staticmethod
    def _tooltip(p: Point) -> str:
        api = (
            f"{p.api_prompt_tokens:,}"
            if p.api_prompt_tokens is not None and not p.simulated
            else "not reported"
        )
        lines = [
            f"Request {p.index} ({p.role}{', sidechain' if p.sidechain else ''})",
            f"time: {p.timestamp or '?'}",
            f"model: {p.model or '?'}",
            f"API prompt tokens: {api}",
            f"local estimate: {p.estimated_prompt_tokens:,}",
            f"tier: {p.tier}",
        ]
        if p.events:
            lines.append("events: " + ", ".join(p.events))
        if p.failure:
            lines.append(f"failed: {p.failure[:200]}")
        if p.simulated:
            lines.append("simulated compaction: the count is a local estimate")
        return "\n".join(lines)
