"""The policy's horizontal lines on the timeline: warn, auto, hard, effective, window
and target (when the policy has one), each labelled with its value.

``ThresholdLayer`` owns ``threshold_lines`` (key -> ``pg.InfiniteLine``), built
once and moved to each view's ``lines``; ``layout`` staggers their labels.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QRectF

from ctxviewer.analysis.timeline_view.view import TimelineView
from ctxviewer.gui.timeline import labels


class ThresholdLayer:
    """The threshold lines (see the module docstring)."""

    def __init__(self, plot_item: pg.PlotItem, dark: bool) -> None:
        self.threshold_lines: dict[str, labels.LabelledLine] = labels.threshold_lines(
            plot_item, dark
        )

    def set_view(self, view: TimelineView, old: TimelineView | None) -> None:
        if old is None or view.lines is not old.lines:
            labels.apply_lines(self.threshold_lines, view.lines)

    def layout(self, vb: pg.ViewBox) -> None:
        """Keep the labels from overlapping at the current zoom."""
        labels.layout_threshold_labels(self.threshold_lines.values(), vb)

    def label_rects(self) -> list[QRectF]:
        """Where the shown labels are (scene rects): other labels keep off them."""
        return [
            ln.label.sceneBoundingRect()
            for ln in self.threshold_lines.values()
            if ln.isVisible() and ln.label.isVisible()
        ]
