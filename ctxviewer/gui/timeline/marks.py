"""Markers of the timeline: real compactions, predicted ones, budget crossings, the
what-if replay.

``MarksMixin`` is mixed into ``TimelinePlot`` (before ``pg.PlotWidget``). It
draws ``event_lines`` (compactions and overflows from the log),
``predicted_markers`` (``set_predicted``: where the agent's policy compacts),
``budget_lines`` (``set_budget_marks``), ``whatif_markers``/``whatif_curve``
and the what-if title for the current thresholds, and keeps the threshold and
event labels from overlapping at the current zoom. It reads the plot's
``points``, ``events``, ``data`` and ``thresholds``.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetricsF

from ctxviewer.analysis.whatif import replay
from ctxviewer.fmt import fmt_tokens
from ctxviewer.gui.timeline import data as td
from ctxviewer.gui.timeline import labels as tl
from ctxviewer.gui.timeline.style import label_fill, series_color
from ctxviewer.gui.widgets.palette import tier_color


class MarksMixin:
    """Event, budget and what-if markers of ``TimelinePlot`` (see the module docstring)."""

    def set_budget_marks(self, marks: Iterable[tuple[int, str, str]]) -> None:
        """Vertical markers at the requests where a budget was crossed.

        ``marks`` are ``(request index, kind, label)``; kind ``"warn"`` draws in
        the warn tier's colour, anything else (``"limit"``) in the hard tier's.
        An empty list removes them. They survive ``set_timeline`` (x mode changes).
        """
        pi = self.getPlotItem()
        for line in self.budget_lines:
            pi.removeItem(line)
        self.budget_marks = list(marks)
        self.budget_lines = []
        fill = pg.mkBrush(label_fill(self.dark))
        for k, (index, kind, label) in enumerate(sorted(self.budget_marks)):
            x = index if self.data.x_mode == "index" else self.data.x_of.get(index)
            if x is None:
                continue
            color = tier_color("warn" if kind == "warn" else "hard", self.dark)
            line = pg.InfiniteLine(
                pos=x, angle=90, movable=False,
                pen=pg.mkPen(color, width=1.6, style=Qt.PenStyle.DashDotLine), label=label,
                labelOpts={"position": 0.05 + 0.07 * (k % 2),  # neighbours stagger
                           "anchors": [(0, 1), (0, 1)], "color": color,
                           "fill": fill})
            line.setZValue(4)
            pi.addItem(line, ignoreBounds=True)
            self.budget_lines.append(line)

    def set_predicted(self, indices: Sequence[int]) -> None:
        """Mark the requests before which the policy predicts a compaction (at the size
        of the main request before each: what the agent would have compacted)."""
        d = self.data
        order = [int(i) for i in d.main.index]  # ascending request indices
        xs, ys = [], []
        for i in indices:
            if i not in d.x_of:
                continue
            k = bisect.bisect_left(order, i)  # after it: the last main request before ``i``
            own = k < len(order) and order[k] == i
            xs.append(d.x_of[i])
            ys.append(float(d.main.y[k - 1]) if k else float(d.main.y[k]) if own else 0.0)
        self.predicted = tuple(indices)
        self.predicted_markers.setData(xs, ys)
        self._update_legend()

    def _draw_events(self) -> None:
        pi = self.getPlotItem()
        for line in self.event_lines:
            pi.removeItem(line)
        self.marks = td.event_marks(self.points, self.data, self.events)
        self.event_lines = [tl.event_line(m, self.dark) for m in self.marks]
        for line in self.event_lines:
            pi.addItem(line, ignoreBounds=True)

    def _draw_whatif(self) -> None:
        if self.thresholds is None:
            return
        self.whatif = w = replay(self.points, self.thresholds, events=self.events)
        d = self.data
        self.whatif_markers.setData([d.x_of[f.index] for f in w.fired],
                                    [f.tokens for f in w.fired])
        real = {int(i): y for i, y in zip(d.main.index, d.main.y, strict=True)}
        fired = set(w.fired_indices)
        xs = np.array([d.x_of[i] for i, _ in w.simulated], dtype=float)
        ys = np.array([y if (y != real.get(i) or i in fired) else np.nan
                       for i, y in w.simulated], dtype=float)
        self.whatif_curve.setData(xs, ys)
        # the short form where the plot is too narrow for the long one
        self._title_forms = (f"{w.label()} \u00b7 window {w.window:,}",
                             f"policy {w.policy}: {w.count} would fire ({w.real_count} happened)"
                             f" \u00b7 window {fmt_tokens(w.window)}")
        self.setTitle(self._title_forms[0], size="9pt",
                      color=series_color("foreground", self.dark))
        self._fit_title()

    def _fit_title(self) -> None:
        """The what-if title in its long form, else its short one, cut to the plot's
        width; whole in its tooltip.

        pyqtgraph sizes a title to its text: a long one widened the plot past its
        tab, pushing the right axis and the last requests out of view."""
        label = self.getPlotItem().titleLabel
        forms = getattr(self, "_title_forms", None)
        if not label.text or not forms:
            return
        full, short = forms
        font = QFont(label.item.font())
        font.setPointSizeF(9)
        pi = self.getPlotItem()
        axes = sum(pi.getAxis(a).width() for a in ("left", "right") if pi.getAxis(a).isVisible())
        room = max(60.0, self.width() - axes - 16.0)
        metrics = QFontMetricsF(font)
        text = full if metrics.horizontalAdvance(full) <= room else short
        shown = metrics.elidedText(text, Qt.TextElideMode.ElideRight, room)
        color = series_color("foreground", self.dark).name()
        label.item.setHtml(f"<span style='color: {color}; font-size: 9pt'>{escape(shown)}</span>")
        label.updateMin()  # pyqtgraph had sized it to the whole text
        label.resizeEvent(None)
        label.setToolTip(full)

    def _layout_labels(self) -> None:
        """Keep threshold and event labels from overlapping at the current zoom."""
        vb = self.getPlotItem().vb
        tl.layout_threshold_labels(self.threshold_lines.values(), vb)
        ceiling = self.thresholds.window if self.thresholds is not None else None
        taken = [ln.label.sceneBoundingRect() for ln in self.threshold_lines.values()
                 if ln.isVisible() and ln.label.isVisible()]
        tl.layout_event_labels(self.event_lines, vb, ceiling, taken)
