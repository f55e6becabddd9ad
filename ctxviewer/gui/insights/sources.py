"""The "Sources" page: what cost the most over the whole session, source by source.

Left, ``SourcesPlot``: the costliest sources as ranked bars. Right, every source
in a table (a tool's largest single results follow it). A passive view:
``set_insights``; picking a bar or a row emits ``requests_selected`` with the
requests that carried that source (the window selects them in its request
list and shows the first).
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import QSplitter, QVBoxLayout, QWidget

from ctxviewer.analysis.insights import Insights, Source
from ctxviewer.fmt import plural
from ctxviewer.gui.insights.model import Column, fmt_int, fmt_tokens, fmt_usd
from ctxviewer.gui.insights.sources_plot import SourcesPlot
from ctxviewer.gui.insights.table import InsightsTable


def _cost(x: float | None) -> str:
    return "unknown" if x is None else fmt_usd(x)


COLUMNS = (
    Column(
        "cost",
        lambda s: s.cost_usd,
        _cost,
        numeric=True,
        sort=lambda s: s.cost_usd if s.cost_usd is not None else -1.0,
    ),
    Column("tokens x requests", lambda s: s.token_requests, fmt_int, numeric=True),
    Column(
        "tokens",
        lambda s: s.tokens,
        fmt_int,
        numeric=True,
        tip=lambda s: "its largest size in one request",
    ),
    Column("requests", lambda s: len(s.requests), fmt_int, numeric=True),
    Column("kind", lambda s: s.kind.replace("_", " ")),
    Column(
        "source",
        lambda s: ("    " if s.kind == "tool_result" else "") + s.name,
        tip=lambda s: s.name,
    ),
)


def describe(s: Source) -> str:
    first = f", first at request {s.requests[0]}" if s.requests else ""
    return (
        f"<b>{s.kind.replace('_', ' ')}: {s.name}</b> — up to {fmt_tokens(s.tokens)} "
        f"tokens, carried by {plural(len(s.requests), 'request')}{first}: "
        f"{fmt_tokens(s.token_requests)} tokens x requests, {_cost(s.cost_usd)}"
    )


class SourcesPage(QWidget):
    request_selected = Signal(int)  # the page protocol of the Insights tab (unused here)
    requests_selected = Signal(object)  # tuple of request indices

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = SourcesPlot(self)
        self.table = InsightsTable(COLUMNS, lambda _s: None, self, stretch=5, describe=describe)
        self.table.set_note(
            "Each request's prompt is split into its sources by the "
            "estimator and scaled to the API's count, so the sources add up "
            "to the prompts sent. Cost: at each request's prices, the cached "
            "prefix at the cache-read price, what is new at the write or input "
            "price. Pick one to select the requests that carried it."
        )
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(self.plot)
        self.splitter.addWidget(self.table)
        self.plot.setMinimumWidth(460)  # the labels take 220 of it
        self.table.setMinimumWidth(360)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([600, 600])
        self.splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)
        self.plot.source_clicked.connect(self._on_plot_source_clicked)
        self.table.view.clicked.connect(self._on_table_picked)
        self.table.view.selectionModel().currentRowChanged.connect(self._on_table_picked)

    def set_insights(self, ins: Insights | None) -> None:
        src = ins.sources if ins is not None else None
        rows: list[Source] = []
        for s in src.sources if src is not None else ():
            rows.append(s)
            rows += s.largest
        self.table.set_rows(rows)
        self.plot.set_sources(src)
        if src is None:
            self.table.set_summary("")
            return
        self.table.set_summary(
            f"<b>{plural(len(src.sources), 'source')}</b> over "
            f"{plural(src.requests, 'request')}: {fmt_tokens(src.token_requests)} tokens x "
            f"requests, the prompts sent ({fmt_tokens(src.prompt_tokens)})"
        )

    def pick(self, source: Source) -> None:
        """Mark ``source`` and select the requests that carried it."""
        self.plot.select(source)
        if source.requests:
            self.requests_selected.emit(source.requests)

    def _on_plot_source_clicked(self, source: Source) -> None:
        for row in range(self.table.proxy.rowCount()):
            if self.table.record_at(row) is source:
                self.table.view.selectRow(row)  # the table's pick follows
                return
        self.pick(source)

    def _on_table_picked(self, index: QModelIndex, _previous: object = None) -> None:
        if index.isValid():
            self.pick(index.data(Qt.ItemDataRole.UserRole))
