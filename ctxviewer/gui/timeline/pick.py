"""Pointer interaction of the timeline: the request under the mouse, the hover
readout, clicks and double-clicks.

``PickingMixin`` is mixed into ``TimelinePlot`` (before ``pg.PlotWidget``); it
reads the plot's ``data``, ``tier_codes``, visibility flags and view box, and
emits the plot's ``request_clicked``/``request_hovered`` signals. A point is
picked when it is within ``PICK_RADIUS`` pixels of the pointer, on any shown
series (the estimate curve included).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, Qt

from ctxviewer.analysis.thresholds import TIERS
from ctxviewer.gui.timeline import data as td
from ctxviewer.model import AUXILIARY, MAIN

PICK_RADIUS = 12.0  # pixels


class PickingMixin:
    """Mouse handling of ``TimelinePlot`` (see the module docstring)."""

    # pyqtgraph leaves presses on empty plot space unaccepted; the plot does use
    # every click (pick, double-click reset, pan), so say so to Qt.
    def mousePressEvent(self, ev) -> None:
        super().mousePressEvent(ev)
        ev.accept()

    def mouseReleaseEvent(self, ev) -> None:
        super().mouseReleaseEvent(ev)
        ev.accept()

    def mouseDoubleClickEvent(self, ev) -> None:
        super().mouseDoubleClickEvent(ev)
        ev.accept()

    def leaveEvent(self, ev) -> None:
        super().leaveEvent(ev)
        self._on_hover(None)

    def _position(self, index: int | None) -> tuple[float, float] | None:
        """Where request ``index`` is drawn, or None when it is not (hidden series)."""
        p = self.data.points.get(index) if index is not None else None
        if p is None:
            return None
        if p.role == AUXILIARY and not self.show_auxiliary:
            return None
        if (p.role != MAIN or p.sidechain) and p.role != AUXILIARY and not self.show_subagents:
            return None
        return self.data.x_of[index], float(p.prompt_tokens)

    def _candidates(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        d = self.data
        out = [(d.main.index, d.main.x, d.main.y), (d.main.index, d.main.x, d.estimate)]
        if self.show_subagents:
            out.append((d.subagent.index, d.subagent.x, d.subagent.y))
        if self.show_auxiliary:
            out.append((d.auxiliary.index, d.auxiliary.x, d.auxiliary.y))
        return out

    def pick(self, scene_pos: QPointF) -> tuple[int, float, float] | None:
        """The request drawn nearest ``scene_pos`` (within a few pixels): index, x, y."""
        vb = self.getPlotItem().vb
        if not vb.sceneBoundingRect().contains(scene_pos):
            return None
        at = vb.mapSceneToView(scene_pos)
        px_w, px_h = vb.viewPixelSize()
        best: tuple[float, int, float, float] | None = None
        for index, x, y in self._candidates():
            i, d2 = td.nearest(x, y, at.x(), at.y(), px_w, px_h, PICK_RADIUS)
            if i >= 0 and (best is None or d2 < best[0]):
                best = (d2, int(index[i]), float(x[i]), float(y[i]))
        return None if best is None else best[1:]

    def _on_scene_mouse_clicked(self, ev) -> None:
        if ev.button() != Qt.MouseButton.LeftButton:
            return
        if ev.double():
            self.reset_view()
            return
        hit = self.pick(ev.scenePos())
        if hit is not None:
            self.request_clicked.emit(hit[0])

    def _on_scene_mouse_moved(self, scene_pos: QPointF) -> None:
        self._on_hover(self.pick(scene_pos))

    def _on_hover(self, hit: tuple[int, float, float] | None) -> None:
        index = -1 if hit is None else hit[0]
        if index != self.hovered_index:
            self.hovered_index = index
            self.request_hovered.emit(index)
        self.show_hover(hit)

    def show_hover(self, hit: tuple[int, float, float] | None) -> None:
        """Show the readout of ``(index, x, y)`` next to the point, or hide it."""
        if hit is None:
            self.hover_label.setVisible(False)
            return
        index, x, y = hit
        p = self.data.points[index]
        tier = None
        if p.role == MAIN and not p.sidechain and len(self.tier_codes):
            pos = int(np.searchsorted(self.data.main.index, index))
            tier = TIERS[int(self.tier_codes[pos])]
        atts = self.attribution
        att = atts[p.index].as_dict() if atts is not None and p.index < len(atts) else None
        self.hover_label.setText(td.describe(p, tier, att))
        self.place_hover(x, y)
        self.hover_label.setVisible(True)

    def place_hover(self, x: float, y: float) -> None:
        """Put the readout next to the point (x, y), wholly inside the plot: right of
        and below the point, on the other side near the right or bottom edge."""
        vb = self.getPlotItem().vb
        view = vb.sceneBoundingRect()
        at = vb.mapViewToScene(QPointF(x, y))
        size = self.hover_label.boundingRect()
        left, top = td.label_spot((size.width(), size.height()), (at.x(), at.y()),
                                  (view.left(), view.top(), view.right(), view.bottom()))
        self.hover_label.setPos(vb.mapSceneToView(QPointF(left, top)))
