"""Cost per request (stacked bars) above the cumulative cost of the session.

``CostPlot`` is a thin ``GraphicsLayoutWidget``: ``set_cost`` takes the
core ``SessionCost``; ``set_budget`` a ``BudgetReport`` (or None). Items are
public so tests read data, not pixels:

- ``bars``: one ``BarGraphItem`` per waterfall step (``STEPS``), stacked in
  that order; x is the request index, ``opts["y0"]``/``opts["height"]`` the band;
- ``cumulative_curve``: the running total (``SessionCost.cumulative_usd``);
- ``budget_lines``: horizontal warn / limit lines on the cumulative plot
  (session budgets in USD) and ``budget_marks`` vertical lines at crossings;
- ``selection_lines``: the selected request in both plots;
- ``note``: what the plots leave out (the requests of models without a price:
  their cost is unknown, not $0), shown as the bar plot's title.

A click on the bar plot emits ``request_clicked`` with the nearest request.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtWidgets import QWidget

from ctxviewer.analysis.insights import BudgetReport, SessionCost
from ctxviewer.gui.timeline.style import faint, label_fill, series_color
from ctxviewer.gui.widgets.palette import is_dark, tier_color
from ctxviewer.gui.widgets.plot_paint import paint_cheaply

STEPS = ("uncached input", "cache write", "cache read", "output")
SHORT_STEPS = ("uncached", "write", "read", "output")  # for a narrow plot's legend
_STEP_COLOR = {
    "uncached input": "uncached",
    "cache write": "cache_write",
    "cache read": "cache_read",
    "output": "output",
}


def left_out_text(cost: SessionCost | None) -> str:
    """What the plots leave out: requests whose model has no price."""
    if cost is None or not cost.unpriced_requests:
        return ""
    n = len(cost.unpriced_requests)
    return (
        f"{n} request{'' if n == 1 else 's'} left out: no price for "
        f"{', '.join(cost.unknown_models)} (cost unknown)"
    )


class UsdAxis(pg.AxisItem):
    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        digits = 0 if spacing >= 1 else 2 if spacing >= 0.01 else 4
        return [f"${v:,.{digits}f}" for v in values]


BARS_WITH_GAPS = 150  # more requests than this: bars touch


class CostPlot(pg.GraphicsLayoutWidget):
    request_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None, *, dark: bool | None = None) -> None:
        self.dark = is_dark() if dark is None else dark
        super().__init__(parent)
        paint_cheaply(self)  # repaints cost a tenth (gui/widgets/plot_paint.py)
        self.setBackground(series_color("background", self.dark))
        self.x = np.empty(0)
        self._bar_top = 1.0  # the highest bar, in USD (the y range leaves room above it)
        self.cost: SessionCost | None = None
        self.note = ""
        fg = series_color("foreground", self.dark)
        self.bar_plot = self.addPlot(row=0, col=0, axisItems={"left": UsdAxis("left")})
        self.cumulative_plot = self.addPlot(row=1, col=0, axisItems={"left": UsdAxis("left")})
        self.ci.layout.setRowStretchFactor(0, 3)
        self.ci.layout.setRowStretchFactor(1, 2)
        for p, label in ((self.bar_plot, "USD per request"), (self.cumulative_plot, "USD total")):
            p.hideButtons()
            p.setMenuEnabled(False)
            p.showGrid(x=True, y=True, alpha=0.12)
            p.setLabel("left", label)
            p.getAxis("left").setWidth(64)
            p.getAxis("left").enableAutoSIPrefix(False)
            for name in ("left", "bottom"):
                p.getAxis(name).setPen(fg)
                p.getAxis(name).setTextPen(fg)
            p.vb.setMouseEnabled(x=True, y=False)
        self.cumulative_plot.setXLink(self.bar_plot)
        self.cumulative_plot.setLabel("bottom", "request #")
        self.legend = self.bar_plot.addLegend(
            offset=(8, 2),
            colCount=2,
            labelTextSize="8pt",
            labelTextColor=fg,
            brush=faint(series_color("background", self.dark), 215),
        )
        self.bars: dict[str, pg.BarGraphItem] = {}
        for step in STEPS:
            color = series_color(_STEP_COLOR[step], self.dark)
            item = pg.BarGraphItem(x=[], height=[], width=0.8, pen=None, brush=color)
            self.bar_plot.addItem(item)
            self.legend.addItem(item, step)
            self.bars[step] = item
        self.bar_plot.vb.sigResized.connect(self._fit_legend)
        self.cumulative_curve = self.cumulative_plot.plot(
            pen=pg.mkPen(series_color("api", self.dark), width=2)
        )
        sel = pg.mkPen(series_color("selection", self.dark), width=1, style=Qt.PenStyle.DotLine)
        self.selection_lines = [
            pg.InfiniteLine(angle=90, movable=False, pen=sel)
            for _ in (self.bar_plot, self.cumulative_plot)
        ]
        for p, line in zip(
            (self.bar_plot, self.cumulative_plot), self.selection_lines, strict=True
        ):
            line.setVisible(False)
            p.addItem(line, ignoreBounds=True)
        self.budget_lines: dict[str, pg.InfiniteLine] = {}
        self.budget_marks: list[pg.InfiniteLine] = []
        self._marks_in: list[tuple[pg.PlotItem, pg.InfiniteLine]] = []
        for kind in ("warn", "limit"):
            color = tier_color("warn" if kind == "warn" else "hard", self.dark)
            line = pg.InfiniteLine(
                angle=0,
                movable=False,
                label=kind,
                pen=pg.mkPen(color, width=1.2, style=Qt.PenStyle.DashLine),
                labelOpts={
                    "position": 0.02 if kind == "warn" else 0.3,
                    "color": color,
                    "anchors": [(0, 1), (0, 1)],
                    "fill": pg.mkBrush(label_fill(self.dark)),
                },
            )
            line.setVisible(False)
            self.cumulative_plot.addItem(line, ignoreBounds=True)
            self.budget_lines[kind] = line
        self.scene().sigMouseClicked.connect(self._on_scene_clicked)

    # -- setters --------------------------------------------------------------------
    def set_cost(self, cost: SessionCost | None) -> None:
        self.cost = cost
        reqs = (
            tuple(r for r in cost.requests if r.total_usd is not None) if cost is not None else ()
        )
        self.note = left_out_text(cost)
        self.bar_plot.setTitle(self.note or None, size="9pt")
        self.x = np.array([r.index for r in reqs], dtype=float)
        bottom = np.zeros(len(reqs))
        # gaps between bars only while a bar is several pixels wide: hundreds of 0.8-wide
        # bars of under a pixel each left blank bands where the data was not zero
        width = 0.8 if len(reqs) <= BARS_WITH_GAPS else 1.0
        for k, step in enumerate(STEPS):
            h = np.array(
                [r.waterfall()[k][1] if r.total_usd is not None else 0.0 for r in reqs], dtype=float
            )
            self.bars[step].setOpts(x=self.x, y0=bottom.copy(), height=h, width=width)
            bottom = bottom + h
        cum = np.cumsum([r.total_usd or 0.0 for r in reqs]) if reqs else np.empty(0)
        self.cumulative_curve.setData(self.x, cum)
        top = float(bottom.max()) if len(bottom) else 1.0
        total = float(cum[-1]) if len(cum) else 1.0
        x0, x1 = (float(self.x.min()) - 1, float(self.x.max()) + 1) if len(self.x) else (0, 1)
        self.bar_plot.setXRange(x0, x1, padding=0)
        self._bar_top = max(top, 1e-6)
        self._fit_legend()  # sets the bars' y range, with room for the legend
        self.cumulative_plot.setYRange(0, max(total, 1e-6) * 1.05, padding=0)

    def _fit_legend(self, *_: object) -> None:
        """Two columns where they fit the plot's width, else one, else one of short
        names (a narrow plot cut 'cache read' to 'cache rea')."""
        room = self.bar_plot.vb.width() - 16
        for columns, names in ((2, STEPS), (1, STEPS), (1, SHORT_STEPS)):
            if [label.text for _sample, label in self.legend.items] != list(names):
                self.legend.clear()  # refilled: a label set shorter keeps its width
                for step, name in zip(STEPS, names, strict=True):
                    self.legend.addItem(self.bars[step], name)
            self.legend.setColumnCount(columns)
            if self.legend.boundingRect().width() <= room:
                break
        # head room above the bars for the legend: the share of the plot's height it takes
        height = self.bar_plot.vb.height()
        share = (self.legend.boundingRect().height() + 16) / height if height > 0 else 0.25
        self.bar_plot.setYRange(0, self._bar_top / (1 - min(max(share, 0.2), 0.6)), padding=0)

    def set_budget(self, report: BudgetReport | None) -> None:
        """Lines at the budget's warn / limit (session USD budgets) and at every crossing."""
        for plot, line in self._marks_in:
            plot.removeItem(line)
        self.budget_marks, self._marks_in = [], []
        b = report.budget if report is not None else None
        flat = b is not None and b.unit == "usd" and b.scope == "session"
        for kind, line in self.budget_lines.items():
            line.setVisible(flat)
            if flat and b is not None:
                value = b.threshold(kind)
                line.setValue(value)
                line.label.setFormat(f"{'warn' if kind == 'warn' else 'limit'} ${value:,.2f}")
        if flat and b is not None and self.cost is not None:
            top = max(b.limit, self.cost.priced_usd) * 1.08
            self.cumulative_plot.setYRange(0, top, padding=0)
        for c in report.crossings if report is not None else ():
            color = tier_color("warn" if c.kind == "warn" else "hard", self.dark)
            for p in (self.bar_plot, self.cumulative_plot):
                line = pg.InfiniteLine(
                    pos=c.request,
                    angle=90,
                    movable=False,
                    pen=pg.mkPen(color, width=1.2, style=Qt.PenStyle.DashDotLine),
                )
                p.addItem(line, ignoreBounds=True)
                self.budget_marks.append(line)
                self._marks_in.append((p, line))

    def select_request(self, index: int | None) -> None:
        for line in self.selection_lines:
            line.setVisible(index is not None)
            if index is not None:
                line.setValue(index)

    # -- events ---------------------------------------------------------------------
    def _on_scene_clicked(self, event: object) -> None:
        pos = event.scenePos()  # type: ignore[attr-defined]
        if event.button() != Qt.MouseButton.LeftButton or not len(self.x):  # type: ignore[attr-defined]
            return
        for p in (self.bar_plot, self.cumulative_plot):
            if p.vb.sceneBoundingRect().contains(pos):
                x = p.vb.mapSceneToView(QPointF(pos)).x()
                i = int(np.argmin(np.abs(self.x - x)))
                if abs(self.x[i] - x) <= 0.6:
                    self.request_clicked.emit(int(self.x[i]))
                return
