"""The pointer on the timeline: the request under it, the hover readout, the selection.

``PickLayer`` owns ``hover_label`` (the readout of the request under the
pointer, kept inside the plot) and ``selection_marker`` (a ring on the
request selected elsewhere). A point is picked when it is within
``PICK_RADIUS`` pixels of the pointer, on any shown series (the estimate curve
included). The host turns its answers into the plot's signals.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF

from ctxviewer.analysis.thresholds import TIERS
from ctxviewer.analysis.timeline_view.series import describe
from ctxviewer.analysis.timeline_view.view import TimelineView
from ctxviewer.gui.timeline import geometry
from ctxviewer.gui.timeline.layer import Shown
from ctxviewer.gui.timeline.style import label_fill, series_color
from ctxviewer.model import AUXILIARY, MAIN

PICK_RADIUS = 12.0  # pixels
Hit = tuple[int, float, float]  # request index, x, y


class PickLayer:
    """Hover, picking and the selection ring (see the module docstring)."""

    def __init__(self, plot_item: pg.PlotItem, dark: bool, shown: Shown) -> None:
        self.vb, self.shown = plot_item.vb, shown
        self.view: TimelineView | None = None
        self.selection_marker = pg.ScatterPlotItem(
            size=17, symbol="o", brush=None, pen=pg.mkPen(series_color("selection", dark), width=2)
        )
        self.selection_marker.setVisible(False)
        plot_item.addItem(self.selection_marker)
        self.selection_marker.setZValue(6)
        self.hover_label = pg.TextItem(
            "",
            color=series_color("foreground", dark),
            fill=label_fill(dark),
            border=pg.mkPen(series_color("foreground", dark)),
        )
        self.hover_label.setZValue(20)
        self.hover_label.setVisible(False)

    def add_hover_label(self, plot_item: pg.PlotItem) -> None:
        """Over everything (after the threshold lines, as it always was)."""
        plot_item.addItem(self.hover_label, ignoreBounds=True)

    def set_view(self, view: TimelineView, old: TimelineView | None) -> None:
        self.view = view
        if old is None or view.data is not old.data:
            self.hover_label.setVisible(False)

    def position(self, index: int | None) -> tuple[float, float] | None:
        """Where request ``index`` is drawn, or None when it is not (hidden series)."""
        d = self.view.data if self.view is not None else None
        p = d.points.get(index) if d is not None and index is not None else None
        if d is None or p is None or index is None:
            return None
        if p.role == AUXILIARY and not self.shown.auxiliary:
            return None
        if (p.role != MAIN or p.sidechain) and p.role != AUXILIARY and not self.shown.subagents:
            return None
        return d.x_of[index], float(p.prompt_tokens)

    def select(self, index: int | None) -> None:
        """Ring request ``index`` and pan to it if it is off-screen."""
        pos = self.position(index)
        self.selection_marker.setVisible(pos is not None)
        if pos is None:
            return
        self.selection_marker.setData([pos[0]], [pos[1]])
        (x0, x1), _ = self.vb.viewRange()
        if not x0 <= pos[0] <= x1:
            half = (x1 - x0) / 2
            self.vb.setXRange(pos[0] - half, pos[0] + half, padding=0)

    def _candidates(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        if self.view is None:
            return []
        d = self.view.data
        out = [(d.main.index, d.main.x, d.main.y), (d.main.index, d.main.x, d.estimate)]
        if self.shown.subagents:
            out.append((d.subagent.index, d.subagent.x, d.subagent.y))
        if self.shown.auxiliary:
            out.append((d.auxiliary.index, d.auxiliary.x, d.auxiliary.y))
        return out

    def pick(self, scene_pos: QPointF) -> Hit | None:
        """The request drawn nearest ``scene_pos`` (within a few pixels): index, x, y."""
        vb = self.vb
        if not vb.sceneBoundingRect().contains(scene_pos):
            return None
        at = vb.mapSceneToView(scene_pos)
        px_w, px_h = vb.viewPixelSize()
        best: tuple[float, int, float, float] | None = None
        for index, x, y in self._candidates():
            i, d2 = geometry.nearest(x, y, at.x(), at.y(), px_w, px_h, PICK_RADIUS)
            if i >= 0 and (best is None or d2 < best[0]):
                best = (d2, int(index[i]), float(x[i]), float(y[i]))
        return None if best is None else best[1:]

    def show_hover(self, hit: Hit | None) -> None:
        """Show the readout of ``(index, x, y)`` next to the point, or hide it."""
        if hit is None or self.view is None:
            self.hover_label.setVisible(False)
            return
        index, x, y = hit
        view = self.view
        p = view.data.points[index]
        tier = None
        if p.role == MAIN and not p.sidechain and len(view.tiers):
            pos = int(np.searchsorted(view.data.main.index, index))
            tier = TIERS[int(view.tiers[pos])]
        atts = view.attribution
        att = atts[p.index].as_dict() if atts is not None and p.index < len(atts) else None
        self.hover_label.setText(describe(p, tier, att))
        self.place_hover(x, y)
        self.hover_label.setVisible(True)

    def place_hover(self, x: float, y: float) -> None:
        """Put the readout next to the point (x, y), wholly inside the plot: right of
        and below the point, on the other side near the right or bottom edge."""
        vb = self.vb
        view = vb.sceneBoundingRect()
        at = vb.mapViewToScene(QPointF(x, y))
        size = self.hover_label.boundingRect()
        left, top = geometry.label_spot(
            (size.width(), size.height()),
            (at.x(), at.y()),
            (view.left(), view.top(), view.right(), view.bottom()),
        )
        self.hover_label.setPos(vb.mapSceneToView(QPointF(left, top)))
