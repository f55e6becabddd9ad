"""The compaction dialog on the lemmy trace's last request: lists, bars, edit, apply, export."""

from __future__ import annotations

import json

import pytest
from PySide6.QtGui import QGuiApplication

from ctxviewer.analysis.compaction import simulate_compaction
from ctxviewer.gui.compaction.model import FATE_ROLE
from ctxviewer.gui.tools import panel as analysis_panels


@pytest.fixture
def panels(window):
    found = getattr(window, "panels", {}).get("analysis_panels")
    return found if found is not None else analysis_panels.install(window)


@pytest.fixture
def dialog(qtbot, window, panels, open_and_wait, trace_path):
    open_and_wait(window, trace_path)
    window.state.select_last()
    d = panels.open_compaction()
    qtbot.waitUntil(lambda: d.result_ is not None and not d.runner.is_busy(), timeout=20000)
    yield d
    if panels.dialog is not None:
        panels.dialog.close()


def expected(window, strategy="qwen"):
    a, i = window.state.analysis, window.state.index
    b = a.breakdown(i)
    unrec = b.category("unrecorded_overhead")
    return simulate_compaction(
        a.session.requests[i],
        strategy,
        a.estimator,
        b.thresholds,
        inferred_overhead=unrec.estimated if unrec else None,
    )


def test_lists_and_totals_equal_core(window, dialog, qtmodeltester):
    r = expected(window)
    assert dialog.strategy() == "qwen"
    m = dialog.messages_model
    qtmodeltester.check(m)
    assert m.indices("summarized") == list(r.summarized)
    assert m.indices("kept") + m.indices("slimmed") == list(r.kept)
    assert m.indices("dropped") == list(r.dropped)
    assert m.data(m.index(0, 2), FATE_ROLE) == "summarized"
    assert dialog.result_.after == r.after
    # the before bar is the API's count; the after bar the estimate on the same scale
    assert r.before != r.before_estimate
    assert (
        dialog.after_breakdown.total
        == r.projected_after
        == round(r.after * r.before / r.before_estimate)
    )
    assert (
        sum(
            s.tokens
            for s in dialog.after_bar.segments
            if s.name not in ("free_space", "autocompact_buffer")
        )
        == r.projected_after
    )
    assert dialog.before_breakdown.total == r.before
    from ctxviewer.gui.compaction.dialog import _fmt

    totals = dialog.totals.text()  # estimate against estimate
    assert f"{_fmt(r.before_estimate)} → {_fmt(r.after)}</b> tokens (local estimates)" in totals
    assert f"saved ~{_fmt(r.saved)}" in totals
    assert "projected" in dialog.after_label.text()
    assert dialog.summary_edit.toPlainText() == r.summary
    assert dialog.title_edit.text() == r.title
    assert "[0] user" in dialog.context_view.toPlainText()


def test_strategy_change_recomputes(qtbot, window, dialog):
    with qtbot.waitSignal(dialog.runner.finished, timeout=20000):
        dialog.strategy_combo.setCurrentText("trim")
    assert dialog.result_.strategy == "trim"
    assert dialog.params_form.groups["trim"].isVisibleTo(dialog)
    assert not dialog.params_form.groups["qwen"].isVisibleTo(dialog)
    with qtbot.waitSignal(dialog.runner.finished, timeout=20000):
        dialog.params_form.editors["trim"]["keep_rounds"].setValue(1)
    assert dialog.result_.params["keep_rounds"] == 1


def test_edit_summary_and_apply_branches(qtbot, window, panels, dialog):
    n = len(window.state.session.requests)
    original = window.state.session
    dialog.summary_edit.setPlainText("EDITED SUMMARY of the weather folder work")
    dialog.title_edit.setText("Weather folder cleanup")
    qtbot.waitUntil(lambda: not dialog._edit_timer.isActive())  # the bars show the edit
    projected = dialog.after_breakdown
    assert projected.total == dialog.current_result().projected_after
    with qtbot.waitSignal(window.state.session_loaded, timeout=5000):
        dialog.apply_button.click()
    s = window.state.session
    assert s is not original and len(s.requests) == n + 1
    assert window.requests.request_model.rowCount() == n + 1  # the navigator shows it
    last = s.requests[-1]
    assert "EDITED SUMMARY" in last.messages[0].text
    assert window.state.index == n  # the compacted request is selected (last main)
    assert window.state.breakdown.total == last.api_prompt_tokens == projected.total
    # the share of the window the dialog projected, not the raw estimate's
    assert window.state.breakdown.percent(window.state.breakdown.used) == projected.percent(
        projected.used
    )
    assert panels.back_action.isEnabled()
    # the branch's request is shown as simulated, never as an API count
    import numpy as np

    from ctxviewer.gui.session.request_model import COL_EVENTS, COL_PROMPT

    assert last.simulated and window.state.analysis.timeline[-1].simulated
    model = window.requests.request_model
    assert model.index(n, COL_PROMPT).data() == f"~{last.api_prompt_tokens:,}"
    assert model.index(n, COL_EVENTS).data().startswith("simulated")
    data = window.timeline.plot.data
    assert np.isnan(data.api[list(data.main.index).index(n)])
    assert "simulated" in [m.kind for m in window.timeline.plot.marks]
    assert "Simulated compaction" in window.bar_panel.headline.text()
    # compacting the compacted request again works
    d2 = panels.open_compaction()
    qtbot.waitUntil(lambda: d2.result_ is not None and not d2.runner.is_busy(), timeout=20000)
    assert d2.request is last
    assert "(estimate," in d2.before_label.text() and "API count" not in d2.before_label.text()
    with qtbot.waitSignal(window.state.session_loaded, timeout=5000):
        d2.apply_button.click()
    assert len(window.state.session.requests) == n + 2
    # closing the window now would lose the branch: it asks first
    window.confirm_answer = False
    window.close()
    ((_, message),) = window.confirms
    assert "simulated compaction is applied" in message
    assert window.state.session.requests[-1].messages  # still the branch
    # and back to the original
    with qtbot.waitSignal(window.state.session_loaded, timeout=5000):
        panels.back_action.trigger()
    assert window.state.session is original
    assert window.requests.request_model.rowCount() == n
    assert not panels.back_action.isEnabled()
    assert window.quit_concerns() == []  # nothing left to lose


def test_export_and_copy(tmp_path, window, dialog):
    paths = iter([str(tmp_path / "s.md"), str(tmp_path / "s.json")])
    window.ask_save_path = lambda title, name, filter_: next(paths)
    dialog.ask_save_path = window.ask_save_path
    dialog.summary_edit.setPlainText("My edited summary")
    dialog.export_md_button.click()
    dialog.export_json_button.click()
    md = (tmp_path / "s.md").read_text()
    assert md.startswith("# ") and "My edited summary" in md
    data = json.loads((tmp_path / "s.json").read_text())
    assert data["strategy"] == "qwen" and data["summary"] == "My edited summary"
    assert data["summarized"] == list(dialog.result_.summarized)
    dialog.copy_button.click()
    assert QGuiApplication.clipboard().text() == "My edited summary"


def test_anthropic_disabled_without_key(dialog):
    item = dialog.summarizer_combo.model().item(1)
    assert item.text() == "anthropic" and not item.isEnabled()
    assert "ANTHROPIC_API_KEY" in dialog.summarizer_combo.toolTip()


def test_three_failures_stop_message(qtbot, window, panels, dialog, monkeypatch):
    from ctxviewer.analysis.compaction.summarize_anthropic import AnthropicSummarizer

    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # nothing listens there
    panels.runner._anthropic = AnthropicSummarizer(timeout=2.0)
    dialog.summarizer_combo.model().item(1).setEnabled(True)
    dialog.summarizer_combo.setCurrentText("anthropic")
    for _ in range(3):
        with qtbot.waitSignal(dialog.runner.failed, timeout=20000):
            dialog.run_button.click()
    with qtbot.waitSignal(dialog.runner.failed, timeout=20000) as blocker:
        dialog.run_button.click()
    assert blocker.args[1] is True  # stopped
    assert "3 consecutive failures" in dialog.status.text()
    assert dialog.force_button.isVisibleTo(dialog)


def test_shortcut_action_in_tools_menu(window, panels):
    assert panels.compact_action.shortcut().toString() == "Ctrl+K"
    assert panels.compact_action in analysis_panels.tools_menu(window).actions()
