"""The timeline's legend: names only what is drawn, in as few rows as fit.

A part of ``TimelinePlot`` by composition: the plot says which of its items are
shown (``show``) and when its view was resized (``fit``); this lays the legend
out in the fewest rows that fit the view's width while taking at most
``SHARE`` of its height, else in the short names (``SHORT``).
"""

from __future__ import annotations

from collections.abc import Sequence

import pyqtgraph as pg

SHARE = 0.25  # the most of the view's height the legend's rows may take
SHORT = {
    "API prompt tokens": "API prompt",
    "what-if compaction": "what-if",
    "predicted compaction": "predicted",
    "output (right axis)": "output (right)",
}


class TimelineLegend:
    """A ``pg.LegendItem`` over a view box, refilled only when its names change."""

    def __init__(self, legend: pg.LegendItem, view: pg.ViewBox) -> None:
        self.legend = legend
        self.view = view
        self.shown: list[tuple[object, str]] = []  # (item, long name) in the legend
        self._names: tuple[str, ...] | None = ()  # the names it holds now

    def show(self, entries: Sequence[tuple[object, str, bool]]) -> None:
        """The (item, name, drawn) entries: the drawn ones get a row, in this order."""
        self.shown = [(item, name) for item, name, on in entries if on]
        self._names = None  # items changed: fill it again
        self.fit()

    def _fill(self, names: tuple[str, ...]) -> None:
        if names != self._names:
            self.legend.clear()
            for (item, _), name in zip(self.shown, names, strict=True):
                self.legend.addItem(item, name)
            self._names = names

    def fit(self) -> None:
        """The fewest rows that fit the view's width within ``SHARE`` of its height; in
        short names where the long ones do not fit so; cut at the right past that."""
        shown = self.shown
        room = self.view.width() - 16
        long_names = tuple(name for _, name in shown)
        for names in (long_names, tuple(SHORT.get(n, n) for n in long_names)):
            self._fill(names)
            columns = max(1, len(shown))
            fits = False
            for rows in range(1, len(shown) + 1):
                cols = -(-len(shown) // rows)
                self.legend.setColumnCount(cols)
                rect = self.legend.boundingRect()
                if rows > 1 and rect.height() > SHARE * self.view.height():
                    break  # taller than that hides the plot: keep the previous count
                columns = cols
                if rect.width() <= room or room <= 0:
                    fits = True
                    break
            self.legend.setColumnCount(columns)
            if fits:
                return

    def headroom(self, label_room: float) -> float:
        """How much higher than the highest line or point the view's top must be: room
        for the legend and ``label_room`` pixels (at most a third of the view)."""
        height = float(self.view.height())
        room = float(self.legend.boundingRect().height()) + label_room
        share = min(room / height, 1 / 3) if height > 0 else 0.1
        return 1 / (1 - share)
