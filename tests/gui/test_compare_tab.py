"""The Compare tab on a real claude-trace log: rows, model, estimator choice, CSV."""

from __future__ import annotations

import csv

import pytest

from ctxviewer.analysis.compare.scoring import compare
from ctxviewer.analysis.compare.table import category_table
from ctxviewer.analysis.tokens.registry import default_names
from ctxviewer.gui.compare.model import CompareTableModel
from ctxviewer.gui.tools import panel as analysis_panels


@pytest.fixture
def panels(window):
    found = getattr(window, "panels", {}).get("analysis_panels")
    return found if found is not None else analysis_panels.install(window)


@pytest.fixture
def shown(qtbot, window, panels, open_and_wait, trace_path):
    """The lemmy trace open, the Compare tab shown and computed."""
    a = open_and_wait(window, trace_path)
    window.tabs.setCurrentWidget(panels.compare.tab)
    qtbot.waitUntil(lambda: panels.compare.runner.comparison is not None, timeout=30000)
    qtbot.waitUntil(lambda: panels.compare.tab.category_model.table is not None, timeout=10000)
    return a


def test_rows_equal_core_compare(window, panels, shown):
    expected = compare(shown.session, default_names())
    tab = panels.compare.tab
    m = tab.model
    assert m.estimators == expected.estimators
    assert m.rowCount() == len(expected.rows) == 64
    for row, r in enumerate(expected.rows):
        assert m.data(m.index(row, 0)) == str(r.index)
        assert m.data(m.index(row, 3)) == f"{r.api_prompt_tokens:,}"
        for k, name in enumerate(expected.estimators):
            est = r.estimates[name]
            assert m.data(m.index(row, 4 + 2 * k)) == ("–" if est is None else f"{est:,}")
    assert [n for n, _ in tab.summary_model.items] == list(expected.estimators)
    assert dict(tab.summary_model.items) == expected.summary
    # plot: one curve per estimator, x = request index
    assert set(tab.plot.curves) == set(expected.estimators)
    x, _ = tab.plot.curves["qwen"].getData()
    assert list(x) == [r.index for r in expected.rows]
    # categories of the selected request
    assert tab.category_model.table == category_table(shown.session, window.state.index, expected)


def test_sorting_and_model(qtbot, qtmodeltester, panels, shown):
    tab = panels.compare.tab
    qtmodeltester.check(tab.model)
    qtmodeltester.check(tab.summary_model)
    qtmodeltester.check(tab.category_model)
    col = 5  # qwen err
    tab.table.sortByColumn(col, tab.table.horizontalHeader().sortIndicatorOrder().AscendingOrder)
    pcts = [
        tab.proxy.data(tab.proxy.index(i, 0), 256).pct("qwen") for i in range(tab.proxy.rowCount())
    ]
    assert pcts == sorted(pcts)


def test_empty_model_passes_modeltester(qtmodeltester):
    qtmodeltester.check(CompareTableModel())


def test_choosing_estimator_changes_window(qtbot, window, panels, shown):
    tab = panels.compare.tab
    before = window.state.breakdown
    assert window.state.options.estimator == "qwen"
    tab.estimator_combo.setCurrentText("cl100k")
    with qtbot.waitSignal(window.state.breakdown_changed, timeout=20000):
        tab.use_button.click()
    qtbot.waitUntil(lambda: window.state.analysis.estimator_name == "cl100k", timeout=20000)
    assert window.state.options.estimator == "cl100k"
    assert window.state.breakdown.estimator == "cl100k"
    assert window.state.breakdown.categories != before.categories
    assert window.controls is not None
    # the other way: the window's estimator shows in the tab
    window.state.set_estimator("shannon")
    assert tab.estimator_combo.currentText() == "shannon"
    assert tab.summary_model.current == "shannon"


def test_selecting_a_row_selects_the_request(qtbot, window, panels, shown):
    tab = panels.compare.tab
    with qtbot.waitSignal(window.state.request_changed, timeout=5000):
        tab.table.setCurrentIndex(tab.proxy.index(5, 0))
    assert window.state.index == tab.proxy.data(tab.proxy.index(5, 0), 256).index
    qtbot.waitUntil(lambda: tab.category_model.table.request == window.state.index)


def test_export_csv(tmp_path, window, panels, shown):
    out = tmp_path / "compare.csv"
    window.ask_save_path = lambda title, name, filter_: str(out)
    panels.compare.tab.export_button.click()
    rows = list(csv.reader(out.open()))
    c = panels.compare.runner.comparison
    assert rows[0][:4] == ["index", "model", "role", "api_prompt_tokens"]
    assert len(rows) == 1 + len(c.rows)
    assert [int(r[0]) for r in rows[1:]] == [r.index for r in c.rows]
    assert int(rows[1][4]) == c.rows[0].estimates["qwen"]


def test_anthropic_disabled_without_key(panels):
    check = panels.compare.tab.anthropic_check
    assert not check.isEnabled()
    assert "ANTHROPIC_API_KEY" in check.toolTip()


def test_recomputed_when_session_changes(
    qtbot, window, panels, shown, open_and_wait, transcript_path
):
    open_and_wait(window, transcript_path)
    qtbot.waitUntil(
        lambda: (
            panels.compare.runner.comparison is not None
            and panels.compare.runner.session.path == transcript_path
        ),
        timeout=30000,
    )
    c = panels.compare.runner.comparison
    assert panels.compare.tab.model.rowCount() == len(c.rows)


def test_lowest_mape_names_an_estimator_one_can_choose(window, panels, shown):
    """``calibrated`` is fitted to the session's own API counts: it is said apart when it
    scores best, never offered as the estimator to pick."""
    from ctxviewer.analysis.tokens.estimators import names

    expected = compare(shown.session, default_names())
    choosable = {n: s.mape for n, s in expected.summary.items() if n in names() and s.mape}
    best = min(choosable, key=choosable.get)
    text = panels.compare.tab.status.text()
    assert f"lowest MAPE: <b>{best}</b>" in text
    fitted = expected.summary["calibrated"].mape
    assert ("calibrated, fitted to this session's own API counts" in text) == (
        fitted is not None and fitted < choosable[best]
    )


def test_count_tokens_column_from_the_api(
    qtbot, count_server, window, panels, open_and_wait, corpus
):
    """With the API configured (a fake count_tokens on 127.0.0.1, the real SDK), the
    count_tokens box adds the API's column: the same numbers ``compare`` gives in the core."""
    from ctxviewer.analysis.tokens.registry import ANTHROPIC, remote_counters

    captured = str(corpus / "captured/claude-code-2.1.197-tui.claude-trace.jsonl")
    a = open_and_wait(window, captured)
    tab = panels.compare.tab
    window.tabs.setCurrentWidget(tab)
    assert tab.anthropic_check.isEnabled()
    tab.anthropic_check.setChecked(True)
    qtbot.waitUntil(
        lambda: (c := panels.compare.runner.comparison) is not None and ANTHROPIC in c.estimators,
        timeout=30000,
    )
    shown = panels.compare.runner.comparison
    names = [*default_names(), ANTHROPIC]
    expected = compare(a.session, names, counters=remote_counters(a.session, names))
    got = [r.estimates[ANTHROPIC] for r in shown.rows]
    assert got == [r.estimates[ANTHROPIC] for r in expected.rows]
    assert got and all(n and n > 0 for n in got)
    assert count_server.calls >= 1
