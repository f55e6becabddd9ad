"""The labelled lines of the timeline: thresholds (horizontal) and events (vertical).

Building them, moving them to a policy's values, and keeping their labels
apart at the current zoom. Lines with the same value share one label
("auto = hard = effective 150,000"); labels of nearby lines are staggered
(thresholds sideways, events downwards) and an event label that fits in
no lane loses its label (the line stays; the hover readout names the event).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt

from ctxviewer.analysis.timeline_view.series import EventMark
from ctxviewer.analysis.timeline_view.view import THRESHOLD_KEYS, ThresholdLine
from ctxviewer.gui.timeline import geometry
from ctxviewer.gui.timeline.style import label_fill, series_color, threshold_pen

ABOVE, BELOW = [(0, 1), (0, 1)], [(0, 0), (0, 0)]  # text anchors of a horizontal line
LABELS_Z = 4  # the threshold labels: above the drawn lines (2) and the event lines (3)
EVENT_LANES = 2


class LabelledLine(pg.InfiniteLine):
    """A threshold's label, carried by an undrawn line above every drawn one, and its
    drawn line (``stroke``) below: a label is never struck through by a line, its own
    or a neighbour's (lines a few thousand tokens apart are a few pixels apart on a
    small screen, closer than a label is tall)."""

    def __init__(self, key: str, dark: bool) -> None:
        self.stroke: pg.InfiniteLine | None = None
        pen = threshold_pen(key, dark)
        fill = label_fill(dark)
        fill.setAlpha(255)  # opaque: the lines under it do not show through
        super().__init__(
            angle=0,
            movable=False,
            pen=pg.mkPen(None),
            label=key,
            labelOpts={
                "position": 0.01,
                "anchors": ABOVE,
                "color": pen.color(),
                "fill": pg.mkBrush(fill),
            },
        )
        self.stroke = pg.InfiniteLine(angle=0, movable=False, pen=pen)
        self.stroke.setZValue(2)
        self.line_pen = pen
        self.texts = (key, key)  # (full, compact) label texts: apply_lines sets them

    def setPos(self, pos: object) -> None:  # noqa: N802 - pyqtgraph's name
        super().setPos(pos)
        if self.stroke is not None:
            self.stroke.setPos(pos)

    def setVisible(self, visible: bool) -> None:  # noqa: N802 - Qt's name
        super().setVisible(visible)
        if self.stroke is not None:
            self.stroke.setVisible(visible)


def literal(text: str) -> str:
    """``text`` as a line label's format: pyqtgraph's ``InfLineLabel`` runs
    ``str.format`` on it, so the braces of a JSON error body ("HTTP 429: {'type': …}")
    are doubled to show as they are."""
    return text.replace("{", "{{").replace("}", "}}")


def threshold_lines(plot_item: pg.PlotItem, dark: bool) -> dict[str, LabelledLine]:
    """One hidden horizontal line per key of ``THRESHOLD_KEYS``."""
    lines = {}
    for key in THRESHOLD_KEYS:
        line = LabelledLine(key, dark)
        line.setVisible(False)
        line.setZValue(LABELS_Z)
        plot_item.addItem(line.stroke, ignoreBounds=True)
        plot_item.addItem(line, ignoreBounds=True)
        lines[key] = line
    return lines


def apply_lines(lines: dict[str, pg.InfiniteLine], spec: Sequence[ThresholdLine]) -> None:
    """Move every line to its value in ``spec`` and relabel it; no item is rebuilt."""
    for s in spec:
        line = lines[s.key]
        line.setVisible(s.value is not None)
        if s.value is None:
            continue
        line.setValue(s.value)
        line.texts = (literal(s.full), literal(s.compact))
        line.label.setFormat(line.texts[0])
        line.label.setVisible(s.labelled)
        # the ceiling's label hangs below it, the others sit on their line
        line.label.anchors = BELOW if s.below else ABOVE
        line.label.updatePosition()


RIGHT_OF_LINE = (0, 0)  # label anchors: its top-left corner on the line
LEFT_OF_LINE = (1, 0)  # its top-right corner on the line


def event_line(mark: EventMark, dark: bool) -> pg.InfiniteLine:
    color = series_color(
        "event" if mark.kind in ("compaction", "simulated", "undone") else "overflow", dark
    )
    style = (
        Qt.PenStyle.DotLine
        if mark.kind in ("failed", "simulated", "undone")
        else Qt.PenStyle.DashLine
    )
    line = pg.InfiniteLine(
        pos=mark.x,
        angle=90,
        movable=False,
        pen=pg.mkPen(color, width=1.4, style=style),
        label=literal(mark.label()),
        labelOpts={
            "position": 0.93,
            "anchors": [RIGHT_OF_LINE] * 2,
            "color": color,
            "fill": pg.mkBrush(label_fill(dark)),
        },
    )
    line.setZValue(3)
    return line


def layout_threshold_labels(lines: Iterable[pg.InfiniteLine], vb: pg.ViewBox) -> None:
    """Stagger the labels of lines too close to each other, left to right; where the
    staggered labels do not fit the view's width, in their compact text ("hard 177k")."""
    shown = sorted(
        (ln for ln in lines if ln.isVisible() and ln.label.isVisible()), key=lambda ln: -ln.value()
    )
    _, px_h = vb.viewPixelSize()
    if not shown or px_h <= 0:
        return
    width = max(vb.width(), 1.0)
    for compact in (False, True):
        for ln in shown:
            if ln.label.format != ln.texts[compact]:
                ln.label.setFormat(ln.texts[compact])
        heights = [ln.label.boundingRect().height() for ln in shown]
        centers = [
            ln.value() / px_h + (h / 2 if ln.label.anchors is ABOVE else -h / 2)
            for ln, h in zip(shown, heights, strict=True)
        ]
        slots = geometry.stack_slots(centers, [h - 6 for h in heights])  # margins may touch
        step = (max(ln.label.boundingRect().width() for ln in shown) + 10) / width
        ends = [
            0.01 + max(slot, 0) * step + (ln.label.boundingRect().width() + 4) / width
            for ln, slot in zip(shown, slots, strict=True)
        ]
        if max(ends) <= 1:
            break
    for rank, (ln, slot) in enumerate(zip(shown, slots, strict=True)):
        last = 1 - (ln.label.boundingRect().width() + 4) / width  # the label ends in view
        ln.label.setPosition(max(0.01, min(0.01 + max(slot, 0) * step, last)))
        ln.setZValue(LABELS_Z + rank / 10)  # a lower label over a higher one's margin


def layout_event_labels(
    lines: Iterable[pg.InfiniteLine],
    vb: pg.ViewBox,
    ceiling: float | None,
    obstacles: Iterable[QRectF] = (),
) -> None:
    """Event labels right of their line (left of it where the view ends first), from
    just under ``ceiling`` (the window line) down through ``EVENT_LANES`` lanes; a
    label that fits no lane without covering another label or an ``obstacle``
    (scene rects) is hidden."""
    view = vb.sceneBoundingRect()
    if view.height() <= 0:
        return
    _, (y0, y1) = vb.viewRange()
    top = view.top() + 0.07 * view.height()
    if ceiling is not None and y0 < ceiling < y1:
        top = vb.mapViewToScene(QPointF(0, ceiling)).y() + 4
    placed = list(obstacles)
    for ln in sorted(lines, key=lambda ln: ln.value()):
        size = ln.label.boundingRect()
        x = vb.mapViewToScene(QPointF(ln.value(), 0)).x()
        spot = None
        left = x + size.width() > view.right() and x - size.width() >= view.left()
        if view.left() <= x <= view.right():
            for lane in range(EVENT_LANES):
                rect = QRectF(
                    x - size.width() if left else x,
                    top + lane * (size.height() + 2),
                    size.width(),
                    size.height(),
                )
                if not any(rect.intersects(o) for o in placed):
                    spot = rect
                    break
        ln.label.setVisible(spot is not None)
        if spot is not None:
            placed.append(spot.adjusted(-4, 0, 4, 0))
            ln.label.anchors = [LEFT_OF_LINE] * 2 if left else [RIGHT_OF_LINE] * 2
            ln.label.setPosition((view.bottom() - spot.top()) / view.height())
