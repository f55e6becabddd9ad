"""Colours, pens and the token axis of the timeline plot.

Tier colours come from ``widgets/palette.py`` (shared with every other view); the
series colours live here because only the timeline draws them. Every colour
has a light and a dark variant, picked by ``palette.is_dark()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from ctxviewer.analysis.thresholds import TIERS
from ctxviewer.gui.widgets.palette import tier_color

# name -> (light theme, dark theme)
_SERIES: dict[str, tuple[str, str]] = {
    "background": ("#ffffff", "#1e2023"),
    "foreground": ("#3a3f45", "#c9ccd1"),
    "api": ("#2f6fc0", "#6fa8ef"),
    "estimate": ("#7d97bf", "#8fa9d1"),  # a paler API blue: the same curve, estimated
    "subagent": ("#129d8f", "#2fc1b0"),
    "auxiliary": ("#9aa0a8", "#7d838b"),
    "output": ("#7f8a99", "#8d97a5"),
    "cache_read": ("#8fc3e8", "#2f5d80"),
    "cache_write": ("#f2b872", "#80592a"),
    "uncached": ("#d9a0c4", "#7a3f63"),
    "effective": ("#6b5fa8", "#a89ce0"),
    "window": ("#222222", "#e6e6e6"),
    "event": ("#444a52", "#b8bec6"),
    "overflow": ("#b02020", "#ff7070"),
    "whatif": ("#c0249a", "#f060d0"),
    "selection": ("#111111", "#ffffff"),
    "label_fill": ("#ffffff", "#1e2023"),  # drawn with LABEL_ALPHA
}


LABEL_ALPHA = 225


def series_color(name: str, dark: bool = False) -> QColor:
    light, dark_ = _SERIES[name]
    return QColor(dark_ if dark else light)


def line_color(key: str, dark: bool = False) -> QColor:
    """Colour of the threshold line ``key`` (warn/auto/hard share the tier colours)."""
    if key in TIERS:
        return tier_color(key, dark)
    return series_color(key if key in _SERIES else "effective", dark)


def label_fill(dark: bool = False) -> QColor:
    """Background of the labels on the plot: the plot colour, nearly opaque."""
    return faint(series_color("label_fill", dark), LABEL_ALPHA)


def blend(color: QColor, background: QColor, alpha: int) -> QColor:
    """``color`` at ``alpha`` over ``background``, as an opaque colour (opaque fills
    paint about twice as fast as translucent ones when thousands overlap)."""
    a = alpha / 255
    fg = (color.redF(), color.greenF(), color.blueF())
    bg = (background.redF(), background.greenF(), background.blueF())
    return QColor.fromRgbF(*(a * c + (1 - a) * b for c, b in zip(fg, bg, strict=True)))


def faint(color: QColor, alpha: int) -> QColor:
    c = QColor(color)
    c.setAlpha(alpha)
    return c


@dataclass(frozen=True)
class LineStyle:
    """How each threshold line is drawn: colour key, Qt pen style, width."""

    style: Qt.PenStyle
    width: float


LINE_STYLES: dict[str, LineStyle] = {
    "warn": LineStyle(Qt.PenStyle.DashLine, 1.2),
    "auto": LineStyle(Qt.PenStyle.SolidLine, 1.6),
    "hard": LineStyle(Qt.PenStyle.DashLine, 1.4),
    "effective": LineStyle(Qt.PenStyle.DotLine, 1.4),
    "window": LineStyle(Qt.PenStyle.SolidLine, 1.2),
    "target": LineStyle(Qt.PenStyle.DashDotLine, 1.2),
}


def threshold_pen(key: str, dark: bool = False) -> pg.QtGui.QPen:
    s = LINE_STYLES[key]
    return pg.mkPen(line_color(key, dark), width=s.width, style=s.style)


def format_tokens(n: float) -> str:
    """``167000`` -> ``167k``, ``1250000`` -> ``1.25M``, ``950`` -> ``950``."""
    a = abs(n)
    if a >= 1_000_000:
        return f"{n / 1_000_000:.3g}M"
    if a >= 1_000:
        return f"{n / 1_000:.4g}k"
    return f"{n:.0f}"


def style_axes(plot_item: pg.PlotItem, dark: bool) -> None:
    """Axes in the foreground colour, a faint grid."""
    fg = series_color("foreground", dark)
    for name in ("left", "right", "bottom"):
        axis = plot_item.getAxis(name)
        axis.setPen(fg)
        axis.setTextPen(fg)
    plot_item.showGrid(x=True, y=True, alpha=0.12)


def set_bottom_axis(plot_item: pg.PlotItem, mode: str, dark: bool) -> None:
    """Dates on the bottom axis for ``mode`` "time", request numbers for "index"."""
    want_date = mode == "time"
    if isinstance(plot_item.getAxis("bottom"), pg.DateAxisItem) != want_date:
        axis = pg.DateAxisItem("bottom") if want_date else pg.AxisItem("bottom")
        plot_item.setAxisItems({"bottom": axis})
        style_axes(plot_item, dark)
    plot_item.setLabel("bottom", "time" if want_date else "request #")


class TokenAxis(pg.AxisItem):
    """An axis whose ticks read ``150k`` instead of ``1.5e5`` or ``150 (x1000)``."""

    def __init__(self, orientation: str, **kwargs: Any) -> None:
        super().__init__(orientation, **kwargs)
        self.enableAutoSIPrefix(False)

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        return [format_tokens(v * scale) for v in values]


class Bars(pg.BarGraphItem):
    """Bars from 0 drawn in one ``drawRects`` call (fast at 5,000), with the
    ``getData()`` of a curve so tests read them like any other item.

    Thin stems drawn with a wide pen cost ~1 s per paint at 5,000 requests.
    """

    def setData(self, x: np.ndarray, height: np.ndarray, width: float) -> None:
        self.setOpts(
            x=np.asarray(x, dtype=float), height=np.asarray(height, dtype=float), width=width
        )

    def getData(self) -> tuple[np.ndarray, np.ndarray]:
        x, h = self.opts.get("x"), self.opts.get("height")
        empty = np.empty(0)
        return (empty if x is None else np.asarray(x), empty if h is None else np.asarray(h))
