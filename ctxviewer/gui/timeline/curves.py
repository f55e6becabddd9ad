"""The prompt curves and points of the timeline: API count, estimate, tiers,
sub-agents and side calls.

``CurvesLayer`` owns ``api_curve`` (API prompt tokens of main requests where
known), ``estimate_curve`` (the estimator's count of every main request,
dashed), ``tier_scatter`` (main requests coloured by their tier),
``subagent_scatter`` and ``auxiliary_scatter`` (side calls, hidden by default).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from ctxviewer.analysis.thresholds import TIERS
from ctxviewer.analysis.timeline_view.view import TimelineView
from ctxviewer.gui.timeline.style import faint, series_color
from ctxviewer.gui.widgets.palette import tier_color


class CurvesLayer:
    """The series of requests (see the module docstring)."""

    def __init__(self, plot_item: pg.PlotItem, dark: bool) -> None:
        self.estimate_curve = plot_item.plot(
            pen=pg.mkPen(series_color("estimate", dark), width=1.5, style=Qt.PenStyle.DashLine)
        )
        self.api_curve = plot_item.plot(pen=pg.mkPen(series_color("api", dark), width=2))
        self.tier_scatter = pg.ScatterPlotItem(size=6, pen=None)
        self.subagent_scatter = pg.ScatterPlotItem(
            size=7, symbol="d", pen=None, brush=series_color("subagent", dark)
        )
        self.auxiliary_scatter = pg.ScatterPlotItem(
            size=5, pen=None, brush=faint(series_color("auxiliary", dark), 140)
        )
        self.auxiliary_scatter.setVisible(False)
        for item in (self.tier_scatter, self.subagent_scatter, self.auxiliary_scatter):
            plot_item.addItem(item)
        self.tier_brushes = np.array([pg.mkBrush(tier_color(t, dark)) for t in TIERS], dtype=object)
        self.tiers = np.empty(0, dtype=np.int8)  # the codes the points are brushed with
        self._brushed = False  # whether the points have their tier brushes

    def set_view(self, view: TimelineView, old: TimelineView | None) -> None:
        if old is None or view.data is not old.data:
            self.draw_series(view)
        codes = view.tiers
        if len(codes) and not (self._brushed and np.array_equal(codes, self.tiers)):
            self.tier_scatter.setBrush(self.tier_brushes[codes])  # per point: only on change
        self.tiers, self._brushed = codes, True

    def draw_series(self, view: TimelineView) -> None:
        d = view.data
        known = ~np.isnan(d.api)
        self.api_curve.setData(d.main.x[known], d.api[known])
        self.estimate_curve.setData(d.main.x, d.estimate)
        self.tier_scatter.setData(d.main.x, d.main.y)
        self._brushed = False  # new spots: brushed by their tiers
        self.subagent_scatter.setData(d.subagent.x, d.subagent.y)
        self.auxiliary_scatter.setData(d.auxiliary.x, d.auxiliary.y)

    def show_subagents(self, show: bool) -> None:
        self.subagent_scatter.setVisible(show)

    def show_auxiliary(self, show: bool) -> None:
        self.auxiliary_scatter.setVisible(show)
