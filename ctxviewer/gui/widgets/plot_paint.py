"""Cheap plot repaints: text from pixmaps, grid lines on Qt's fast path.

A plot is mostly repainted for its data, not its text: tick labels, titles,
the legend and the threshold labels were nine tenths of a timeline repaint
(32 ms of 35 for 666 requests at 1400x900), because Qt lays text out again at
every paint. With ``DeviceCoordinateCache`` each such item is kept as a pixmap
in screen pixels until it changes: pyqtgraph calls ``update()`` on every
change (new ticks after a zoom, a new text), which drops the pixmap.

An axis with a grid draws each tick as a translucent line across the plot
(above the data), with antialiasing off, into a ``QPicture`` it replays at
each paint. Qt's raster engine draws translucent lines without antialiasing
on a slow path: 7 ms for the 45 lines of the timeline's left axis, against
0.2 ms for opaque ones. So the axis goes below the data, and draws its
translucent lines opaque, in the colour they have over the plot's
background, on the same pixels; its text stays in the picture.
"""

from __future__ import annotations

import types
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QLineF, QPointF
from PySide6.QtGui import QColor, QPainter, QPen, QPicture
from PySide6.QtWidgets import QGraphicsItem, QGraphicsTextItem

from ctxviewer.gui.widgets.file_dialog import guard_plot_exports

CACHED = (QGraphicsTextItem, pg.AxisItem, pg.LabelItem, pg.LegendItem)
_DEVICE = QGraphicsItem.CacheMode.DeviceCoordinateCache
_NONE = QGraphicsItem.CacheMode.NoCache
_AA = QPainter.RenderHint.Antialiasing


def paint_cheaply(view: pg.GraphicsView) -> None:
    """Apply both to ``view``'s scene, items added later too (checked at each paint).
    Every plot of the window comes here once: its Export... asks with our file dialog
    (``file_dialog.guard_plot_exports``)."""
    guard_plot_exports()
    scene = view.scene()

    def apply() -> None:
        for item in scene.items():
            if isinstance(item, CACHED) and item.cacheMode() == _NONE:
                item.setCacheMode(_DEVICE)
                if isinstance(item, pg.AxisItem):
                    item.paint = types.MethodType(_paint_axis, item)
                    item.picture = None  # pyqtgraph's "draw again" flag
                    item.setZValue(-1)  # below the data: its grid lines are opaque

    scene.sigPrepareForPaint.connect(apply)


def _paint_axis(self: pg.AxisItem, p: QPainter, *_args: Any) -> None:
    """``AxisItem.paint``: the lines drawn here, the text replayed from the picture."""
    if self.picture is None:
        picture = QPicture()
        painter = QPainter(picture)
        try:
            if self.style["tickFont"]:
                painter.setFont(self.style["tickFont"])
            specs = self.generateDrawSpecs(painter)
            self.cheap_lines = []
            if specs is not None:
                axis_spec, tick_specs, text_specs = specs
                self.cheap_lines = [axis_spec, *tick_specs]
                _draw_text(self, painter, text_specs)
        finally:
            painter.end()
        self.picture = picture
    hints = p.renderHints()
    p.setRenderHint(_AA, False)
    background = _background(self)
    for pen, lines in _by_pen(self.cheap_lines):
        color = pen.color()
        if color.alpha() < 255 and background is not None:
            pen = QPen(pen)
            pen.setColor(_over(color, background))
        p.setPen(pen)
        p.drawLines([QLineF(a, b) for a, b in lines])  # one call per pen
    p.setRenderHints(hints)
    self.picture.play(p)


def _by_pen(specs: list[Any]) -> list[tuple[QPen, list[tuple[QPointF, QPointF]]]]:
    """Consecutive (pen, p1, p2) with equal pens as one (pen, lines) (drawing order kept)."""
    out: list[tuple[QPen, list[tuple[QPointF, QPointF]]]] = []
    for pen, p1, p2 in specs:
        if out and out[-1][0] == pen:
            out[-1][1].append((p1, p2))
        else:
            out.append((pen, [(p1, p2)]))
    return out


def _background(axis: pg.AxisItem) -> QColor | None:
    """The opaque colour the plot is painted on, when there is one."""
    view = axis.getViewWidget()
    color = view.backgroundBrush().color() if view is not None else None
    return color if color is not None and color.alpha() == 255 else None


def _over(color: QColor, background: QColor) -> QColor:
    """``color`` (translucent) painted over ``background``, as one opaque colour."""
    a = color.alphaF()
    return QColor.fromRgbF(
        *(
            c * a + b * (1 - a)
            for c, b in (
                (color.redF(), background.redF()),
                (color.greenF(), background.greenF()),
                (color.blueF(), background.blueF()),
            )
        )
    )


def _draw_text(self: pg.AxisItem, p: QPainter, text_specs: Any) -> None:
    """The text part of ``AxisItem.drawPicture``."""
    p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
    p.setPen(self.textPen())
    p.setClipRect(self.boundingRect().toAlignedRect())
    for rect, flags, text in text_specs:
        p.drawText(rect, int(flags), text)
