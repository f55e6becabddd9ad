"""View > Theme applies at once: Qt's widgets, the models' colours and the plots (built
anew in the theme's colours, showing what they showed); System goes back to the
platform's style and colours."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from ctxviewer.gui.session.breakdown_model import BreakdownModel
from ctxviewer.gui.widgets.palette import category_color, is_dark


def test_view_theme_applies_at_once(qtbot, qapp, window, open_and_wait, trace_path):
    style = qapp.style().name()
    window.resize(1200, 800)
    window.show()
    open_and_wait(window, trace_path)
    window.state.select_request(3)
    plot = window.timeline.plot
    points = len(plot.points)
    compare = window.panels["analysis_panels"].compare.tab
    actions = window.panels["help_menu"].theme_actions
    try:
        actions["dark"].trigger()
        assert is_dark() and window.settings.theme() == "dark"
        assert qapp.style().name().lower() == "fusion"
        # the plots were built anew in dark colours, showing the same session
        qtbot.waitUntil(lambda: window.timeline.plot is not plot, timeout=5000)
        new = window.timeline.plot
        assert new.dark and len(new.points) == points and new.selected_index == 3
        assert window.timeline.layout().indexOf(new) == 0 and window.timeline.layout().count() == 1
        assert compare.plot.dark
        assert window.timeline_plot() is new
        # the models' colours follow (re-published once the children have the palette)
        model: BreakdownModel = window.breakdown.model
        qtbot.waitUntil(
            lambda: (
                model.index(0, 0).data(Qt.ItemDataRole.DecorationRole)
                == category_color("system_prompt", dark=True)
            ),
            timeout=5000,
        )
        assert window.state.index == 3
        actions["auto"].trigger()
        assert not is_dark() and qapp.style().name() == style
        qtbot.waitUntil(lambda: not window.timeline.plot.dark, timeout=5000)
        qtbot.waitUntil(
            lambda: (
                model.index(0, 0).data(Qt.ItemDataRole.DecorationRole)
                == category_color("system_prompt", dark=False)
            ),
            timeout=5000,
        )
    finally:
        from ctxviewer.gui.widgets.theme import apply_theme

        apply_theme(QApplication.instance(), "auto")
