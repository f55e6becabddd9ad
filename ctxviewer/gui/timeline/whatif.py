"""The what-if replay on the timeline: where the current policy would compact.

``WhatIfLayer`` owns ``whatif_markers`` (triangles where the replay fires),
``whatif_curve`` (the replayed prompt size, dashed, drawn only where it
differs from the real one) and the plot's title (``whatif_label``): "policy
qwen: 2 compactions would fire (1 happened) · window 200,000", in a short form
where the plot is too narrow for the long one.
"""

from __future__ import annotations

from html import escape

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtWidgets import QWidget

from ctxviewer.analysis.timeline_view.view import TimelineView
from ctxviewer.gui.timeline.style import series_color


class WhatIfLayer:
    """The what-if markers, curve and title (see the module docstring)."""

    def __init__(self, widget: QWidget, plot_item: pg.PlotItem, dark: bool) -> None:
        self.widget, self.plot_item, self.dark = widget, plot_item, dark
        self.whatif_curve = pg.PlotDataItem(
            pen=pg.mkPen(series_color("whatif", dark), width=1.3, style=Qt.PenStyle.DashLine),
            connect="finite",
        )
        self.whatif_markers = pg.ScatterPlotItem(
            size=13,
            symbol="t",
            pen=pg.mkPen(series_color("background", dark)),
            brush=series_color("whatif", dark),
        )
        plot_item.addItem(self.whatif_curve)
        plot_item.addItem(self.whatif_markers)
        self.whatif_markers.setZValue(5)
        self.whatif_label = plot_item.titleLabel
        self._title_forms: tuple[str, str] | None = None

    def set_view(self, view: TimelineView, old: TimelineView | None) -> None:
        if old is not None and view.whatif is old.whatif:
            return
        w = view.whatif
        self.whatif_markers.setData(w.marker_x, w.marker_y)
        self.whatif_curve.setData(w.curve_x, w.curve_y)
        self._title_forms = (w.title, w.short_title)
        self.plot_item.setTitle(w.title, size="9pt", color=series_color("foreground", self.dark))
        self.fit_title()

    def show(self, on: bool) -> None:
        self.whatif_markers.setVisible(on)
        self.whatif_curve.setVisible(on)

    def fit_title(self) -> None:
        """The title in its long form, else its short one, cut to the plot's width;
        whole in its tooltip.

        pyqtgraph sizes a title to its text: a long one widened the plot past its
        tab, pushing the right axis and the last requests out of view."""
        label = self.whatif_label
        forms = self._title_forms
        if not label.text or not forms:
            return
        full, short = forms
        font = QFont(label.item.font())
        font.setPointSizeF(9)
        pi = self.plot_item
        axes = sum(pi.getAxis(a).width() for a in ("left", "right") if pi.getAxis(a).isVisible())
        room = max(60.0, self.widget.width() - axes - 16.0)
        metrics = QFontMetricsF(font)
        text = full if metrics.horizontalAdvance(full) <= room else short
        shown = metrics.elidedText(text, Qt.TextElideMode.ElideRight, room)
        color = series_color("foreground", self.dark).name()
        label.item.setHtml(f"<span style='color: {color}; font-size: 9pt'>{escape(shown)}</span>")
        label.updateMin()  # pyqtgraph had sized it to the whole text
        label.resizeEvent(None)
        label.setToolTip(full)
