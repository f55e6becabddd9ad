"""The budget control: a spending limit to evaluate against the session.

A checkable group box (unchecked: no budget) with the limit, its unit (USD
or tokens), its scope (the whole session, or each task = user prompt), the
warning fraction and whether it is hard. It emits ``budget_changed`` with a
core ``Budget`` (or None) and lists the crossings of the ``BudgetReport``
it is given; picking a crossing emits ``request_selected``.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QWidget,
)

from ctxviewer.analysis.insights import Budget, BudgetCrossing, BudgetReport
from ctxviewer.gui.insights.model import fmt_int

DEFAULTS = {"usd": 5.0, "tokens": 2_000_000.0}


def amount(value: float, unit: str) -> str:
    return f"${value:,.2f}" if unit == "usd" else f"{fmt_int(int(value))} tokens"


def crossing_text(c: BudgetCrossing, b: Budget) -> str:
    task = f"task {c.task + 1}, " if b.scope == "task" else ""
    what = "warning" if c.kind == "warn" else "limit"
    return (
        f"#{c.request}: {task}{what} {amount(c.threshold, b.unit)} "
        f"({amount(c.spent, b.unit)} spent)"
    )


class BudgetBox(QGroupBox):
    budget_changed = Signal(object)  # Budget, or None when switched off
    request_selected = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Budget", parent)
        self.setCheckable(True)
        self.setChecked(False)
        self.limit = QDoubleSpinBox(self)
        self.unit = QComboBox(self)
        self.unit.addItem("USD", "usd")
        self.unit.addItem("tokens", "tokens")
        self.scope = QComboBox(self)
        self.scope.addItem("whole session", "session")
        self.scope.addItem("per task (user prompt)", "task")
        self.warn = QDoubleSpinBox(self)
        self.warn.setRange(0.05, 1.0)
        self.warn.setSingleStep(0.05)
        self.warn.setDecimals(2)
        self.warn.setValue(0.8)
        self.warn.setSuffix(" of the limit")
        self.hard = QCheckBox("hard (refuse requests past the limit)", self)
        self._set_unit_range("usd")
        self.limit.setValue(DEFAULTS["usd"])
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.crossings = QListWidget(self)
        self.crossings.setMaximumHeight(90)
        self.crossings.setWordWrap(True)
        self.crossings.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        row = QHBoxLayout()
        row.addWidget(self.limit, 1)
        row.addWidget(self.unit)
        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Limit", row)
        form.addRow("Scope", self.scope)
        form.addRow("Warn at", self.warn)
        form.addRow("", self.hard)
        form.addRow(self.status)
        form.addRow(self.crossings)
        self.toggled.connect(self._emit)
        self.limit.valueChanged.connect(self._emit)
        self.unit.currentIndexChanged.connect(self._on_unit_changed)
        self.scope.currentIndexChanged.connect(self._emit)
        self.warn.valueChanged.connect(self._emit)
        self.hard.toggled.connect(self._emit)
        self.crossings.itemClicked.connect(self._on_crossing_picked)
        self.crossings.currentItemChanged.connect(self._on_crossing_picked)

    # -- the budget ---------------------------------------------------------------
    def budget(self) -> Budget | None:
        if not self.isChecked() or self.limit.value() <= 0:
            return None
        return self.values()

    def values(self) -> Budget:
        """What the fields say, switched on or not (kept for the next start)."""
        return Budget(
            self.limit.value(),
            self.unit.currentData(),
            self.scope.currentData(),
            self.warn.value(),
            self.hard.isChecked(),
        )

    def set_budget(self, b: Budget | None) -> None:
        """Show ``b`` (None: switch the budget off); emits ``budget_changed`` once."""
        widgets = (self, self.limit, self.unit, self.scope, self.warn, self.hard)
        for w in widgets:
            w.blockSignals(True)
        self.setChecked(b is not None)
        if b is not None:
            self.unit.setCurrentIndex(self.unit.findData(b.unit))
            self._set_unit_range(b.unit)
            self.limit.setValue(b.limit)
            self.scope.setCurrentIndex(self.scope.findData(b.scope))
            self.warn.setValue(b.warn_fraction)
            self.hard.setChecked(b.hard)
        for w in widgets:
            w.blockSignals(False)
        self._emit()

    def _set_unit_range(self, unit: str) -> None:
        if unit == "usd":
            self.limit.setDecimals(2)
            self.limit.setRange(0.01, 1_000_000.0)
            self.limit.setSingleStep(1.0)
            self.limit.setPrefix("$")
        else:
            self.limit.setDecimals(0)
            self.limit.setRange(1_000, 1e10)
            self.limit.setSingleStep(100_000)
            self.limit.setPrefix("")

    def _on_unit_changed(self) -> None:
        unit = self.unit.currentData()
        self.limit.blockSignals(True)
        self._set_unit_range(unit)
        self.limit.setValue(DEFAULTS[unit])
        self.limit.blockSignals(False)
        self._emit()

    def _emit(self) -> None:
        self.budget_changed.emit(self.budget())

    # -- the report -----------------------------------------------------------------
    def set_report(self, report: BudgetReport | None) -> None:
        self.crossings.blockSignals(True)
        self.crossings.clear()
        self.crossings.blockSignals(False)
        if report is None:
            self.status.setText("")
            return
        b = report.budget
        where = f"largest task of {report.tasks}" if b.scope == "task" else "session"
        text = f"Spent {amount(report.spent, b.unit)} ({where}) of {amount(b.limit, b.unit)}"
        if report.exceeded:
            text += " — <b>exceeded</b>"
        if b.hard and report.stopped_at is not None:
            text += (
                f"; a hard budget stops at request {report.stopped_at} "
                f"({report.skipped_requests} later requests refused)"
            )
        self.status.setText(text)
        for c in report.crossings:
            item = QListWidgetItem(crossing_text(c, b))
            item.setData(Qt.ItemDataRole.UserRole, c.request)
            self.crossings.addItem(item)
        if not report.crossings:
            self.crossings.addItem("no crossing")

    def _on_crossing_picked(self, item: QListWidgetItem | None, *_: object) -> None:
        request = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        if request is not None:
            self.request_selected.emit(int(request))
