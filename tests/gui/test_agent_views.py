"""The window shows each session as its agent sees it: its window, policy, counts,
predicted compactions, and the session of a recording that holds several."""

from __future__ import annotations

from agent_logs import CC_SESSION, captured_records, qwen_session, with_headers, write_jsonl

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.ingest import load


def test_a_file_of_two_sessions_asks_which_to_show(qtbot, window, open_and_wait, corpus, tmp_path):
    cc = with_headers(captured_records(corpus), **{"X-Claude-Code-Session-Id": CC_SESSION})
    path = str(write_jsonl(tmp_path / "both.jsonl", cc + qwen_session(2)))
    with qtbot.waitSignal(window.loader.sessions_found, timeout=20000):
        open_and_wait(window, path)
    a = window.state.analysis
    assert a.identity.profile.id == "qwen-code"  # it made the last main request
    chooser = window.file_sessions.dialog
    qtbot.waitUntil(lambda: chooser.isVisible())
    assert chooser.list.count() == 2 and chooser.list.currentRow() == 1
    assert "Claude Code" in chooser.list.item(0).text()
    assert window.actions_.sessions.isEnabled()
    chooser.list.setCurrentRow(0)
    with qtbot.waitSignal(window.state.session_loaded, timeout=20000):
        chooser.accept()
    a = window.state.analysis
    assert a.identity.profile.id == "claude-code" and a.window == 1_000_000
    assert "Claude Code 2.1.197" in window.status.info_text()
    assert window.controls.policy_combo.currentText() == "Claude Code's own"


def test_counts_as_the_agent_or_on_the_wire(qtbot, window, open_and_wait, corpus):
    from agent_logs import CAPTURED

    open_and_wait(window, str(corpus / CAPTURED))
    b = window.state.breakdown
    assert b.counts == "agent" and b.category("autocompact_buffer").tokens == 0
    assert window.bar_panel.differences.isVisible() or window.bar_panel.differences.text()
    assert "on the wire" in window.bar_panel.differences.text()
    combo = window.controls.counts_combo
    with qtbot.waitSignal(window.state.analysis_changed, timeout=20000):
        combo.setCurrentIndex(combo.findData("wire"))
    b = window.state.breakdown
    assert b.counts == "wire" and b.category("autocompact_buffer").tokens == 33_000
    assert "the agent's /context" in window.bar_panel.differences.text()
    wire = Analysis(load(str(corpus / CAPTURED)), counts="wire")
    assert b.categories == wire.breakdown(b.request).categories


def test_timeline_marks_the_predicted_compaction(window, open_and_wait, transcript_path):
    a = open_and_wait(window, transcript_path)
    observed = a.compactions.observed
    assert len(observed) == 1 and a.compactions.predicted == observed
    plot = window.timeline.plot
    xs, ys = plot.predicted_markers.getData()
    assert list(xs) == list(observed) and ys[0] >= a.thresholds.auto - 1_000
    assert "predicted compaction" in [name for _item, name in plot.legend_layout.shown]
    assert "Claude Code" in plot.getPlotItem().titleLabel.text


def test_snapshot_of_one_session_of_a_recording(corpus, tmp_path):
    from ctxviewer.cli import main

    cc = with_headers(captured_records(corpus), **{"X-Claude-Code-Session-Id": CC_SESSION})
    path = str(write_jsonl(tmp_path / "both.jsonl", cc + qwen_session(2)))
    png = tmp_path / "cc.png"
    assert main(["snapshot", path, "--session", "0", "--out", str(png)]) == 0
    assert png.stat().st_size > 10_000
    assert main(["snapshot", path, "--session", "5", "--out", str(png)]) == 2
