"""Error of each estimator over the requests: one curve per estimator, with a legend.

``CompareErrorPlot.set_comparison(c)`` draws ``100 * pct`` against the
request index; ``curves[name]`` is the public item of each estimator (tests
read ``getData()``). A dashed zero line marks a perfect count.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from ctxviewer.analysis.compare.scoring import Comparison
from ctxviewer.gui.timeline.style import faint, series_color
from ctxviewer.gui.widgets.palette import is_dark
from ctxviewer.gui.widgets.plot_paint import paint_cheaply

# estimator -> (light, dark); unknown names cycle through the spare colours
ESTIMATOR_COLORS: dict[str, tuple[str, str]] = {
    "qwen": ("#2f6fc0", "#6fa8ef"),
    "chars4": ("#7d97bf", "#9db4d8"),
    "shannon": ("#129d8f", "#2fc1b0"),
    "heuristic": ("#e08a1e", "#f2a440"),
    "cl100k": ("#7b61c9", "#9d86e9"),
    "o200k": ("#d2487f", "#ec6a9c"),
    "calibrated": ("#3c9a4b", "#5cc46b"),
    "anthropic": ("#222222", "#e6e6e6"),
}
_SPARE = (("#8c564b", "#c49c94"), ("#bcbd22", "#dbdb8d"), ("#17becf", "#9edae5"))


def estimator_color(name: str, dark: bool = False, k: int = 0) -> str:
    light, dark_ = ESTIMATOR_COLORS.get(name, _SPARE[k % len(_SPARE)])
    return dark_ if dark else light


class CompareErrorPlot(pg.PlotWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        self.dark = is_dark()
        super().__init__(parent, background=series_color("background", self.dark))
        paint_cheaply(self)  # repaints cost a tenth (gui/widgets/plot_paint.py)
        self.curves: dict[str, pg.PlotDataItem] = {}
        pi = self.getPlotItem()
        pi.hideButtons()
        fg = series_color("foreground", self.dark)
        for name in ("left", "bottom"):
            pi.getAxis(name).setPen(fg)
            pi.getAxis(name).setTextPen(fg)
        pi.showGrid(x=True, y=True, alpha=0.12)
        pi.setLabel("left", "error %")
        pi.setLabel("bottom", "request")
        self.legend = pi.addLegend(
            offset=(8, 4),
            colCount=8,
            labelTextSize="8pt",
            labelTextColor=fg,
            brush=faint(series_color("background", self.dark), 210),
        )
        self.zero_line = pg.InfiniteLine(
            0, angle=0, pen=pg.mkPen(fg, width=1, style=Qt.PenStyle.DashLine)
        )
        pi.addItem(self.zero_line)
        self.setMinimumHeight(60)  # a short window gives the table its rows first
        pi.vb.sigResized.connect(self._fit_legend)

    def _fit_legend(self, *_: object) -> None:
        """As many columns as fit the plot's width: one row where they all fit, else
        rows of fewer (a 1024 px window cut the eighth name, "calibrated", short)."""
        room = self.getPlotItem().vb.width() - 16
        count = max(len(self.curves), 1)
        for columns in range(count, 0, -1):
            self.legend.setColumnCount(columns)
            if self.legend.boundingRect().width() <= room:
                return

    def set_comparison(self, c: Comparison | None) -> None:
        pi = self.getPlotItem()
        names = list(c.estimators) if c is not None else []
        if names != list(self.curves):  # other estimators: new curves (else new data only)
            for item in self.curves.values():
                pi.removeItem(item)
            self.curves = {}
            self.legend.clear()
            for k, name in enumerate(names):
                color = estimator_color(name, self.dark, k)
                self.curves[name] = pi.plot(
                    [],
                    [],
                    pen=pg.mkPen(color, width=1.6),
                    name=name,
                    connect="finite",
                    symbol="o",
                    symbolSize=4,
                    symbolPen=None,
                    symbolBrush=color,
                )
        self._fit_legend()
        if c is None:
            return
        x = np.array([r.index for r in c.rows], dtype=float)
        all_y = [np.zeros(1)]
        for name, curve in self.curves.items():
            y = np.array(
                [np.nan if (p := r.pct(name)) is None else 100 * p for r in c.rows], dtype=float
            )
            curve.setData(x, y)
            all_y.append(y)
        pi.enableAutoRange(x=True)
        ys = np.concatenate(all_y)
        ys = ys[np.isfinite(ys)]
        lo, hi = (float(ys.min()), float(ys.max())) if ys.size else (-1.0, 1.0)
        lo, hi = min(lo, 0.0), max(hi, 0.0)
        span = max(hi - lo, 1.0)
        # head room above the data for the legend
        pi.setYRange(lo - 0.05 * span, hi + 0.45 * span, padding=0)
