"""The timeline: prompt tokens per request, thresholds, compactions, what-if.

``TimelinePlot`` is a thin ``PlotWidget`` hosting one layer per group of items
(``layer``): ``set_view(view)`` hands the core's view model
(``analysis.timeline_view.view.TimelineView``) to every layer, each redrawing only what
is new in it. ``set_analysis``, ``set_timeline``, ``set_thresholds``,
``set_predicted``, ``set_budget_marks`` and ``set_x_mode`` make that view. User
intent leaves as signals (``request_clicked``, ``request_hovered``).

The layers and their items (x: the request index, or epoch seconds with ``x_mode``
"time"), each named by the plot too (tests read ``getData()``, not pixels):

- ``curves`` (``curves.CurvesLayer``): ``api_curve``, ``estimate_curve``,
  ``tier_scatter``, ``subagent_scatter``, ``auxiliary_scatter``;
- ``bars`` (``bars.BarsLayer``): ``cache_areas`` in ``cache_box`` and
  ``output_curve`` in ``output_view`` (the right axis);
- ``lines`` (``thresholds.ThresholdLayer``): ``threshold_lines``;
- ``marks_layer`` (``marks.MarksLayer``): ``event_lines``, ``predicted_markers``,
  ``budget_lines`` (budget crossings, kept across redraws);
- ``whatif_layer`` (``whatif.WhatIfLayer``): ``whatif_markers``,
  ``whatif_curve``, ``whatif_label`` (the title);
- ``picker`` (``pick.PickLayer``): ``selection_marker``, ``hover_label``;
- ``legend_layout`` (``legend.TimelineLegend``) and ``menu`` (``toggles``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QWidget

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.thresholds import Thresholds
from ctxviewer.analysis.timeline import Point
from ctxviewer.analysis.timeline_view import view as tv
from ctxviewer.analysis.timeline_view.series import X_MODES, EventMark, TimelineData
from ctxviewer.analysis.timeline_view.series import build as build_series
from ctxviewer.analysis.timeline_view.whatif import WhatIf
from ctxviewer.gui.timeline import geometry
from ctxviewer.gui.timeline.bars import BarsLayer
from ctxviewer.gui.timeline.curves import CurvesLayer
from ctxviewer.gui.timeline.layer import Layer, Shown
from ctxviewer.gui.timeline.legend import TimelineLegend
from ctxviewer.gui.timeline.marks import MarksLayer
from ctxviewer.gui.timeline.pick import Hit, PickLayer
from ctxviewer.gui.timeline.style import TokenAxis, faint, series_color, set_bottom_axis, style_axes
from ctxviewer.gui.timeline.thresholds import ThresholdLayer
from ctxviewer.gui.timeline.toggles import TimelineMenu
from ctxviewer.gui.timeline.whatif import WhatIfLayer
from ctxviewer.gui.widgets.palette import is_dark
from ctxviewer.gui.widgets.plot_paint import paint_cheaply
from ctxviewer.model import Event

LABEL_ROOM_PX = 26  # above the highest line, under the legend: that line's label
EMPTY = build_series([])


class TimelinePlot(pg.PlotWidget):
    """Prompt tokens per request over time, with the policy's thresholds."""

    request_clicked = Signal(int)  # request index of the clicked point
    request_hovered = Signal(int)  # request index under the pointer, -1 when none

    def __init__(self, parent: QWidget | None = None, *, dark: bool | None = None) -> None:
        self.dark = is_dark() if dark is None else dark
        super().__init__(
            parent,
            background=series_color("background", self.dark),
            axisItems={"left": TokenAxis("left"), "right": TokenAxis("right")},
        )
        paint_cheaply(self)  # repaints cost a tenth (gui/widgets/plot_paint.py)
        self.view: tv.TimelineView | None = None
        self.x_mode = "index"  # as asked (``data.x_mode``: in use)
        self.selected_index: int | None = None
        self.hovered_index = -1
        self.shown = Shown()
        self._auto_view = True
        # predicted compactions and budget marks set before the first view
        self._pending: tuple[tuple[int, ...], tuple[tv.BudgetMark, ...]] = ((), ())
        pi, dark = self.getPlotItem(), self.dark
        self._setup_plot(pi)
        self.bars = BarsLayer(pi)
        pi.vb.sigResized.connect(self._on_view_resized)
        pi.vb.sigRangeChanged.connect(self._on_view_range_changed)
        pi.vb.sigRangeChangedManually.connect(self._on_view_changed_manually)
        pi.scene().sigMouseMoved.connect(self._on_scene_mouse_moved)
        pi.scene().sigMouseClicked.connect(self._on_scene_mouse_clicked)
        self.legend = pi.addLegend(
            offset=(8, 4),
            colCount=6,
            labelTextSize="8pt",
            labelTextColor=series_color("foreground", dark),
            brush=faint(series_color("background", dark), 210),
        )
        self.legend_layout = TimelineLegend(self.legend, pi.vb)
        set_bottom_axis(pi, "index", dark)
        self.bars.add_items(dark)
        self.curves = CurvesLayer(pi, dark)
        self.whatif_layer = WhatIfLayer(self, pi, dark)
        self.marks_layer = MarksLayer(pi, dark)
        self.picker = PickLayer(pi, dark, self.shown)
        self.lines = ThresholdLayer(pi, dark)
        self.picker.add_hover_label(pi)
        self.layers: tuple[Layer, ...] = (
            self.curves,
            self.bars,
            self.marks_layer,
            self.lines,
            self.whatif_layer,
            self.picker,
        )
        self.menu = TimelineMenu(
            pi.vb.menu,
            self.reset_view,
            {
                "time": self._toggle_time,
                "cache": self.set_cache_view,
                "subagents": self.set_show_subagents,
                "auxiliary": self.set_show_auxiliary,
                "output": self.set_show_output,
                "whatif": self.set_show_whatif,
            },
        )
        # the layers' items, by name (tests read them; panels add to the plot)
        c, b, m, w, p = self.curves, self.bars, self.marks_layer, self.whatif_layer, self.picker
        self.api_curve, self.estimate_curve = c.api_curve, c.estimate_curve
        self.tier_scatter, self._tier_brushes = c.tier_scatter, c.tier_brushes
        self.subagent_scatter, self.auxiliary_scatter = c.subagent_scatter, c.auxiliary_scatter
        self.cache_box, self.cache_areas = b.cache_box, b.cache_areas
        self.output_view, self.output_curve = b.output_view, b.output_curve
        self.output_brushes = b.output_brushes
        self.threshold_lines = self.lines.threshold_lines
        self.predicted_markers = m.predicted_markers
        self.event_lines, self.budget_lines = m.event_lines, m.budget_lines
        self.whatif_markers, self.whatif_curve = w.whatif_markers, w.whatif_curve
        self.whatif_label = w.whatif_label
        self.selection_marker, self.hover_label = p.selection_marker, p.hover_label
        self.menu_actions = self.menu.menu_actions

    def _setup_plot(self, pi: pg.PlotItem) -> None:
        pi.setDownsampling(auto=True, mode="peak")
        pi.setClipToView(True)
        pi.hideButtons()
        pi.vb.disableAutoRange()
        style_axes(pi, self.dark)
        pi.setLabel("left", "prompt tokens")
        pi.showAxis("right")
        pi.setLabel("right", "output tokens")

    @property
    def points(self) -> list[Point]:
        return list(self.view.points) if self.view is not None else []

    @property
    def data(self) -> TimelineData:
        return self.view.data if self.view is not None else EMPTY

    @property
    def events(self) -> list[tuple[int, Event]] | None:
        events = self.view.events if self.view is not None else None
        return list(events) if events is not None else None

    @property
    def marks(self) -> list[EventMark]:
        return list(self.view.marks) if self.view is not None else []

    @property
    def tier_codes(self) -> np.ndarray:
        return self.view.tiers if self.view is not None else np.empty(0, dtype=np.int8)

    @property
    def whatif(self) -> WhatIf | None:
        return self.view.whatif.replay if self.view is not None else None

    @property
    def predicted(self) -> tuple[int, ...]:
        return self.view.predicted if self.view is not None else self._pending[0]

    @property
    def budget_marks(self) -> list[tv.BudgetMark]:
        return list(self.view.budget if self.view is not None else self._pending[1])

    # -- the setters --------------------------------------------------------------
    def set_view(self, view: tv.TimelineView) -> None:
        """Show ``view``: each layer redraws what is new in it; a new series puts
        everything in view, new thresholds too unless the user zoomed or panned."""
        old, self.view = self.view, view
        rebuilt = old is None or view.data is not old.data
        if rebuilt:
            set_bottom_axis(self.getPlotItem(), view.data.x_mode, self.dark)
        for layer in self.layers:
            layer.set_view(view, old)
        # pyqtgraph's legend lays its rows out from the grid counts of its earlier fills:
        # a new series or new predictions fill it first as the old calls did (with the
        # predictions carried over), then as it is, so it looks as it always did
        carried = bool(old and any(i < len(view.points) for i in old.predicted))
        if rebuilt or carried != bool(view.predicted):
            self._update_legend(predicted=carried)
        self._update_legend()
        if rebuilt:
            self.picker.select(self.selected_index)
            self.reset_view()
        else:  # new lines: new thresholds (the same ones again too)
            if old is not None and view.lines is not old.lines and self._auto_view:
                self.reset_view()
            self._layout_labels()

    def set_timeline(
        self,
        points: Sequence[Point],
        thresholds: Thresholds,
        events: Iterable[tuple[int, Event]] | None = None,
        *,
        x_mode: str | None = None,
    ) -> None:
        """Show ``points`` (``Analysis.timeline``) against ``thresholds``.

        ``events`` is optional: ``(request index, Event)`` pairs as returned by
        ``whatif.request_events(session)``. With them, compaction markers carry
        the log's own before/after counts and times; without them, markers come
        from each point's ``events`` and read before/after off the curve.
        """
        if x_mode is not None:
            if x_mode not in X_MODES:
                raise ValueError(f"x_mode must be one of {X_MODES}, not {x_mode!r}")
            self.x_mode = x_mode
        self.set_view(
            tv.build(
                points,
                thresholds,
                events,
                x_mode=self.x_mode,
                predicted=self.predicted,
                budget=self.budget_marks,
                attribution=self.view.attribution if self.view else None,
            )
        )

    def set_analysis(self, analysis: Analysis) -> None:
        """The view of ``analysis``: the same session analysed with another policy or
        window only moves the lines; anything else redraws everything."""
        self.set_view(
            tv.from_analysis(
                analysis, x_mode=self.x_mode, budget=self.budget_marks, previous=self.view
            )
        )

    def set_thresholds(self, thresholds: Thresholds) -> None:
        """Move the threshold lines, recolour tiers and replay the what-if (no rebuild)."""
        if self.view is None:
            self.set_timeline([], thresholds)
        else:
            self.set_view(tv.with_thresholds(self.view, thresholds))

    def set_predicted(self, indices: Sequence[int]) -> None:
        """Mark the requests before which the policy predicts a compaction."""
        if self.view is None:
            self._pending = (tuple(indices), self._pending[1])
        else:
            self.set_view(tv.with_predicted(self.view, indices))

    def set_budget_marks(self, marks: Iterable[tuple[int, str, str]]) -> None:
        """Vertical markers at the requests where a budget was crossed.

        ``marks`` are ``(request index, kind, label)``; kind ``"warn"`` draws in
        the warn tier's colour, anything else (``"limit"``) in the hard tier's.
        An empty list removes them. They survive new timelines (x mode changes).
        """
        if self.view is None:  # no session yet: on the request numbers
            self._pending = (self._pending[0], tuple(marks))
            self.marks_layer.draw_budget(tv.budget_spots(EMPTY, self._pending[1]))
        else:
            self.set_view(tv.with_budget(self.view, marks))

    def set_x_mode(self, mode: str) -> str:
        """``"index"`` or ``"time"``; returns the mode in use (index without timestamps)."""
        if mode not in X_MODES:
            raise ValueError(f"x_mode must be one of {X_MODES}, not {mode!r}")
        self.x_mode = mode
        if self.view is not None:
            self.set_view(tv.with_x_mode(self.view, mode))
        # no session yet: the mode asked for (kept for the next start); else the one in use
        self.menu.sync("time", (mode if self.view is None else self.data.x_mode) == "time")
        return self.data.x_mode

    def select_request(self, index: int | None) -> None:
        """Mirror a selection made elsewhere: ring the point and pan to it if off-screen."""
        self.selected_index = index
        self.picker.select(index)

    def reset_view(self) -> None:
        """Everything in view: all requests, 0 up to the window (or the peak)."""
        vb, view = self.getPlotItem().vb, self.view
        window = view.thresholds.window if view is not None else None
        (x0, x1), y_top = geometry.full_range(
            self.data,
            window,
            view.marks_x() if view is not None else [],
            self.shown.subagents,
            self.shown.auxiliary,
        )
        top = y_top * self.legend_layout.headroom(LABEL_ROOM_PX)
        span = max(x1 - x0, 1.0)
        # zooming out stops at zero tokens and half the session's span either side
        vb.setLimits(xMin=x0 - span / 2, xMax=x1 + span / 2, yMin=0, yMax=max(top * 4, 1.0))
        vb.setRange(xRange=(x0, x1), yRange=(0, top), padding=0)
        self.bars.reset_range(view)
        self._auto_view = True
        self._layout_labels()

    # -- toggles (the menu's actions call them) ------------------------------------
    def toggles(self) -> dict[str, bool]:
        """What the menu's check marks ask for (the time axis: as asked, even when a
        session without timestamps falls back to request numbers)."""
        return {**self.menu.checked(), "time": self.x_mode == "time"}

    def set_toggles(self, toggles: dict[str, bool]) -> None:
        """Tick the menu's actions as ``toggles`` says (unknown keys ignored)."""
        self.menu.set_checked(toggles)

    def _toggle_time(self, on: bool) -> None:
        self.set_x_mode("time" if on else "index")

    def set_show_subagents(self, show: bool) -> None:
        self._set_shown("subagents", show, self.curves.show_subagents)

    def set_show_auxiliary(self, show: bool) -> None:
        self._set_shown("auxiliary", show, self.curves.show_auxiliary)

    def set_cache_view(self, on: bool) -> None:
        """Stacked cache read / cache write / uncached areas under the curves."""
        self._set_shown("cache", on, self.bars.show_cache)

    def set_show_output(self, show: bool) -> None:
        self._set_shown("output", show, self.bars.show_output)

    def set_show_whatif(self, show: bool) -> None:
        self._set_shown("whatif", show, self.whatif_layer.show)

    def _set_shown(self, key: str, on: bool, layer_show: Callable[[bool], None]) -> None:
        setattr(self.shown, key, bool(on))
        layer_show(bool(on))
        self._update_legend()
        self.menu.sync(key, on)
        if key in ("subagents", "auxiliary"):  # the selection and the range follow
            self.picker.select(self.selected_index)
            if self._auto_view:
                self.reset_view()

    def _update_legend(self, *, predicted: bool | None = None) -> None:
        """Top left, naming only what is drawn: one row, or as few as fit the view."""
        v, s = self.view, self.shown
        d = self.data
        fires = s.whatif and v is not None and bool(v.whatif.replay.count)
        self.legend_layout.show(
            [
                (self.api_curve, "API prompt tokens", v is not None and v.has_api),
                (self.estimate_curve, "estimate", len(d.main) > 0),
                (self.subagent_scatter, "sub-agents", s.subagents and len(d.subagent) > 0),
                (self.auxiliary_scatter, "side calls", s.auxiliary and len(d.auxiliary) > 0),
                (self.whatif_markers, "what-if compaction", fires),
                (self.whatif_curve, "what-if tokens", fires),
                (
                    self.predicted_markers,
                    "predicted compaction",
                    bool(self.predicted) if predicted is None else predicted,
                ),
                (self.cache_areas["cache_read"], "cache read", s.cache),
                (self.cache_areas["cache_write"], "cache write", s.cache),
                (self.cache_areas["uncached"], "uncached", s.cache),
                (self.output_curve, "output (right axis)", s.output and bool(v and v.has_output)),
            ]
        )

    def _layout_labels(self) -> None:
        """Keep threshold and event labels from overlapping at the current zoom."""
        vb = self.getPlotItem().vb
        self.lines.layout(vb)
        ceiling = self.view.thresholds.window if self.view is not None else None
        self.marks_layer.layout(vb, ceiling, self.lines.label_rects())

    def _on_view_resized(self) -> None:
        self.bars.follow()
        self.legend_layout.fit()
        self.whatif_layer.fit_title()
        if self._auto_view and self.view is not None and self.view.points:
            self.reset_view()  # the legend's room is in pixels
        self._layout_labels()

    def _on_view_range_changed(self, *_: object) -> None:
        self._layout_labels()
        self.bars.fit_bars()

    def _on_view_changed_manually(self, *_: object) -> None:
        self._auto_view = False

    # -- the pointer --------------------------------------------------------------
    # pyqtgraph leaves presses on empty plot space unaccepted; the plot does use
    # every click (pick, double-click reset, pan), so say so to Qt.
    def mousePressEvent(self, ev: QMouseEvent) -> None:
        super().mousePressEvent(ev)
        ev.accept()

    def mouseReleaseEvent(self, ev: QMouseEvent) -> None:
        super().mouseReleaseEvent(ev)
        ev.accept()

    def mouseDoubleClickEvent(self, ev: QMouseEvent) -> None:
        super().mouseDoubleClickEvent(ev)
        ev.accept()

    def leaveEvent(self, ev: Any) -> None:
        super().leaveEvent(ev)
        self._on_hover(None)

    def show_hover(self, hit: Hit | None) -> None:
        """Show the readout of ``(index, x, y)`` next to the point, or hide it."""
        self.picker.show_hover(hit)

    def _on_scene_mouse_clicked(self, ev: Any) -> None:
        if ev.button() != Qt.MouseButton.LeftButton:
            return
        if ev.double():
            self.reset_view()
            return
        hit = self.picker.pick(ev.scenePos())
        if hit is not None:
            self.request_clicked.emit(hit[0])

    def _on_scene_mouse_moved(self, scene_pos: QPointF) -> None:
        self._on_hover(self.picker.pick(scene_pos))

    def _on_hover(self, hit: Hit | None) -> None:
        index = -1 if hit is None else hit[0]
        if index != self.hovered_index:
            self.hovered_index = index
            self.request_hovered.emit(index)
        self.picker.show_hover(hit)
