"""The bars and bands under the timeline's curves: output tokens and the prompt cache.

``BarsLayer`` owns two view boxes moved with the main one and drawn under it:
- ``cache_box`` (same axes as the main view) holds ``cache_areas``: stacked
  cache read / cache write / uncached bands (the cache view), each item's data
  the *top edge* of its band;
- ``output_view``, on the right axis, holds ``output_curve``: one bar per main
  request (``getData()`` -> x, output tokens), or one per pixel column (its
  largest value) when requests are denser than pixels. It is drawn over the
  cache bands, so the bars stand in front of them and the curves in front of both.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QGraphicsItem

from ctxviewer.analysis.timeline_view.view import TimelineView
from ctxviewer.gui.timeline import geometry
from ctxviewer.gui.timeline.style import Bars, blend, series_color

CACHE_KEYS = ("cache_read", "cache_write", "uncached")  # bottom band first


def _under(plot_item: pg.PlotItem, z: float) -> pg.ViewBox:
    """A view box under the main one (mouse and paint go to it), over the grid
    (gui/widgets/plot_paint.py), moved with it along x."""
    box = pg.ViewBox(enableMenu=False)
    box.setMouseEnabled(x=False, y=False)
    box.setParentItem(plot_item)
    box.setFlag(QGraphicsItem.GraphicsItemFlag.ItemNegativeZStacksBehindParent)
    box.setZValue(z)
    box.setXLink(plot_item.vb)
    return box


class BarsLayer:
    """Output bars and cache bands (see the module docstring)."""

    def __init__(self, plot_item: pg.PlotItem) -> None:
        self.plot_item = plot_item
        self.output_view = _under(plot_item, -0.5)
        plot_item.getAxis("right").linkToView(self.output_view)
        self.cache_box = _under(plot_item, -0.7)
        self.cache_box.setYLink(plot_item.vb)
        self.output_xy: tuple[np.ndarray, np.ndarray] = (np.empty(0), np.empty(0))

    def add_items(self, dark: bool) -> None:
        """The bands and bars (after the plot's legend, as they always were)."""
        self.cache_areas: dict[str, pg.PlotDataItem] = {}
        for z, key in enumerate(reversed(CACHE_KEYS)):  # widest band behind
            item = pg.PlotDataItem(pen=None, fillLevel=0, brush=series_color(key, dark))
            item.setZValue(-10 + z)
            item.setVisible(False)
            self.cache_box.addItem(item)
            self.cache_areas[key] = item
        # faint over the background; full strength over the cache bands (show_cache)
        self.output_brushes = (
            blend(series_color("output", dark), series_color("background", dark), 150),
            pg.mkBrush(series_color("output", dark)),
        )
        self.output_curve = Bars(x=[], height=[], width=0.6, pen=None, brush=self.output_brushes[0])
        self.output_view.addItem(self.output_curve)

    def set_view(self, view: TimelineView, old: TimelineView | None) -> None:
        if old is None or view.data is not old.data:
            self.draw_series(view)

    def draw_series(self, view: TimelineView) -> None:
        d = view.data
        bottom = np.zeros(len(d.cache_x))
        for key in CACHE_KEYS:
            bottom = bottom + d.cache[key]
            self.cache_areas[key].setData(d.cache_x, bottom)
        has_out = ~np.isnan(d.output)
        self.output_xy = (d.main.x[has_out], d.output[has_out])
        self.fit_bars()

    def fit_bars(self) -> None:
        """Output bars stay at least a pixel wide; denser than the screen, they
        become one bar per pixel column showing its largest value."""
        x, y = self.output_xy
        px_w, _ = self.plot_item.vb.viewPixelSize()
        step = geometry.bar_width(x)
        if len(x) and px_w > 0 and step < px_w:  # bins from the first request: pans keep them
            x, y = geometry.peak_bins(x, y, float(x.min()), px_w)
            step = px_w
        self.output_curve.setData(x, y, step)

    def reset_range(self, view: TimelineView | None) -> None:
        """The right axis from 0 to a bit over three times the largest output."""
        out = view.data.output if view is not None else np.empty(0)
        out = out[~np.isnan(out)]
        top = max(float(out.max()) if len(out) else 1.0, 1.0) * 3.2
        self.output_view.setYRange(0, top, padding=0)

    def follow(self) -> None:
        """Take the main view's place after it was resized."""
        vb = self.plot_item.vb
        for box in (self.cache_box, self.output_view):
            box.setGeometry(vb.geometry())
            box.linkedViewChanged(vb, box.XAxis)
        self.cache_box.linkedViewChanged(vb, self.cache_box.YAxis)

    def show_cache(self, on: bool) -> None:
        for item in self.cache_areas.values():
            item.setVisible(on)
        self.output_curve.setOpts(brush=self.output_brushes[on])

    def show_output(self, show: bool) -> None:
        self.output_curve.setVisible(show)
        self.plot_item.showAxis("right", show)
