"""Layout at the sizes users have: the side panes give way first, and the timeline
keeps its right axis and every request in view after option changes."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt


@pytest.mark.parametrize(("width", "height"), [(1024, 700), (1400, 900)])
def test_the_request_list_gives_way_in_a_narrower_window(qtbot, window, width, height):
    window.resize(1800, 1000)
    window.show()
    qtbot.waitExposed(window)
    total = sum(window.splitter.sizes())
    window.splitter.setSizes([int(total * 0.45), int(total * 0.3), int(total * 0.25)])
    window.resize(width, height)
    qtbot.waitUntil(lambda: sum(window.splitter.sizes()) < width)
    left, centre, right = window.splitter.sizes()
    total = left + centre + right
    assert left <= total * 0.30 + 1
    assert centre >= total * 0.5


@pytest.mark.parametrize("width", [1024, 1400, 1600])
def test_a_wider_window_gives_the_centre_more(width):
    """The default split: the centre is half the window or more at every size, and
    never narrower in a wider window (at 1400 it was narrower than at 1024)."""
    from ctxviewer.gui.session.window_layout import default_split

    need = 480  # a request list with a wide Events column
    left, centre, right = default_split(width, need)
    assert left + centre + right == width
    assert centre >= width * 0.5
    assert centre >= default_split(1024, need)[1]


def test_timeline_keeps_its_right_axis_and_every_request_after_a_policy_change(
    qtbot, window, open_and_wait, trace_path
):
    window.resize(1400, 900)
    window.show()
    qtbot.waitExposed(window)
    a = open_and_wait(window, trace_path)
    window.tabs.setCurrentWidget(window.timeline)
    plot = window.timeline.plot
    policy = window.controls.policy_combo
    with qtbot.waitSignal(window.state.analysis_changed, timeout=20000):
        policy.setCurrentIndex(policy.findData("qwen"))
    qtbot.waitUntil(lambda: not window.loader.is_busy(), timeout=20000)
    pi = plot.getPlotItem()
    need = pi.effectiveSizeHint(Qt.SizeHint.MinimumSize).width()
    assert need <= plot.width()  # nothing pushed out of the tab: the right axis shows
    assert pi.getAxis("right").isVisible()
    title = pi.titleLabel
    assert title.text.startswith("policy qwen:") and title.toolTip() == title.text
    x0, x1 = pi.vb.viewRange()[0]
    main = [p.index for p in a.timeline if p.role == "main" and not p.sidechain]
    assert x0 <= min(main) and x1 >= max(main)


def test_zooming_out_stops_at_zero(qtbot, window, open_and_wait, trace_path):
    window.resize(1400, 900)
    window.show()
    qtbot.waitExposed(window)
    open_and_wait(window, trace_path)
    window.tabs.setCurrentWidget(window.timeline)
    vb = window.timeline.plot.getPlotItem().vb
    (x0, x1), _ = vb.viewRange()
    vb.scaleBy((20, 20))  # far out, as the mouse wheel would
    (nx0, nx1), (ny0, ny1) = vb.viewRange()
    assert ny0 >= 0 and ny1 > 0
    span = x1 - x0
    assert nx0 >= x0 - span and nx1 <= x1 + span


def test_a_window_bigger_than_the_screen_shrinks_to_fit_it(qtbot, window):
    """A default size (1400x900) or a size saved on a bigger monitor, on a smaller screen:
    the window fits the screen's free area, centred, and a window that fits is left."""
    from PySide6.QtGui import QGuiApplication

    from ctxviewer.gui.session.window_layout import FRAME_ROOM, fit_to_screen

    free = QGuiApplication.primaryScreen().availableGeometry()  # offscreen: 800x600
    window.resize(free.width() + 600, free.height() + 300)
    assert fit_to_screen(window)
    assert window.width() + FRAME_ROOM[0] <= free.width()
    assert window.height() + FRAME_ROOM[1] <= free.height()
    assert free.contains(window.geometry())
    small = (free.width() // 2, free.height() // 2)
    window.resize(*small)
    assert not fit_to_screen(window)
    assert (window.width(), window.height()) == small
