"""A read-only table model over a tuple of core insight records.

Every insights table (cache breaks, redundancy findings, sub-agent runs,
diff changes) is a list of frozen dataclasses shown through a list of
``Column``s: how to read a cell's value, how to print it, how to align it.
``UserRole`` returns the record itself, ``SORT_ROLE`` the raw value (numbers
sort as numbers in a ``QSortFilterProxyModel``); an optional ``tint`` colours
whole rows (the diff's added / removed / changed).

Also the number formats shared by the insights pages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from ctxviewer.fmt import fmt_tokens as fmt_tokens  # re-exported for the insights pages
from ctxviewer.fmt import usd
from ctxviewer.gui.widgets.palette import text_on

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
Index = QModelIndex | QPersistentModelIndex


def fmt_usd(x: float | None) -> str:
    """'$10.23', '$0.0585', '?' when unpriced (``fmt.usd``)."""
    return usd(x)


def fmt_pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def fmt_int(n: int | None) -> str:
    return "-" if n is None else f"{n:,}"


@dataclass(frozen=True)
class Column:
    """A column of an Insights table: header, value, format and sort key."""

    header: str
    value: Callable[[Any], Any]
    fmt: Callable[[Any], str] = lambda v: "" if v is None else str(v)
    numeric: bool = False  # right-aligned, sorts as a number
    tip: Callable[[Any], str | None] | None = None
    sort: Callable[[Any], float] | None = None  # a numeric sort key of the record


class InsightsTableModel(QAbstractTableModel):
    """Rows of core records under fixed columns; reset as a whole by ``set_rows``."""

    def __init__(
        self,
        columns: Sequence[Column],
        parent: QObject | None = None,
        tint: Callable[[Any], QColor | None] | None = None,
    ) -> None:
        super().__init__(parent)
        self.columns = tuple(columns)
        self.rows: tuple[Any, ...] = ()
        self._tint = tint

    def set_rows(self, rows: Sequence[Any]) -> None:
        self.beginResetModel()
        self.rows = tuple(rows)
        self.endResetModel()

    def row(self, index: Index) -> Any:
        return self.rows[index.row()] if index.isValid() else None

    # -- QAbstractTableModel --------------------------------------------------------
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's default
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.columns)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (
            orientation == Qt.Orientation.Horizontal
            and role == Qt.ItemDataRole.DisplayRole
            and 0 <= section < len(self.columns)
        ):
            return self.columns[section].header
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if (
            not index.isValid()
            or not 0 <= index.row() < len(self.rows)
            or not 0 <= index.column() < len(self.columns)
        ):
            return None
        obj, col = self.rows[index.row()], self.columns[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return col.fmt(col.value(obj))
        if role == Qt.ItemDataRole.UserRole:
            return obj
        if role == SORT_ROLE:
            if col.sort is not None:
                return float(col.sort(obj))
            v = col.value(obj)
            if col.numeric:
                return float(v) if v is not None else float("-inf")
            return "" if v is None else str(v)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            h = Qt.AlignmentFlag.AlignRight if col.numeric else Qt.AlignmentFlag.AlignLeft
            return int(h | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and col.tip is not None:
            return col.tip(obj)
        if (
            role in (Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.ForegroundRole)
            and self._tint is not None
        ):
            color = self._tint(obj)
            if color is None:
                return None
            return color if role == Qt.ItemDataRole.BackgroundRole else text_on(color)
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return (
            Qt.ItemFlag.ItemIsEnabled
            | Qt.ItemFlag.ItemIsSelectable
            | Qt.ItemFlag.ItemNeverHasChildren
        )
