"""The main window on real corpus files, opened through the load worker like a user does.

Every view is compared with the core: ``Analysis(...).breakdown(i)`` computed
here, independently of the window.
"""

from __future__ import annotations

from pathlib import Path

import orjson
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.breakdown import Breakdown
from ctxviewer.gui.session.content import ref_text
from ctxviewer.gui.widgets.context_bar import shown_categories
from ctxviewer.ingest import load

USER = Qt.ItemDataRole.UserRole


def assert_views_show(window, b: Breakdown) -> None:
    """Bar segments, legend and tree rows equal the core breakdown ``b``."""
    bar = window.bar_panel.bar
    expected = shown_categories(b)
    assert [(s.name, s.tokens) for s in bar.segments] == [(n, t) for n, _, t in expected]
    assert len(window.bar_panel.legend_labels) == len(expected)
    model = window.breakdown.model
    assert model.rowCount() == len(b.categories)
    for row, c in enumerate(b.categories):
        index = model.index(row, 0)
        assert (index.data(), model.index(row, 1).data()) == (c.label, f"{c.tokens:,}")
        assert [model.index(i, 0, index).data(USER) for i in range(model.rowCount(index))] == list(
            c.items
        )


def core(path: str, estimator: str = "qwen", policy: str = "qwen", window: int | None = None):
    return Analysis(load(path), estimator, policy, window)


def test_opens_a_claude_trace_and_shows_the_last_main_request(
    qtbot, window, open_and_wait, trace_path
):
    a = open_and_wait(window, trace_path)
    ref = core(trace_path)
    last = ref.resolve_index("last")
    assert window.state.index == last
    assert window.requests.current_row() == last
    b = ref.breakdown(last)
    assert_views_show(window, b)
    assert b.mode == "B" and window.bar_panel.bar.segments[-1].name == "autocompact_buffer"
    # the bar spans the whole window in mode B: segment widths are proportional to tokens
    bar_width = sum(s.rect.width() for s in window.bar_panel.bar.segments)
    assert abs(bar_width - window.bar_panel.bar._bar_rect().width()) < 0.5
    assert f"{b.used:,}" in window.bar_panel.headline.text()
    info = window.status.info_text()
    for part in (
        "badlogic",
        "claude-trace",
        "64 requests",
        "claude-sonnet-4-20250514",
        "window 200,000 (agent profile)",
        "Claude Code 1.0.6",
        "policy: Claude Code",
        "(agent profile)",
        "estimator qwen",
    ):
        assert part in info
    assert window.windowTitle().startswith("badlogic__lemmy")
    assert a.session.path == trace_path
    assert window.settings.recent_files()[0] == trace_path


def test_transcript_shows_the_unrecorded_overhead(qtbot, window, open_and_wait, transcript_path):
    open_and_wait(window, transcript_path)
    ref = core(transcript_path)
    b = ref.breakdown(ref.resolve_index("last"))
    assert_views_show(window, b)
    assert b.categories[0].name == "unrecorded_overhead"
    assert "not recorded" in window.bar_panel.notes.text()


def test_switching_requests_updates_bar_tree_and_content(
    qtbot, window, open_and_wait, transcript_path
):
    open_and_wait(window, transcript_path)
    ref = core(transcript_path)
    table = window.requests
    table.setFocus()
    with qtbot.waitSignal(window.state.breakdown_changed):
        table.selectRow(10)
    assert window.state.index == 10
    assert_views_show(window, ref.breakdown(10))
    QTest.keyClick(table, Qt.Key.Key_Down)
    assert window.state.index == 11
    assert_views_show(window, ref.breakdown(11))
    QTest.keyClick(table, Qt.Key.Key_Home)
    assert window.state.index == 0 and table.current_row() == 0
    QTest.keyClick(table, Qt.Key.Key_End)
    assert window.state.index == len(ref.session.requests) - 1
    # from anywhere: Alt+Left/Right step, Alt+Home/End jump
    window.content.text.setFocus()
    window.actions_.previous.trigger()
    assert window.state.index == len(ref.session.requests) - 2
    window.actions_.first.trigger()
    window.actions_.next.trigger()
    assert window.state.index == 1 and table.current_row() == 1
    assert_views_show(window, ref.breakdown(1))
    assert [s.toString() for s in window.actions_.next.shortcuts()] == ["Alt+Right"]
    assert [s.toString() for s in window.actions_.previous.shortcuts()] == ["Alt+Left"]
    # PgDn pages through the list (one screenful of rows), not one request
    window.resize(1400, 900)
    window.show()
    qtbot.waitExposed(window)
    window.actions_.first.trigger()
    table.setFocus()
    QTest.keyClick(table, Qt.Key.Key_PageDown)
    assert window.state.index > 1 and table.current_row() == window.state.index


def test_keyboard_shortcuts_reach_the_window(qtbot, window, open_and_wait, trace_path):
    open_and_wait(window, trace_path)
    with qtbot.waitActive(window):
        window.show()
        window.activateWindow()
    window.breakdown.tree.setFocus()
    start = window.state.index
    QTest.keyClick(window.breakdown.tree, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
    assert window.state.index == start - 1
    QTest.keyClick(window.breakdown.tree, Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)
    assert window.state.index == start
    QTest.keyClick(window.breakdown.tree, Qt.Key.Key_PageDown)  # scrolls the tree only
    QTest.keyClick(window.content.text, Qt.Key.Key_PageDown)  # scrolls the text only
    assert window.state.index == start
    QTest.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert window.breakdown.filter_edit.hasFocus()
    QTest.keyClicks(window.breakdown.filter_edit, "memory")
    QTest.keyClick(window.breakdown.filter_edit, Qt.Key.Key_Escape)  # clears the filter
    assert window.breakdown.filter_edit.text() == ""


def test_help_menu_and_tab_shortcuts(qtbot, window):
    from ctxviewer.gui.help.menu import shortcut_rows

    menus = {a.text().replace("&", ""): a.menu() for a in window.menuBar().actions()}
    assert list(menus)[-1] == "Help"
    view = [a.text().replace("&", "") for a in menus["View"].actions()]
    assert {"Breakdown", "Timeline", "Compare", "Insights", "Findings"} <= set(view)
    panel = window.panels["help_menu"]
    for action in panel.tab_actions:
        action.trigger()
        assert window.tabs.tabText(window.tabs.currentIndex()) == action.text().replace("&", "")
    assert [a.shortcut().toString() for a in panel.tab_actions] == ["Ctrl+3", "Ctrl+4", "Ctrl+5"]
    rows = dict(shortcut_rows(window))
    assert rows["Compare"] == "Ctrl+3" and rows["Previous request"] == "Alt+Left"
    assert rows["Keyboard shortcuts"] == "F1" and rows["Simulate compaction"] == "Ctrl+K"
    dialog = panel.show_shortcuts()
    qtbot.addWidget(dialog)
    assert dialog.table.rowCount() == len(rows)


def test_estimator_policy_and_window_controls_update_the_views(
    qtbot, window, open_and_wait, trace_path
):
    open_and_wait(window, trace_path)
    window.state.select_request(20)
    combo = window.controls.estimator_combo
    with qtbot.waitSignal(window.state.analysis_changed, timeout=20000):
        combo.setCurrentIndex(combo.findData("chars4"))
    assert window.state.analysis.estimator_name == "chars4"
    assert window.state.index == 20
    assert_views_show(window, core(trace_path, "chars4").breakdown(20))
    assert "estimator chars4" in window.status.info_text()

    policy = window.controls.policy_combo
    with qtbot.waitSignal(window.state.analysis_changed, timeout=20000):
        policy.setCurrentIndex(policy.findData("claude-code"))
    b = core(trace_path, "chars4", "claude-code").breakdown(20)
    assert_views_show(window, b)
    assert window.bar_panel.bar.segments[-1].tokens == b.category("autocompact_buffer").tokens

    with qtbot.waitSignal(window.state.analysis_changed, timeout=20000):
        window.controls.window_spin.setValue(64000)
    b = core(trace_path, "chars4", "claude-code", 64000).breakdown(20)
    assert b.window == 64000
    assert_views_show(window, b)
    assert "window 64,000 (user)" in window.status.info_text()
    assert "policy: Claude Code (window - 50K) (user)" in window.status.info_text()
    rows = window.requests.request_model
    assert [rows.index(r, 0).data(USER) for r in range(rows.rowCount())] == core(
        trace_path, "chars4", "claude-code", 64000
    ).timeline


def test_bar_click_selects_the_category_and_content_shows_text(
    qtbot, window, open_and_wait, trace_path
):
    open_and_wait(window, trace_path)
    window.resize(1400, 900)
    window.show()
    qtbot.waitExposed(window)
    bar = window.bar_panel.bar
    seg = next(s for s in bar.segments if s.name == "builtin_tools")
    assert "Built-in tools" in bar.tooltip_at(seg.rect.center())
    assert "% of the window" in bar.tooltip_at(seg.rect.center())
    with qtbot.waitSignal(bar.category_clicked) as blocker:
        QTest.mouseClick(bar, Qt.MouseButton.LeftButton, pos=seg.rect.center().toPoint())
    assert blocker.args == ["builtin_tools"]
    current = window.breakdown.tree.currentIndex()
    assert current.data() == "Built-in tools"
    assert window.content.title.text() == "Built-in tools"
    # pick a tool: its declaration, pretty-printed, with its count under the estimator
    tool_index = window.breakdown.proxy.index(0, 0, current)
    window.breakdown.tree.setCurrentIndex(tool_index)
    item = tool_index.data(USER)
    assert window.content.text.toPlainText() == ref_text(item.ref)
    assert orjson.loads(window.content.text.toPlainText()) == orjson.loads(item.ref.text)
    est = window.state.analysis.estimator
    assert f"{est.tool(item.ref):,} tokens (qwen)" in window.content.info.text()


def test_content_of_a_message_lists_its_blocks(qtbot, window, open_and_wait, transcript_path):
    open_and_wait(window, transcript_path)
    panel = window.breakdown
    panel.select_category("messages")
    messages = panel.tree.currentIndex()
    row = 0  # the first row that is a message (causes and unattributed growth are rows too)
    while True:
        panel.tree.setCurrentIndex(panel.proxy.index(row, 0, messages))
        if panel.current_object().kind == "message":
            break
        row += 1
    message = panel.current_object().ref
    text = window.content.text.toPlainText()
    assert all(b.text[:200] in text for b in message.blocks if b.kind == "text")
    # the selection survives a change of request when the same row exists there
    name = panel.tree.currentIndex().data()
    window.state.step_request(-1)
    if panel.tree.currentIndex().isValid():
        assert panel.tree.currentIndex().data() == name


def test_mode_a_shows_estimated_overhead_only(qtbot, window, open_and_wait, trace_path, tmp_path):
    lines = Path(trace_path).read_bytes().splitlines()
    record = orjson.loads(lines[-1])
    record["response"] = None  # no API usage recorded
    path = tmp_path / "no-usage.jsonl"
    path.write_bytes(orjson.dumps(record) + b"\n")
    open_and_wait(window, str(path))
    b = core(str(path)).breakdown(0)
    assert b.mode == "A"
    assert_views_show(window, b)
    names = [s.name for s in window.bar_panel.bar.segments]
    assert "messages" not in names and "free_space" not in names
    assert "No API usage: estimated overhead only" in window.bar_panel.headline.text()
    assert window.requests.request_model.index(0, 3).data().startswith("~")


def test_skipped_records_button(qtbot, window, open_and_wait, corpus, monkeypatch):
    path = str(
        corpus / "claude-code" / "Mai0313__VibeCodingTracker__tests_fixtures_sessions_"
        "claude_code.jsonl"
    )
    a = open_and_wait(window, path)
    assert len(a.session.skipped) >= 1
    button = window.status.skipped_button
    assert button.isEnabled() and button.text() == f"{len(a.session.skipped)} skipped"
    shown = []
    from ctxviewer.gui.session.skipped_dialog import SkippedDialog

    monkeypatch.setattr(SkippedDialog, "exec", lambda self: shown.append(self))
    button.click()
    dialog = shown[0]
    assert dialog.table.rowCount() == len(a.session.skipped)
    assert dialog.table.item(0, 0).text() == str(a.session.skipped[0].line)
    assert dialog.table.item(0, 1).text() == a.session.skipped[0].reason


def test_tree_row_count_for_a_filter(qtbot, window, open_and_wait, trace_path):
    open_and_wait(window, trace_path)
    window.breakdown.filter_edit.setText("workspaces/lemmy/CLAUDE.md")
    proxy = window.breakdown.proxy
    assert [proxy.index(r, 0).data() for r in range(proxy.rowCount())] == ["Memory files"]
    assert proxy.rowCount(proxy.index(0, 0)) == 1
    window.breakdown.filter_edit.setText("claude.md")  # case-insensitive, parents kept
    tops = [proxy.index(r, 0).data() for r in range(proxy.rowCount())]
    assert "Memory files" in tops and "Built-in tools" not in tops
    memory = proxy.index(tops.index("Memory files"), 0)
    assert proxy.rowCount(memory) == 2
    assert not proxy.index(0, 0).parent().isValid()


def test_timeline_tab_follows_the_session_and_selects_requests(
    qtbot, window, open_and_wait, trace_path
):
    a = open_and_wait(window, trace_path)
    tab = window.timeline
    assert window.tabs.tabText(window.tabs.indexOf(tab)) == "Timeline"
    if not tab.available:  # the plot module is optional: a placeholder says so
        assert "not available" in tab.placeholder.text()
        return
    assert tab.plot.points == a.timeline
    assert tab.plot.selected_index == window.state.index
    with qtbot.waitSignal(window.state.breakdown_changed):
        tab.plot.request_clicked.emit(5)
    assert window.state.index == 5 and window.requests.current_row() == 5
    assert tab.plot.selected_index == 5


def test_a_session_without_requests_shows_empty_views(qtbot, window, open_and_wait, corpus):
    path = str(
        corpus / "claude-code" / "chiphuyen__sniffly__tests_mock-data_-Users-chip-dev-"
        "ai-music_ff71dbed-a4f2-4284-a4fc-fe2fb90de929.jsonl"
    )
    a = open_and_wait(window, path)
    assert a.session.requests == []
    assert window.state.breakdown is None
    assert window.bar_panel.bar.segments == [] and window.breakdown.model.rowCount() == 0
    assert window.requests.request_model.rowCount() == 0
    assert "0 requests" in window.status.info_text()
    window.actions_.next.trigger()  # disabled: nothing to step through
    assert window.state.index is None


def test_view_theme_is_kept_for_the_next_start(qtbot, window):
    from ctxviewer.gui.app_settings import AppSettings

    actions = window.panels["help_menu"].theme_actions
    assert actions["auto"].isChecked()
    actions["dark"].trigger()
    assert AppSettings().theme() == "dark" and actions["dark"].isChecked()
    assert window.status.currentMessage() == "Theme: dark"  # applied at once
    actions["auto"].trigger()
    assert AppSettings().theme() == "auto"


def test_the_view_menu_lists_each_tab_once(qtbot, window) -> None:
    """Every tab has one entry in View (Insights had two: its own and the tab action),
    and Ctrl+Shift+I still brings the Insights tab forward."""
    from ctxviewer.gui.widgets.menus import find_menu

    view = find_menu(window, "View")
    assert view is not None
    texts = [a.text().replace("&", "") for a in view.actions() if not a.isSeparator()]
    tabs = [window.tabs.tabText(i) for i in range(window.tabs.count())]
    assert [t for t in tabs if texts.count(t) != 1] == []
    extra = [a for a in window.actions() if a.shortcut().toString() == "Ctrl+Shift+I"]
    assert len(extra) == 1
    extra[0].trigger()
    assert window.tabs.tabText(window.tabs.currentIndex()) == "Insights"
