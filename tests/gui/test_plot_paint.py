"""Cheap plot repaints look like pyqtgraph's own painting, after changes too."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QGraphicsItem

from ctxviewer.gui.widgets.plot_paint import paint_cheaply


def _plot(qtbot, cheap: bool, text: str, data: bool = False) -> tuple[pg.PlotWidget, pg.TextItem]:
    w = pg.PlotWidget(background="w")
    if cheap:
        paint_cheaply(w)
    w.resize(400, 300)
    w.showGrid(x=True, y=True, alpha=0.12)
    w.setXRange(0, 10, padding=0)
    w.setYRange(0, 7.3, padding=0)  # grid lines between pixel rows
    w.setTitle("a title")
    if data:  # a thick pure red line along y = 4, across the vertical grid lines
        w.plot([0, 10], [4, 4], pen=pg.mkPen((255, 0, 0), width=5))
    label = pg.TextItem(text, color="k", anchor=(0, 0))
    label.setPos(2, 6)
    w.addItem(label)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    return w, label


def _pixels(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    rows = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine())
    return rows[:, : image.width() * 4].reshape(image.height(), image.width(), 4)[..., :3].copy()


@pytest.mark.parametrize("changes", [False, True])
def test_cheap_paint_looks_like_plain_paint(qtbot, changes):
    """The same pixels but for the shade of grid lines (opaque lines in the colour the
    translucent ones take over the background: a level or two of rounding, and
    where two grid lines cross)."""
    cheap, label = _plot(qtbot, True, "before" if changes else "after")
    first = _pixels(cheap.grab().toImage())
    assert label.textItem.cacheMode() == QGraphicsItem.CacheMode.DeviceCoordinateCache
    assert cheap.getPlotItem().getAxis("left").cacheMode() != QGraphicsItem.CacheMode.NoCache
    if changes:  # the text and the view change after the pixmaps were made
        label.setText("after")
        cheap.setXRange(0, 20, padding=0)
    plain, _ = _plot(qtbot, False, "after")
    if changes:
        plain.setXRange(0, 20, padding=0)
    assert plain.getPlotItem().getAxis("left").cacheMode() == QGraphicsItem.CacheMode.NoCache
    image, expected = _pixels(cheap.grab().toImage()), _pixels(plain.grab().toImage())
    diff = np.abs(image.astype(int) - expected.astype(int)).max(axis=2)
    crossings = diff > 6  # where translucent lines cross they darken twice
    assert image.shape == expected.shape and diff.max() <= 24, diff.max()
    assert crossings.mean() < 0.005 and (diff > 0).mean() < 0.05, (
        crossings.sum(),
        (diff > 0).mean(),
    )
    assert bool((image != first).any()) == changes


def test_data_is_painted_over_the_grid(qtbot):
    cheap, _ = _plot(qtbot, True, "", data=True)
    plain, _ = _plot(qtbot, False, "", data=True)
    red = QColor(255, 0, 0).rgb()
    image = cheap.grab().toImage()
    y = next(y for y in range(image.height()) if image.pixel(200, y) == red) + 2  # y = 4
    row = [image.pixel(x, y) for x in range(60, 340)]
    assert set(row) == {red}  # no grid line tints it
    plain_row = [plain.grab().toImage().pixel(x, y) for x in range(60, 340)]
    assert red not in plain_row  # pyqtgraph draws the grid line at y = 4 over the data
