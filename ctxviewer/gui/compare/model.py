"""Read-only Qt models of an estimator ``Comparison`` (docs/estimators.md).

- ``CompareTableModel``: one row per scored request: index, model, role, API
  prompt, then per estimator its estimate and its error in percent (the
  error cell tinted by magnitude). ``UserRole`` returns the core ``Row``,
  ``SORT_ROLE`` a number (missing values sort first).
- ``SummaryModel``: one row per estimator: n, MAPE, bias, worst, missing.
- ``CategoryModel``: the categories of one request, estimators as columns.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from ctxviewer.analysis.breakdown import LABELS
from ctxviewer.analysis.compare.scoring import Comparison, Row, Stats
from ctxviewer.analysis.compare.table import CategoryTable
from ctxviewer.analysis.tokens.counter import CATEGORIES
from ctxviewer.gui.session.request_model import short_model
from ctxviewer.gui.widgets.palette import is_dark, tier_background

SORT_ROLE = Qt.ItemDataRole.UserRole + 2
ESTIMATOR_ROLE = Qt.ItemDataRole.UserRole + 3  # name of the estimator of a column / row
Index = QModelIndex | QPersistentModelIndex
ROOT = QModelIndex()
RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
FIXED = ("#", "Model", "Role", "API prompt")


def pct_text(p: float | None, sign: bool = True) -> str:
    return "–" if p is None else f"{100 * p:+.1f}%" if sign else f"{100 * p:.1f}%"


def error_tier(p: float | None) -> str | None:
    """Colour tier of an error: under 5% safe, 15% warn, 30% auto, else hard."""
    if p is None:
        return None
    a = abs(p)
    return "safe" if a < 0.05 else "warn" if a < 0.15 else "auto" if a < 0.30 else "hard"


class CompareTableModel(QAbstractTableModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.comparison: Comparison | None = None
        self.rows: tuple[Row, ...] = ()
        self.estimators: tuple[str, ...] = ()
        self._dark = False

    def set_comparison(self, c: Comparison | None) -> None:
        self.beginResetModel()
        self.comparison = c
        self.rows = c.rows if c is not None else ()
        self.estimators = c.estimators if c is not None else ()
        self._dark = is_dark()
        self.endResetModel()

    def rowCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(FIXED) + 2 * len(self.estimators)

    def estimator_of(self, column: int) -> str | None:
        """The estimator whose estimate or error is in ``column`` (None for fixed columns)."""
        k = column - len(FIXED)
        return self.estimators[k // 2] if 0 <= k < 2 * len(self.estimators) else None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < self.columnCount():
            return None
        name = self.estimator_of(section)
        is_err = name is not None and (section - len(FIXED)) % 2 == 1
        if role == Qt.ItemDataRole.DisplayRole:
            return FIXED[section] if name is None else (f"{name} err" if is_err else name)
        if role == ESTIMATOR_ROLE:
            return name
        if role == Qt.ItemDataRole.ToolTipRole:
            if name is None:
                return (
                    "Request index",
                    "Model",
                    "Role of the request",
                    "Prompt size the API reported",
                )[section]
            what = "error in percent of the API count" if is_err else "whole-prompt estimate"
            return f"{name}: {what}\nRight-click to use {name} in the whole window"
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        r, col = self.rows[index.row()], index.column()
        name = self.estimator_of(col)
        is_err = name is not None and (col - len(FIXED)) % 2 == 1
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(r, col, name, is_err)
        if role == SORT_ROLE:
            return self._sort(r, col, name, is_err)
        if role == Qt.ItemDataRole.UserRole:
            return r
        if role == ESTIMATOR_ROLE:
            return name
        if role == Qt.ItemDataRole.TextAlignmentRole and col not in (1, 2):
            return RIGHT
        if role == Qt.ItemDataRole.BackgroundRole and is_err:
            tier = error_tier(r.pct(name))  # type: ignore[arg-type]
            return tier_background(tier, self._dark) if tier else None
        if role == Qt.ItemDataRole.ToolTipRole and name is not None:
            err = r.error(name)
            return (
                f"request {r.index} · {name}: estimate {_num(r.estimates.get(name))}, "
                f"API {r.api_prompt_tokens:,}, error "
                f"{'–' if err is None else f'{err:+,}'} ({pct_text(r.pct(name))})"
            )
        return None

    @staticmethod
    def _display(r: Row, col: int, name: str | None, is_err: bool) -> str:
        if name is None:
            return (str(r.index), short_model(r.model), r.role, f"{r.api_prompt_tokens:,}")[col]
        return pct_text(r.pct(name)) if is_err else _num(r.estimates.get(name))

    @staticmethod
    def _sort(r: Row, col: int, name: str | None, is_err: bool) -> Any:
        if name is None:
            return (r.index, r.model or "", r.role, r.api_prompt_tokens)[col]
        v = r.pct(name) if is_err else r.estimates.get(name)
        return float("-inf") if v is None else float(v)


SUMMARY_COLUMNS = ("Estimator", "n", "MAPE", "Bias", "Worst", "Missing")


class SummaryModel(QAbstractTableModel):
    """Per estimator: n, MAPE, bias (mean signed error), worst |error|, rows missing."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.items: list[tuple[str, Stats]] = []
        self.current = ""  # the window's estimator, shown in bold
        self._dark = False

    def set_comparison(self, c: Comparison | None) -> None:
        self.beginResetModel()
        self.items = [(n, c.summary[n]) for n in c.estimators] if c is not None else []
        self._dark = is_dark()
        self.endResetModel()

    def set_current(self, name: str) -> None:
        self.current = name
        if self.items:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self.items) - 1, 0))

    def best(self, among: Iterable[str] | None = None) -> str | None:
        """The lowest MAPE, among the names ``among`` when given."""
        allowed = None if among is None else set(among)
        scored = [
            (s.mape, n)
            for n, s in self.items
            if s.mape is not None and (allowed is None or n in allowed)
        ]
        return min(scored)[1] if scored else None

    def rowCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self.items)

    def columnCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(SUMMARY_COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(SUMMARY_COLUMNS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return SUMMARY_COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return (
                "Estimator (bold: the window's)",
                "Requests scored",
                "Mean absolute error, % of the API count",
                "Mean signed error (+ = over)",
                "Largest absolute error",
                "Requests without an estimate",
            )[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.items):
            return None
        name, s = self.items[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return (
                name,
                str(s.n),
                pct_text(s.mape, False),
                pct_text(s.bias),
                pct_text(s.max_abs_pct, False),
                str(s.missing),
            )[col]
        if role == SORT_ROLE:
            v = (name, s.n, s.mape, s.bias, s.max_abs_pct, s.missing)[col]
            return float("inf") if v is None else v
        if role in (Qt.ItemDataRole.UserRole, ESTIMATOR_ROLE):
            return name if role == ESTIMATOR_ROLE else s
        if role == Qt.ItemDataRole.TextAlignmentRole and col > 0:
            return RIGHT
        if role == Qt.ItemDataRole.BackgroundRole and col == 2:
            tier = error_tier(s.mape)
            return tier_background(tier, self._dark) if tier else None
        if role == Qt.ItemDataRole.FontRole and col == 0 and name == self.current:
            from PySide6.QtGui import QFont

            f = QFont()
            f.setBold(True)
            return f
        return None


class CategoryModel(QAbstractTableModel):
    """One request's categories (rows) per estimator (columns), plus Messages by subtraction."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.table: CategoryTable | None = None
        self.names: list[str] = []

    def set_table(self, t: CategoryTable | None) -> None:
        self.beginResetModel()
        self.table = t
        self.names = list(t.estimates) if t is not None else []
        self.endResetModel()

    def rowCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() or self.table is None else len(CATEGORIES) + 2

    def columnCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() or self.table is None else 1 + len(self.names)

    def _row_label(self, row: int) -> str:
        if row < len(CATEGORIES):
            c = CATEGORIES[row]
            return "Messages (estimate)" if c == "messages" else LABELS[c]
        return "Messages (API − overhead)" if row == len(CATEGORIES) else "Total (estimate)"

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < self.columnCount():
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return "Category" if section == 0 else self.names[section - 1]
        if role == ESTIMATOR_ROLE and section > 0:
            return self.names[section - 1]
        return None

    def value(self, row: int, name: str) -> int | None:
        assert self.table is not None
        cats = self.table.estimates[name]
        if row < len(CATEGORIES):
            return cats.get(CATEGORIES[row])
        if row == len(CATEGORIES):
            return self.table.by_subtraction(name)
        vals = [cats.get(c) for c in CATEGORIES]
        return None if any(v is None for v in vals) else sum(v or 0 for v in vals)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or self.table is None or index.row() >= self.rowCount():
            return None
        row, col = index.row(), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._row_label(row) if col == 0 else _num(self.value(row, self.names[col - 1]))
        if role == Qt.ItemDataRole.TextAlignmentRole and col > 0:
            return RIGHT
        if role == Qt.ItemDataRole.ToolTipRole and row == len(CATEGORIES):
            return "What an agent shows as Messages: the API total minus the estimated overhead"
        if role == Qt.ItemDataRole.ForegroundRole and row == len(CATEGORIES) and col == 0:
            return QColor("gray")
        return None


def _num(v: int | None) -> str:
    return "–" if v is None else f"{v:,}"
