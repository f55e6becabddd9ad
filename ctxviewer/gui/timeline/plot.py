"""The timeline: prompt tokens per request, thresholds, compactions, what-if.

``TimelinePlot`` is a thin ``PlotWidget``: ``set_timeline`` takes the core
result (a list of ``Point`` and the ``Thresholds``), every plot item is a
public attribute so tests read ``getData()``/``value()`` instead of pixels,
and user intent leaves as signals (``request_clicked``). The arrays come from
``data``; colours from ``widgets.palette`` and ``style``.

Items (x is the request index, or epoch seconds with ``x_mode="time"``):

- ``api_curve``: API prompt tokens of main requests where known;
- ``estimate_curve``: the estimator's count of every main request (dashed);
- ``tier_scatter``: main requests, coloured by tier; ``tier_codes`` indexes
  ``TIERS`` per main point;
- ``subagent_scatter``/``auxiliary_scatter``: sub-agent and side calls
  (``set_show_subagents``, ``set_show_auxiliary``; side calls hidden by default);
- ``threshold_lines``: ``warn``/``auto``/``hard``/``effective``/``window``
  (and ``target``, shown when the policy has one), labelled with their value;
- ``event_lines``: real compactions (before -> after tokens) and overflows,
  half a step before the request that follows them;
- ``cache_areas``: stacked cache read / cache write / uncached (``set_cache_view``);
  each item's data is the *top edge* of its band (cumulative); they live in
  ``cache_box``, a view linked to the main one and drawn under ``output_view``,
  so the output bars stand in front of the bands and the curves in front of both;
- ``output_curve`` in ``output_view``, a ViewBox on the right axis: one bar per
  main request (``getData()`` -> x, output tokens), or one per pixel column
  (its largest value) when requests are denser than pixels;
- ``whatif_markers``/``whatif_curve``/``whatif_label``: the core what-if replay
  (``whatif``) for the current thresholds;
- ``selection_marker`` (``select_request``) and ``hover_label``;
- ``budget_lines``: vertical markers where a spending budget's warning or
  limit was crossed (``set_budget_marks``; kept across redraws).

Mixed in: ``pick.PickingMixin`` (hover, clicks), ``marks.MarksMixin``
(event, budget and what-if markers) and ``toggles.TogglesMixin`` (menu
actions, show/hide setters).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QGraphicsItem, QWidget

from ctxviewer.analysis.report import Analysis
from ctxviewer.analysis.thresholds import TIERS, Thresholds
from ctxviewer.analysis.timeline import Point
from ctxviewer.analysis.whatif import WhatIf, request_events
from ctxviewer.gui.timeline import data as td
from ctxviewer.gui.timeline import labels as tl
from ctxviewer.gui.timeline.legend import TimelineLegend
from ctxviewer.gui.timeline.marks import MarksMixin
from ctxviewer.gui.timeline.pick import PickingMixin
from ctxviewer.gui.timeline.style import (
    Bars,
    TokenAxis,
    blend,
    faint,
    label_fill,
    series_color,
)
from ctxviewer.gui.timeline.toggles import TogglesMixin
from ctxviewer.gui.widgets.palette import is_dark, tier_color
from ctxviewer.gui.widgets.plot_paint import paint_cheaply
from ctxviewer.model import Event, Session

CACHE_KEYS = ("cache_read", "cache_write", "uncached")  # bottom band first
LABEL_ROOM_PX = 26  # above the highest line, under the legend: that line's label


class TimelinePlot(PickingMixin, MarksMixin, TogglesMixin, pg.PlotWidget):
    """Prompt tokens per request over time, with the policy's thresholds."""

    request_clicked = Signal(int)  # request index of the clicked point
    request_hovered = Signal(int)  # request index under the pointer, -1 when none

    def __init__(self, parent: QWidget | None = None, *, dark: bool | None = None) -> None:
        self.dark = is_dark() if dark is None else dark
        super().__init__(parent, background=series_color("background", self.dark),
                         axisItems={"left": TokenAxis("left"), "right": TokenAxis("right")})
        paint_cheaply(self)  # repaints cost a tenth (gui/widgets/plot_paint.py)
        self.points: list[Point] = []
        self.thresholds: Thresholds | None = None
        self.events: list[tuple[int, Event]] | None = None
        self.data: td.TimelineData = td.build([])
        self.x_mode = "index"
        self.tier_codes = np.empty(0, dtype=np.int8)
        self.marks: list[td.EventMark] = []
        self.budget_marks: list[tuple[int, str, str]] = []
        self.budget_lines: list[pg.InfiniteLine] = []
        self.whatif: WhatIf | None = None
        self.selected_index: int | None = None
        self.hovered_index = -1
        self.show_subagents, self.show_auxiliary = True, False
        self.cache_view, self.show_output, self.show_whatif = False, True, True
        self._auto_view = True
        self._source: tuple[Session, str, int] | None = None  # what set_analysis showed
        self._output_xy: tuple[np.ndarray, np.ndarray] = (np.empty(0), np.empty(0))
        self._brushed = False
        self._tier_brushes = np.array([pg.mkBrush(tier_color(t, self.dark)) for t in TIERS],
                                      dtype=object)
        self._setup_plot()
        self._setup_items()
        self._setup_menu()

    # -- construction -------------------------------------------------------------
    def _setup_plot(self) -> None:
        pi = self.getPlotItem()
        pi.setDownsampling(auto=True, mode="peak")
        pi.setClipToView(True)
        pi.hideButtons()
        pi.vb.disableAutoRange()
        self._style_axes()
        pi.setLabel("left", "prompt tokens")
        pi.showAxis("right")
        pi.setLabel("right", "output tokens")
        self.output_view = pg.ViewBox(enableMenu=False)
        self.output_view.setMouseEnabled(x=False, y=False)
        # under the main view (mouse and paint go to it), over the grid (gui/widgets/plot_paint.py)
        self.output_view.setParentItem(pi)
        self.output_view.setFlag(QGraphicsItem.GraphicsItemFlag.ItemNegativeZStacksBehindParent)
        self.output_view.setZValue(-0.5)
        pi.getAxis("right").linkToView(self.output_view)
        self.output_view.setXLink(pi.vb)
        # the cache bands under the output bars: a view of their own, moved with the main one
        self.cache_box = pg.ViewBox(enableMenu=False)
        self.cache_box.setMouseEnabled(x=False, y=False)
        self.cache_box.setParentItem(pi)
        self.cache_box.setFlag(QGraphicsItem.GraphicsItemFlag.ItemNegativeZStacksBehindParent)
        self.cache_box.setZValue(-0.7)
        self.cache_box.setXLink(pi.vb)
        self.cache_box.setYLink(pi.vb)
        pi.vb.sigResized.connect(self._on_view_resized)
        pi.vb.sigRangeChanged.connect(self._on_view_range_changed)
        pi.vb.sigRangeChangedManually.connect(self._on_view_changed_manually)
        pi.scene().sigMouseMoved.connect(self._on_scene_mouse_moved)
        pi.scene().sigMouseClicked.connect(self._on_scene_mouse_clicked)
        self.legend = pi.addLegend(offset=(8, 4), colCount=6, labelTextSize="8pt",
                                   labelTextColor=series_color("foreground", self.dark),
                                   brush=faint(series_color("background", self.dark), 210))
        self.legend_layout = TimelineLegend(self.legend, pi.vb)
        self.whatif_label = pi.titleLabel
        self._set_bottom_axis("index")

    def _style_axes(self) -> None:
        fg = series_color("foreground", self.dark)
        for name in ("left", "right", "bottom"):
            axis = self.getPlotItem().getAxis(name)
            axis.setPen(fg)
            axis.setTextPen(fg)
        self.getPlotItem().showGrid(x=True, y=True, alpha=0.12)

    def _setup_items(self) -> None:
        pi, dark = self.getPlotItem(), self.dark
        self.cache_areas: dict[str, pg.PlotDataItem] = {}
        for z, key in enumerate(reversed(CACHE_KEYS)):  # widest band behind
            item = pg.PlotDataItem(pen=None, fillLevel=0, brush=series_color(key, dark))
            item.setZValue(-10 + z)
            item.setVisible(False)
            self.cache_box.addItem(item)
            self.cache_areas[key] = item
        self.estimate_curve = pi.plot(pen=pg.mkPen(series_color("estimate", dark), width=1.5,
                                                   style=Qt.PenStyle.DashLine))
        self.api_curve = pi.plot(pen=pg.mkPen(series_color("api", dark), width=2))
        self.tier_scatter = pg.ScatterPlotItem(size=6, pen=None)
        self.subagent_scatter = pg.ScatterPlotItem(
            size=7, symbol="d", pen=None, brush=series_color("subagent", dark))
        self.auxiliary_scatter = pg.ScatterPlotItem(
            size=5, pen=None, brush=faint(series_color("auxiliary", dark), 140))
        self.auxiliary_scatter.setVisible(False)
        self.whatif_curve = pg.PlotDataItem(
            pen=pg.mkPen(series_color("whatif", dark), width=1.3, style=Qt.PenStyle.DashLine),
            connect="finite")
        self.whatif_markers = pg.ScatterPlotItem(
            size=13, symbol="t", pen=pg.mkPen(series_color("background", dark)),
            brush=series_color("whatif", dark))
        # where the agent's own policy predicts its compactions, along the real curve
        self.predicted_markers = pg.ScatterPlotItem(
            size=12, symbol="x", pen=pg.mkPen(series_color("foreground", dark), width=1.2),
            brush=series_color("foreground", dark))
        self.predicted: tuple[int, ...] = ()
        self.attribution: list | None = None  # Analysis.attribution, for the hover readout
        self.selection_marker = pg.ScatterPlotItem(
            size=17, symbol="o", brush=None, pen=pg.mkPen(series_color("selection", dark), width=2))
        self.selection_marker.setVisible(False)
        for item in (self.tier_scatter, self.subagent_scatter, self.auxiliary_scatter,
                     self.whatif_curve, self.whatif_markers, self.predicted_markers,
                     self.selection_marker):
            pi.addItem(item)
        self.whatif_markers.setZValue(5)
        self.predicted_markers.setZValue(5)
        self.selection_marker.setZValue(6)
        # one bar per request: output is per call, not a flow
        # faint over the background; full strength over the cache bands (set_cache_view)
        self.output_brushes = (blend(series_color("output", dark),
                                     series_color("background", dark), 150),
                               pg.mkBrush(series_color("output", dark)))
        self.output_curve = Bars(x=[], height=[], width=0.6, pen=None,
                                 brush=self.output_brushes[0])
        self.output_view.addItem(self.output_curve)
        self.threshold_lines: dict[str, pg.InfiniteLine] = tl.threshold_lines(pi, dark)
        self.event_lines: list[pg.InfiniteLine] = []
        self.hover_label = pg.TextItem(
            "", color=series_color("foreground", dark), fill=label_fill(dark),
            border=pg.mkPen(series_color("foreground", dark)))
        self.hover_label.setZValue(20)
        self.hover_label.setVisible(False)
        pi.addItem(self.hover_label, ignoreBounds=True)

    def _update_legend(self) -> None:
        """Top left, naming only what is drawn: one row, or as few as fit the view."""
        d, w = self.data, self.whatif
        entries = [
            (self.api_curve, "API prompt tokens", bool((~np.isnan(d.api)).any())),
            (self.estimate_curve, "estimate", len(d.main) > 0),
            (self.subagent_scatter, "sub-agents", self.show_subagents and len(d.subagent) > 0),
            (self.auxiliary_scatter, "side calls", self.show_auxiliary and len(d.auxiliary) > 0),
            (self.whatif_markers, "what-if compaction", self.show_whatif and bool(w and w.count)),
            (self.whatif_curve, "what-if tokens", self.show_whatif and bool(w and w.count)),
            (self.predicted_markers, "predicted compaction", bool(self.predicted)),
            (self.cache_areas["cache_read"], "cache read", self.cache_view),
            (self.cache_areas["cache_write"], "cache write", self.cache_view),
            (self.cache_areas["uncached"], "uncached", self.cache_view),
            (self.output_curve, "output (right axis)",
             self.show_output and bool((~np.isnan(d.output)).any())),
        ]
        self.legend_layout.show(entries)

    # -- the setters --------------------------------------------------------------
    def set_timeline(self, points: Sequence[Point], thresholds: Thresholds,
                     events: Iterable[tuple[int, Event]] | None = None, *,
                     x_mode: str | None = None) -> None:
        """Show ``points`` (``Analysis.timeline``) against ``thresholds``.

        ``events`` is optional: ``(request index, Event)`` pairs as returned by
        ``whatif.request_events(session)``. With them, compaction markers carry
        the log's own before/after counts and times; without them, markers come
        from each point's ``events`` and read before/after off the curve.
        """
        if x_mode is not None:
            if x_mode not in td.X_MODES:
                raise ValueError(f"x_mode must be one of {td.X_MODES}, not {x_mode!r}")
            self.x_mode = x_mode
        self.points = list(points)
        self.events = list(events) if events is not None else None
        self._source = None
        self.data = td.build(self.points, self.x_mode)
        self._set_bottom_axis(self.data.x_mode)
        self._draw_series()
        self._draw_events()
        self.set_budget_marks(self.budget_marks)
        self.set_thresholds(thresholds, _rescale=False)
        self.set_predicted([i for i in self.predicted if i < len(self.points)])
        self._refresh_selection()
        self.reset_view()

    def set_analysis(self, analysis: Analysis) -> None:
        """Convenience for the main window: the same session analysed with another
        policy or window only moves the lines; anything else redraws everything."""
        s = analysis.session
        key = (analysis.estimator_name, len(s.requests))  # a followed file grows
        if self._source is not None and self._source[0] is s and self._source[1:] == key:
            self.set_thresholds(analysis.thresholds)
        else:
            self.set_timeline(analysis.timeline, analysis.thresholds, request_events(s))
            self._source = (s, *key)
        self.set_predicted(analysis.compactions.predicted)
        self.attribution = analysis.attribution

    def set_thresholds(self, thresholds: Thresholds, *, _rescale: bool = True) -> None:
        """Move the threshold lines, recolour tiers and replay the what-if (no rebuild)."""
        self.thresholds = thresholds
        tl.apply_thresholds(self.threshold_lines, thresholds)
        codes = td.tier_codes(self.data.main.y, thresholds)
        if len(codes) and not (self._brushed and np.array_equal(codes, self.tier_codes)):
            self.tier_scatter.setBrush(self._tier_brushes[codes])  # per-point: only on change
        self.tier_codes, self._brushed = codes, True
        self._draw_whatif()
        self._update_legend()
        if _rescale and self._auto_view:
            self.reset_view()
        self._layout_labels()

    def select_request(self, index: int | None) -> None:
        """Mirror a selection made elsewhere: ring the point and pan to it if off-screen."""
        self.selected_index = index
        pos = self._position(index)
        self.selection_marker.setVisible(pos is not None)
        if pos is None:
            return
        self.selection_marker.setData([pos[0]], [pos[1]])
        (x0, x1), _ = self.getPlotItem().vb.viewRange()
        if not x0 <= pos[0] <= x1:
            half = (x1 - x0) / 2
            self.getPlotItem().vb.setXRange(pos[0] - half, pos[0] + half, padding=0)

    def _refresh_selection(self) -> None:
        self.select_request(self.selected_index)

    def reset_view(self) -> None:
        """Everything in view: all requests, 0 up to the window (or the peak)."""
        d, vb = self.data, self.getPlotItem().vb
        window = self.thresholds.window if self.thresholds is not None else None
        (x0, x1), y_top = td.full_range(d, window, [m.x for m in self.marks],
                                        self.show_subagents, self.show_auxiliary)
        top = y_top * self._headroom()
        span = max(x1 - x0, 1.0)
        # zooming out stops at zero tokens and half the session's span either side
        vb.setLimits(xMin=x0 - span / 2, xMax=x1 + span / 2, yMin=0, yMax=max(top * 4, 1.0))
        vb.setRange(xRange=(x0, x1), yRange=(0, top), padding=0)
        out = d.output[~np.isnan(d.output)]
        self.output_view.setYRange(0, max(float(out.max()) if len(out) else 1.0, 1.0) * 3.2,
                                   padding=0)
        self._auto_view = True
        self._layout_labels()

    # -- drawing ------------------------------------------------------------------
    def _draw_series(self) -> None:
        d = self.data
        known = ~np.isnan(d.api)
        self.api_curve.setData(d.main.x[known], d.api[known])
        self.estimate_curve.setData(d.main.x, d.estimate)
        self.tier_scatter.setData(d.main.x, d.main.y)
        self._brushed = False  # new spots: set_thresholds brushes them
        self.subagent_scatter.setData(d.subagent.x, d.subagent.y)
        self.auxiliary_scatter.setData(d.auxiliary.x, d.auxiliary.y)
        bottom = np.zeros(len(d.cache_x))
        for key in CACHE_KEYS:
            bottom = bottom + d.cache[key]
            self.cache_areas[key].setData(d.cache_x, bottom)
        has_out = ~np.isnan(d.output)
        self._output_xy = (d.main.x[has_out], d.output[has_out])
        self._fit_bars()
        self.hover_label.setVisible(False)

    def _set_bottom_axis(self, mode: str) -> None:
        pi = self.getPlotItem()
        current = pi.getAxis("bottom")
        want_date = mode == "time"
        if isinstance(current, pg.DateAxisItem) != want_date:
            axis = pg.DateAxisItem("bottom") if want_date else pg.AxisItem("bottom")
            pi.setAxisItems({"bottom": axis})
            self._style_axes()
        pi.setLabel("bottom", "time" if want_date else "request #")

    def _headroom(self) -> float:
        """The top of the y range over the highest line or point: room for the
        legend and ``LABEL_ROOM_PX`` (at most a third of the view's height)."""
        height = self.getPlotItem().vb.height()
        room = self.legend.boundingRect().height() + LABEL_ROOM_PX
        share = min(room / height, 1 / 3) if height > 0 else 0.1
        return 1 / (1 - share)

    def _on_view_resized(self) -> None:
        vb = self.getPlotItem().vb
        for box in (self.cache_box, self.output_view):
            box.setGeometry(vb.geometry())
            box.linkedViewChanged(vb, box.XAxis)
        self.cache_box.linkedViewChanged(vb, self.cache_box.YAxis)
        self.legend_layout.fit()
        self._fit_title()
        if self._auto_view and self.points:  # the legend's room is in pixels
            self.reset_view()
        self._layout_labels()

    def _on_view_range_changed(self, *_: object) -> None:
        self._layout_labels()
        self._fit_bars()

    def _fit_bars(self) -> None:
        """Output bars stay at least a pixel wide; denser than the screen, they
        become one bar per pixel column showing its largest value."""
        x, y = self._output_xy
        vb = self.getPlotItem().vb
        px_w, _ = vb.viewPixelSize()
        step = td.bar_width(x)
        if len(x) and px_w > 0 and step < px_w:  # bins from the first request: pans keep them
            x, y = td.peak_bins(x, y, float(x.min()), px_w)
            step = px_w
        self.output_curve.setData(x, y, step)

    def _on_view_changed_manually(self, *_: object) -> None:
        self._auto_view = False
