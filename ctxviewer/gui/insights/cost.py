"""The "Cost & cache" page: session totals, the cost plot, the budget, the prices.

Left: the totals (cost, cost without caching, saved, hit rate, tokens,
unknown models), cost per model, the budget control and where the prices
came from (with the user's override file: copy its path, open its folder,
reload after editing it; nothing is fetched). Right: ``CostPlot``. A passive
view: ``set_insights``, ``set_budget_report``, ``set_current``; intent
leaves as ``request_selected``, ``budget_changed`` and ``reload_requested``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from ctxviewer.analysis.insights import BudgetReport, Insights, SessionCost, user_prices_path
from ctxviewer.gui.insights.budget import BudgetBox
from ctxviewer.gui.insights.cost_plot import CostPlot
from ctxviewer.gui.insights.model import fmt_pct, fmt_tokens, fmt_usd
from ctxviewer.gui.session.request_model import short_model
from ctxviewer.gui.widgets.theme import replace_widget, theme_changed

TOTALS = (
    ("total", "Cost"),
    ("no_cache", "Without caching"),
    ("saved", "Caching saved"),
    ("hit_rate", "Cache hit rate"),
    ("tokens", "Tokens"),
    ("unknown", "Unpriced models"),
)


def total_texts(cost: SessionCost) -> dict[str, str]:
    """The text of each totals row for ``cost`` (tests compare against it): an unknown
    price reads 'unknown', never $0."""
    priced = cost.total_usd is not None or cost.priced_usd > 0
    of_priced = "" if cost.total_usd is not None else " (of the priced requests)"
    return {
        "total": cost.total_text(),
        "no_cache": fmt_usd(cost.no_cache_usd) + of_priced if priced else "unknown",
        "saved": fmt_usd(cost.saved_usd) + of_priced if priced else "unknown",
        "hit_rate": fmt_pct(cost.hit_rate),
        "tokens": f"{fmt_tokens(cost.prompt_tokens)} prompt "
        f"({fmt_tokens(cost.cache_read_tokens)} read, "
        f"{fmt_tokens(cost.cache_write_tokens)} written), "
        f"{fmt_tokens(sum(r.output_tokens for r in cost.requests))} output",
        "unknown": ", ".join(cost.unknown_models) or "none",
    }


def _label(parent: QWidget) -> QLabel:
    label = QLabel(parent)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class CostPage(QWidget):
    request_selected = Signal(int)
    budget_changed = Signal(object)  # Budget or None
    reload_requested = Signal()  # the user edited the prices file

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # what the plot shows (a theme change builds it anew)
        self._shown_cost: SessionCost | None = None
        self._shown_report: BudgetReport | None = None
        self._shown_index: int | None = None
        self.open_url: Callable[[QUrl], object] = QDesktopServices.openUrl
        side = QWidget(self)
        column = QVBoxLayout(side)
        column.setContentsMargins(6, 6, 6, 6)
        column.addWidget(self._build_totals(side))
        self.budget = BudgetBox(side)
        column.addWidget(self.budget)
        column.addWidget(self._build_prices(side))
        column.addStretch(1)
        scroll = QScrollArea(self)
        scroll.setWidget(side)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setMinimumWidth(300)
        self.plot = CostPlot(self)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(scroll)
        self.splitter.addWidget(self.plot)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)
        self.plot.request_clicked.connect(self.request_selected)
        self.budget.request_selected.connect(self.request_selected)
        self.budget.budget_changed.connect(self.budget_changed)

    def _build_totals(self, parent: QWidget) -> QGroupBox:
        box = QGroupBox("Session", parent)
        form = QFormLayout(box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.totals: dict[str, QLabel] = {}
        for key, text in TOTALS:
            self.totals[key] = _label(box)
            form.addRow(text, self.totals[key])
        self.by_model = _label(box)
        form.addRow(self.by_model)
        return box

    def _build_prices(self, parent: QWidget) -> QGroupBox:
        box = QGroupBox("Prices", parent)
        column = QVBoxLayout(box)
        self.prices_source = _label(box)
        self.prices_path = _label(box)
        self.copy_button = QPushButton("Copy path", box)
        self.reveal_button = QPushButton("Open folder", box)
        self.reload_button = QPushButton("Reload", box)
        self.reload_button.setToolTip("Read the price files again (after editing the override)")
        row = QHBoxLayout()
        for b in (self.copy_button, self.reveal_button, self.reload_button):
            row.addWidget(b)
        column.addWidget(self.prices_source)
        column.addWidget(self.prices_path)
        column.addLayout(row)
        self.copy_button.clicked.connect(self._on_copy_clicked)
        self.reveal_button.clicked.connect(self._on_reveal_clicked)
        self.reload_button.clicked.connect(self.reload_requested)
        self._show_prices(None)
        return box

    # -- setters --------------------------------------------------------------------
    def set_insights(self, ins: Insights | None) -> None:
        cost = ins.cost if ins is not None else None
        texts = total_texts(cost) if cost is not None else {}
        for key, label in self.totals.items():
            label.setText(texts.get(key, "-"))
        self.by_model.setText(
            "<br>".join(
                f"{short_model(m.model)}: {m.requests} req, "
                f"{fmt_usd(m.total_usd) if m.price_key else 'unknown (no price)'}"
                for m in cost.by_model
            )
            if cost is not None
            else ""
        )
        self.by_model.setToolTip(
            "<br>".join(f"{m.model}: {m.source or 'no price'}" for m in cost.by_model)
            if cost is not None
            else ""
        )
        self.plot.set_cost(cost)
        self._shown_cost = cost
        self._show_prices(cost)

    def set_budget_report(self, report: BudgetReport | None) -> None:
        self.budget.set_report(report)
        self.plot.set_budget(report)
        self._shown_report = report

    def set_current(self, index: int | None) -> None:
        self.plot.select_request(index)
        self._shown_index = index

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if hasattr(self, "plot") and theme_changed(event, self.plot.dark):
            old, self.plot = self.plot, CostPlot(self)  # in the new theme's colours
            self.plot.request_clicked.connect(self.request_selected)
            replace_widget(old, self.plot)
            self.plot.set_cost(self._shown_cost)
            self.plot.set_budget(self._shown_report)
            self.plot.select_request(self._shown_index)

    def _show_prices(self, cost: SessionCost | None) -> None:
        path = user_prices_path()
        sources = (
            sorted({m.source.split(" (")[0] for m in cost.by_model if m.source})
            if cost is not None
            else []
        )
        self.prices_source.setText(
            "From the genai-prices catalogue (offline), ctxviewer's table for the models it "
            "lacks, and your file over both"
            + (f". This session: {'; '.join(sources)}" if sources else "")
        )
        merged = cost is not None and cost.prices_user_file is not None
        self.prices_path.setText(
            f"Override file ({'merged' if merged else 'not present'}):<br><tt>{path}</tt><br>"
            'USD per million tokens: {"models": {"name": {"input": .., "output": ..}}}'
        )
        self.prices_path.setToolTip(str(path))

    # -- buttons --------------------------------------------------------------------
    def _on_copy_clicked(self) -> None:
        QGuiApplication.clipboard().setText(str(user_prices_path()))

    def _on_reveal_clicked(self) -> None:
        folder = Path(user_prices_path()).parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            return
        self.open_url(QUrl.fromLocalFile(str(folder)))
