"""The sources of a session ranked in a horizontal bar chart (the costliest on top).

``SourcesPlot`` is a thin ``PlotWidget``: ``set_sources`` takes the core
``Sources``; ``select`` marks one. Items are public so tests read data, not
pixels: ``bars`` (one ``BarGraphItem``: ``opts["y"]`` the rows, ``opts["width"]``
the values), ``picked`` (the marked bar), ``shown`` (the sources drawn, top
first), ``metric`` (``usd`` or ``tokens``). A click on a bar emits
``source_clicked`` with its ``Source``.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtWidgets import QWidget

from ctxviewer.analysis.insights import Source, Sources
from ctxviewer.fmt import fmt_tokens, short_text
from ctxviewer.gui.timeline.style import series_color
from ctxviewer.gui.widgets.palette import is_dark
from ctxviewer.gui.widgets.plot_paint import paint_cheaply

TOP = 20  # bars drawn; the table lists every source
LABEL_CHARS = 34


def label(s: Source) -> str:
    return short_text(f"{s.kind.replace('_', ' ')}: {s.name}", LABEL_CHARS)


class ValueAxis(pg.AxisItem):
    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.metric = "usd"

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        if self.metric == "tokens":
            return [fmt_tokens(v) for v in values]
        digits = 0 if spacing >= 1 else 2 if spacing >= 0.01 else 4
        return [f"${v:,.{digits}f}" for v in values]


class SourcesPlot(pg.PlotWidget):
    source_clicked = Signal(object)  # Source

    def __init__(self, parent: QWidget | None = None, *, dark: bool | None = None) -> None:
        self.dark = is_dark() if dark is None else dark
        self.value_axis = ValueAxis("bottom")
        super().__init__(parent, axisItems={"bottom": self.value_axis})
        paint_cheaply(self)
        self.setBackground(series_color("background", self.dark))
        fg = series_color("foreground", self.dark)
        p = self.getPlotItem()
        p.hideButtons()
        p.setMenuEnabled(False)
        p.showGrid(x=True, y=False, alpha=0.12)
        p.vb.setMouseEnabled(x=False, y=False)
        for name in ("left", "bottom"):
            p.getAxis(name).setPen(fg)
            p.getAxis(name).setTextPen(fg)
        p.getAxis("left").setWidth(220)
        p.getAxis("bottom").enableAutoSIPrefix(False)
        self.shown: list[Source] = []
        self.metric = "usd"
        self.bars = pg.BarGraphItem(
            x0=[], y=[], width=[], height=0.7, pen=None, brush=series_color("api", self.dark)
        )
        self.picked = pg.BarGraphItem(
            x0=[],
            y=[],
            width=[],
            height=0.7,
            pen=pg.mkPen(series_color("selection", self.dark), width=1.5),
            brush=series_color("cache_write", self.dark),
        )
        p.addItem(self.bars)
        p.addItem(self.picked)
        self.scene().sigMouseClicked.connect(self._on_scene_clicked)

    def value(self, s: Source) -> float:
        return float(s.cost_usd or 0.0) if self.metric == "usd" else float(s.token_requests)

    def set_sources(self, sources: Sources | None) -> None:
        """The ``TOP`` costliest sources; ranked by tokens x requests when a price is
        missing (their dollars are unknown)."""
        shown = list(sources.top(TOP)) if sources is not None else []
        priced = bool(shown) and all(s.cost_usd is not None for s in shown)
        self.metric = "usd" if priced else "tokens"
        if not priced:
            shown.sort(key=lambda s: -s.token_requests)
        self.shown = shown
        self.value_axis.metric = self.metric
        n = len(shown)
        y = np.arange(n - 1, -1, -1, dtype=float)  # the first on top
        widths = np.array([self.value(s) for s in shown], dtype=float)
        self.bars.setOpts(x0=np.zeros(n), y=y, width=widths, height=0.7)
        self.getPlotItem().getAxis("left").setTicks(
            [[(float(y[i]), label(s)) for i, s in enumerate(shown)], []]
        )
        self.getPlotItem().setLabel(
            "bottom",
            "USD: what carrying it cost"
            if priced
            else "tokens x requests (a price is missing: dollars unknown)",
        )
        self.select(None)
        top = float(widths.max()) if n else 1.0
        self.getPlotItem().setXRange(0, max(top, 1e-9) * 1.05, padding=0)
        self.getPlotItem().setYRange(-0.6, max(n, 1) - 0.4, padding=0)

    def select(self, source: Source | None) -> None:
        """Mark ``source``'s bar (nothing when it is not drawn)."""
        i = next((k for k, s in enumerate(self.shown) if s is source), None)
        if i is None:
            self.picked.setOpts(x0=[], y=[], width=[])
            return
        self.picked.setOpts(
            x0=[0.0], y=[float(len(self.shown) - 1 - i)], width=[self.value(source)]
        )

    def _on_scene_clicked(self, event: object) -> None:
        pos = event.scenePos()  # type: ignore[attr-defined]
        if event.button() != Qt.MouseButton.LeftButton or not self.shown:  # type: ignore[attr-defined]
            return
        vb = self.getPlotItem().vb
        if not vb.sceneBoundingRect().contains(pos):
            return
        y = vb.mapSceneToView(QPointF(pos)).y()
        i = len(self.shown) - 1 - round(y)
        if 0 <= i < len(self.shown) and abs(y - round(y)) <= 0.45:
            self.source_clicked.emit(self.shown[i])
