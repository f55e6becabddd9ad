"""Cheap plot repaints look the same as pyqtgraph's own painting, after changes too."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtWidgets import QGraphicsItem

from ctxviewer.gui.plot_paint import paint_cheaply


def _plot(qtbot, cheap: bool, text: str) -> tuple[pg.PlotWidget, pg.TextItem]:
    w = pg.PlotWidget(background="w")
    if cheap:
        paint_cheaply(w)
    w.resize(400, 300)
    w.showGrid(x=True, y=True, alpha=0.12)
    w.setXRange(0, 10, padding=0)
    w.setYRange(0, 7.3, padding=0)  # grid lines between pixel rows
    w.setTitle("a title")
    w.plot([0, 3, 10], [1, 6, 2], pen="b")
    label = pg.TextItem(text, color="k", anchor=(0, 0))
    label.setPos(2, 6)
    w.addItem(label)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    return w, label


@pytest.mark.parametrize("changes", [False, True])
def test_cheap_paint_looks_like_plain_paint(qtbot, changes):
    cheap, label = _plot(qtbot, True, "before" if changes else "after")
    first = cheap.grab().toImage()
    assert label.textItem.cacheMode() == QGraphicsItem.CacheMode.DeviceCoordinateCache
    assert cheap.getPlotItem().getAxis("left").cacheMode() != QGraphicsItem.CacheMode.NoCache
    if changes:  # the text and the view change after the pixmaps were made
        label.setText("after")
        cheap.setXRange(0, 20, padding=0)
    plain, _ = _plot(qtbot, False, "after")
    if changes:
        plain.setXRange(0, 20, padding=0)
    image = cheap.grab().toImage()
    assert plain.getPlotItem().getAxis("left").cacheMode() == QGraphicsItem.CacheMode.NoCache
    assert image == plain.grab().toImage()
    assert (image != first) == changes
