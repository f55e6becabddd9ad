"""The window at 1024x700: notes in one line with the rest on demand, the content pane
folded away on the tabs where it shows nothing, Compare's table with room for its rows
on a Codex rollout, threshold labels no line strikes through, and a split restored
within sane bounds."""

from __future__ import annotations

from PySide6.QtCore import QByteArray

from ctxviewer.gui.app import build_main_window
from ctxviewer.gui.app_settings import AppSettings
from ctxviewer.gui.session.window_layout import LIST_FLOOR

CODEX = "codex/Mai0313__VibeCodingTracker__tests_fixtures_sessions_codex.jsonl"


def small(qtbot, window):
    window.resize(1024, 700)
    window.show()
    qtbot.waitExposed(window)
    return window


def test_compare_shows_eight_rows_on_a_codex_rollout(qtbot, window, corpus, open_and_wait):
    small(qtbot, window)
    open_and_wait(window, str(corpus / CODEX))
    compare = window.panels["analysis_panels"].compare
    window.show_tab(compare.tab)
    qtbot.waitUntil(lambda: compare.tab.model.rowCount() > 0, timeout=30000)
    table = compare.tab.table
    rows = table.viewport().height() // table.verticalHeader().defaultSectionSize()
    assert rows >= 8, (rows, compare.tab.splitter.sizes())
    # the notes above the tabs take one line: the Codex rollout has four
    notes = window.bar_panel.notes
    assert len(notes.lines) >= 3 and notes.more.text() == f"+{len(notes.lines) - 1} more"
    one_line = notes.height()
    assert one_line < 2 * notes.label.fontMetrics().height()
    notes.more.click()  # the details on demand
    qtbot.waitUntil(lambda: notes.height() > 2 * one_line, timeout=5000)
    assert notes.label.text() == notes.text() and notes.more.text() == "less"
    notes.more.click()
    assert notes.label.text() != notes.text()


def test_the_content_pane_folds_where_it_shows_nothing(qtbot, window, open_and_wait, trace_path):
    small(qtbot, window)
    open_and_wait(window, trace_path)
    window.show_tab(window.breakdown)
    width = window.splitter.sizes()[2]
    assert window.content.isVisible() and width > 100
    window.show_tab(window.timeline)
    assert window.content.isHidden()
    qtbot.waitUntil(lambda: window.splitter.sizes()[2] == 0, timeout=5000)
    centre = window.splitter.sizes()[1]
    window.show_tab(window.breakdown)
    assert window.content.isVisible()
    qtbot.waitUntil(lambda: window.splitter.sizes()[2] == width, timeout=5000)
    assert window.splitter.sizes()[2] == width, (window.splitter.sizes(), width)
    assert centre > window.splitter.sizes()[1]


def test_threshold_labels_stand_above_every_line(qtbot, window, open_and_wait, trace_path):
    small(qtbot, window)
    open_and_wait(window, trace_path)
    lines = window.timeline.plot.threshold_lines.values()
    strokes = [ln.stroke.zValue() for ln in lines]
    labels = [ln.zValue() for ln in lines]
    assert max(strokes) < min(labels)
    assert all(ln.label.fill.color().alpha() == 255 for ln in lines)
    assert all(
        ln.stroke.value() == ln.value() and ln.stroke.isVisible() == ln.isVisible() for ln in lines
    )


def test_a_narrowed_list_is_restored_within_bounds(qtbot, window):
    small(qtbot, window)
    total = sum(window.splitter.sizes())
    window.splitter.setSizes([30, total - 30 - 200, 200])  # narrowed to a sliver
    window.close()
    assert AppSettings().state("splitter") is not None
    again = build_main_window(settings=AppSettings())
    qtbot.addWidget(again)
    small(qtbot, again)
    sizes = again.splitter.sizes
    qtbot.waitUntil(lambda: sizes()[0] >= int(LIST_FLOOR * sum(sizes())), timeout=5000)
    assert isinstance(AppSettings().state("splitter"), QByteArray)
