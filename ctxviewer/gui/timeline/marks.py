"""Vertical marks and markers of the timeline: the log's compactions and overflows,
where the agent's policy predicts compactions, and budget crossings.

``MarksLayer`` owns ``event_lines`` (one per ``view.marks``, half a step before
the request that follows the event, labelled "compaction (auto) 167,117 ->
32,015"), ``predicted_markers`` (crosses along the real curve) and
``budget_lines`` (dash-dotted, in the warn or hard tier's colour). Event and
budget lines are rebuilt when their part of the view is new.
"""

from __future__ import annotations

from collections.abc import Iterable

import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt

from ctxviewer.analysis.timeline_view.view import BudgetLine, TimelineView
from ctxviewer.gui.timeline import labels
from ctxviewer.gui.timeline.style import label_fill, series_color
from ctxviewer.gui.widgets.palette import tier_color


class MarksLayer:
    """Event, predicted and budget markers (see the module docstring)."""

    def __init__(self, plot_item: pg.PlotItem, dark: bool) -> None:
        self.plot_item, self.dark = plot_item, dark
        self.predicted_markers = pg.ScatterPlotItem(
            size=12,
            symbol="x",
            pen=pg.mkPen(series_color("foreground", dark), width=1.2),
            brush=series_color("foreground", dark),
        )
        plot_item.addItem(self.predicted_markers)
        self.predicted_markers.setZValue(5)
        self.event_lines: list[pg.InfiniteLine] = []
        self.budget_lines: list[pg.InfiniteLine] = []

    def set_view(self, view: TimelineView, old: TimelineView | None) -> None:
        if old is None or view.marks is not old.marks:
            self.draw_events(view)
        if old is None or view.budget_lines is not old.budget_lines:
            self.draw_budget(view.budget_lines)
        if (
            old is None
            or view.predicted_x is not old.predicted_x
            or view.predicted_y is not old.predicted_y
        ):
            self.predicted_markers.setData(list(view.predicted_x), list(view.predicted_y))

    def _replace(self, old: list[pg.InfiniteLine], new: Iterable[pg.InfiniteLine]) -> None:
        """The lines of ``old`` by ``new`` (in place: the list stays the same object)."""
        for line in old:
            self.plot_item.removeItem(line)
        old[:] = new
        for line in old:
            self.plot_item.addItem(line, ignoreBounds=True)

    def draw_events(self, view: TimelineView) -> None:
        self._replace(self.event_lines, [labels.event_line(m, self.dark) for m in view.marks])

    def draw_budget(self, spots: Iterable[BudgetLine]) -> None:
        fill = pg.mkBrush(label_fill(self.dark))
        lines = []
        for b in spots:
            color = tier_color("warn" if b.kind == "warn" else "hard", self.dark)
            line = pg.InfiniteLine(
                pos=b.x,
                angle=90,
                movable=False,
                pen=pg.mkPen(color, width=1.6, style=Qt.PenStyle.DashDotLine),
                label=labels.literal(b.label),
                labelOpts={
                    "position": 0.05 + 0.07 * b.slot,  # neighbours stagger
                    "anchors": [(0, 1), (0, 1)],
                    "color": color,
                    "fill": fill,
                },
            )
            line.setZValue(4)
            lines.append(line)
        self._replace(self.budget_lines, lines)

    def layout(self, vb: pg.ViewBox, ceiling: float | None, taken: list[QRectF]) -> None:
        """Keep the event labels apart, under ``ceiling`` and off the ``taken`` rects."""
        labels.layout_event_labels(self.event_lines, vb, ceiling, taken)
