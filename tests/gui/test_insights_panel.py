"""The Insights tab: totals, tables, selection, budget marks on the timeline, diffs."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPointF, Qt

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.insights import Budget, diff_requests, evaluate_budget, insights
from ctxviewer.fmt import fmt_tokens
from ctxviewer.gui.insights import panel as insights_panel
from ctxviewer.gui.insights.cost import total_texts
from ctxviewer.gui.insights.model import InsightsTableModel
from ctxviewer.gui.insights.panel import InsightsPanel, budget_marks
from ctxviewer.gui.timeline.plot import TimelinePlot
from ctxviewer.ingest import load
from ctxviewer.resources import demo_session_path


def the_panel(window) -> InsightsPanel:
    """The window's Insights tab (installed by ``panels.install_all``, else here)."""
    panel = getattr(window, "panels", {}).get("insights_panel")
    return panel if panel is not None else insights_panel.install(window)


def shown_panel(window, qtbot) -> InsightsPanel:
    """The Insights tab, in view."""
    panel = the_panel(window)
    assert sum(window.tabs.tabText(i) == "Insights" for i in range(window.tabs.count())) == 1
    window.tabs.setCurrentWidget(panel)
    window.show()
    qtbot.waitExposed(window)
    return panel


def open_insights(window, qtbot, open_and_wait, path: str) -> InsightsPanel:
    panel = shown_panel(window, qtbot)
    with qtbot.waitSignal(panel.insights_ready, timeout=30000):
        open_and_wait(window, path)
    return panel


def expected(window):
    a = window.state.analysis
    return insights(a.session, a.estimator)


def click_row(qtbot, table, row: int) -> None:
    view = table.view
    view.scrollTo(table.proxy.index(row, 0))
    rect = view.visualRect(table.proxy.index(row, 0))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


# -- models -----------------------------------------------------------------------------


@pytest.mark.parametrize("source", ["transcript", "trace", "demo"])
def test_models_pass_qtmodeltester(qtmodeltester, source, request):
    path = (
        str(demo_session_path()) if source == "demo" else request.getfixturevalue(f"{source}_path")
    )
    a = Analysis(load(path))
    ins = insights(a.session, a.estimator)
    s = a.session
    diff = diff_requests(s.requests[-2], s.requests[-1], a.estimator)
    from ctxviewer.gui.insights import cache as insights_cache
    from ctxviewer.gui.insights import diff as insights_diff
    from ctxviewer.gui.insights import redundancy as insights_redundancy
    from ctxviewer.gui.insights import subagents as insights_subagents

    for columns, rows in (
        (insights_cache.COLUMNS, ins.cache.breaks),
        (insights_redundancy.COLUMNS, ins.redundancy.findings),
        (insights_subagents.COLUMNS, ins.subagents),
        (insights_diff.COLUMNS, diff.changes),
    ):
        model = InsightsTableModel(columns)
        model.set_rows(rows)
        qtmodeltester.check(model)
        assert model.rowCount() == len(rows)
        for r, obj in enumerate(rows):
            assert model.index(r, 0).data(Qt.ItemDataRole.UserRole) is obj


def test_empty_model_passes_qtmodeltester(qtmodeltester):
    from ctxviewer.gui.insights import redundancy as insights_redundancy

    qtmodeltester.check(InsightsTableModel(insights_redundancy.COLUMNS))


# -- the panel on the spotter transcript ---------------------------------------------------


def test_totals_equal_core_insights(window, qtbot, open_and_wait, transcript_path):
    panel = open_insights(window, qtbot, open_and_wait, transcript_path)
    want = expected(window)
    assert panel.insights.cost.total_usd == pytest.approx(want.cost.total_usd)
    assert panel.insights.cost.no_cache_usd == pytest.approx(want.cost.no_cache_usd)
    texts = total_texts(want.cost)
    assert {k: label.text() for k, label in panel.cost.totals.items()} == texts
    # with the two Explore sub-agents' calls (their cache hit rate is lower)
    assert texts["total"] == "$10.40" and texts["hit_rate"] == "97.8%"
    qtbot.waitUntil(lambda: not panel.runner.is_busy())  # the diff page's first diff
    assert not panel.progress.isVisible()
    bars = panel.cost.plot.bars
    heights = sum(bars[k].opts["height"] for k in bars)
    assert heights == pytest.approx([r.total_usd or 0.0 for r in want.cost.requests])
    _, cum = panel.cost.plot.cumulative_curve.getData()
    assert cum[-1] == pytest.approx(want.cost.total_usd)


def test_redundancy_rows_equal_findings_and_click_selects(
    window, qtbot, open_and_wait, transcript_path
):
    panel = open_insights(window, qtbot, open_and_wait, transcript_path)
    want = expected(window).redundancy.findings
    table = panel.redundancy
    assert table.model.rows == want
    assert [table.record_at(r) for r in range(len(want))] == list(want)  # core order shown
    panel.pages.setCurrentWidget(table)
    target = next(r for r, f in enumerate(want) if f.first_request != window.state.index)
    with qtbot.waitSignal(window.state.request_changed) as blocker:
        click_row(qtbot, table, target)
    assert blocker.args == [want[target].first_request]
    assert window.state.index == want[target].first_request
    carried = fmt_tokens(expected(window).redundancy.carry_tokens)
    assert f"carried <b>{carried}</b>" in table.summary.text()


def test_cache_break_row_selects_request(window, qtbot, open_and_wait, transcript_path):
    panel = open_insights(window, qtbot, open_and_wait, transcript_path)
    breaks = expected(window).cache.breaks
    assert panel.cache.model.rows == breaks
    panel.pages.setCurrentWidget(panel.cache)
    click_row(qtbot, panel.cache, 0)
    assert window.state.index == breaks[0].request
    assert str(breaks[0].request) in panel.cache.detail.text()


def test_budget_draws_marks_on_the_timeline(window, qtbot, open_and_wait, transcript_path):
    panel = open_insights(window, qtbot, open_and_wait, transcript_path)
    plot = window.timeline.plot
    budget = Budget(5.0, "usd", "session", 0.8, hard=True)
    report = evaluate_budget(expected(window).cost, budget, window.state.session.requests)
    assert [c.kind for c in report.crossings] == ["warn", "limit"]
    with qtbot.waitSignal(panel.budget_marks_changed):
        panel.cost.budget.set_budget(budget)
    assert [ln.value() for ln in plot.budget_lines] == [c.request for c in report.crossings]
    assert [m[:2] for m in plot.budget_marks] == [(c.request, c.kind) for c in report.crossings]
    assert "budget limit $5.00" in plot.budget_lines[1].label.format
    assert all(ln in plot.getPlotItem().items for ln in plot.budget_lines)
    assert panel.budget_report == report
    assert panel.cost.budget.crossings.count() == 2
    assert [ln.value() for ln in panel.cost.plot.budget_marks[::2]] == [
        c.request for c in report.crossings
    ]
    assert panel.cost.plot.budget_lines["limit"].value() == 5.0
    # the warn line sits where the core warns: at the crossing's threshold
    assert (
        panel.cost.plot.budget_lines["warn"].value()
        == budget.warn_at
        == report.crossings[0].threshold
    )
    assert "warn $4.00" in panel.cost.plot.budget_lines["warn"].label.format
    # picking a crossing selects its request
    item = panel.cost.budget.crossings.item(1)
    panel.cost.budget.crossings.setCurrentItem(item)
    assert window.state.index == report.crossings[1].request
    # the marks follow the timeline's x mode
    assert plot.set_x_mode("time") == "time"
    assert [ln.value() for ln in plot.budget_lines] == [
        plot.data.x_of[c.request] for c in report.crossings
    ]
    plot.set_x_mode("index")
    # switching the budget off removes them
    panel.cost.budget.setChecked(False)
    assert plot.budget_lines == [] and plot.budget_marks == []
    assert not panel.cost.plot.budget_lines["limit"].isVisible()


def test_budget_computes_even_with_the_tab_hidden(window, qtbot, open_and_wait, transcript_path):
    panel = the_panel(window)  # not the current tab
    open_and_wait(window, transcript_path)
    assert panel.insights is None  # computed lazily
    with qtbot.waitSignal(panel.insights_ready, timeout=30000):
        panel.cost.budget.set_budget(Budget(2_000_000, "tokens", "task", 0.5))
    qtbot.waitUntil(lambda: window.timeline.plot.budget_marks == budget_marks(panel.budget_report))
    assert panel.budget_report.budget.unit == "tokens"


def test_estimator_change_recomputes(window, qtbot, open_and_wait, transcript_path):
    panel = open_insights(window, qtbot, open_and_wait, transcript_path)
    with qtbot.waitSignal(panel.insights_ready, timeout=30000):
        window.state.set_estimator("heuristic")
    assert panel.result.estimator == "heuristic"
    want = expected(window)
    assert window.state.analysis.estimator_name == "heuristic"
    assert panel.insights.redundancy == want.redundancy


def test_cost_plot_click_selects_request(window, qtbot, open_and_wait, transcript_path):
    panel = open_insights(window, qtbot, open_and_wait, transcript_path)
    plot = panel.cost.plot
    qtbot.waitUntil(lambda: plot.bar_plot.vb.width() > 50)
    window.resize(1600, 1000)  # 175 requests: room for more than a pixel each
    qtbot.waitUntil(lambda: plot.bar_plot.vb.width() > 250)
    target = next(
        r.index for r in window.state.session.requests if r.index >= 40 and r.role == "main"
    )
    scene = plot.bar_plot.vb.mapViewToScene(QPointF(target, 0.01))
    with qtbot.waitSignal(window.state.request_changed):
        qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton, pos=plot.mapFromScene(scene))
    assert window.state.index == target
    assert plot.selection_lines[0].value() == target


# -- sub-agents and diffs --------------------------------------------------------------


def test_subagents_of_the_demo_select_their_parent(window, qtbot, open_and_wait):
    panel = open_insights(window, qtbot, open_and_wait, str(demo_session_path()))
    runs = expected(window).subagents
    assert panel.subagents.model.rows == runs and len(runs) == 1
    panel.pages.setCurrentWidget(panel.subagents)
    window.state.select_request(20)
    click_row(qtbot, panel.subagents, 0)
    assert window.state.index == runs[0].parent == 1


def test_diff_of_two_lemmy_requests(window, qtbot, open_and_wait, trace_path):
    panel = open_insights(window, qtbot, open_and_wait, trace_path)
    panel.pages.setCurrentWidget(panel.diff)
    s, est = window.state.session, window.state.analysis.estimator
    with qtbot.waitSignal(panel.diff_ready, timeout=10000) as blocker:
        panel.diff.compare(1, 2)
    want = diff_requests(s.requests[1], s.requests[2], est)
    assert blocker.args[0] == want
    assert panel.diff.diff == want
    assert panel.diff.model.rows == want.changes
    assert f"{want.delta:+,}" in panel.diff.summary.text()
    # the spin boxes drive it too
    with qtbot.waitSignal(panel.diff_ready, timeout=10000):
        panel.diff.spin_a.setValue(10)
    assert panel.diff.diff == diff_requests(s.requests[10], s.requests[2], est)
    # "compare selected with previous" uses the previous request of the same conversation
    previous = panel.result.previous
    b = max(k for k, v in previous.items() if v != k - 1)  # side calls sit in between
    window.state.select_request(b)
    with qtbot.waitSignal(panel.diff_ready, timeout=10000):
        panel.diff.previous_button.click()
    assert (panel.diff.diff.a, panel.diff.diff.b) == (previous[b], b)
    assert panel.diff.diff == diff_requests(s.requests[previous[b]], s.requests[b], est)
    added = next((r for r, c in enumerate(panel.diff.model.rows) if c.status == "added"), None)
    if added is not None:
        bg = panel.diff.model.index(added, 0).data(Qt.ItemDataRole.BackgroundRole)
        assert bg is not None


# -- the timeline method on its own ------------------------------------------------------


def test_set_budget_marks_on_a_bare_plot(qtbot):
    plot = TimelinePlot(dark=False)
    qtbot.addWidget(plot)
    plot.set_budget_marks([(3, "warn", "budget warn $4.00"), (7, "limit", "budget limit $5")])
    assert [ln.value() for ln in plot.budget_lines] == [3, 7]
    assert plot.budget_lines[0].pen.color() != plot.budget_lines[1].pen.color()
    plot.set_budget_marks([])
    assert plot.budget_lines == []


def test_compactions_page_shows_what_was_kept_and_dropped(window, qtbot, open_and_wait, trace_path):
    panel = open_insights(window, qtbot, open_and_wait, trace_path)
    page = panel.compactions
    [c] = panel.insights.compactions
    model = page.model
    kinds = {model.index(r, 1).data() for r in range(model.rowCount())}
    assert kinds == {"summary", "kept", "reattached", "dropped"}
    assert f"before request <b>{c.after}</b>" in page.summary.text()
    with qtbot.waitSignal(window.state.request_changed):
        click_row(qtbot, page, 0)
    assert window.state.index == c.after


@pytest.mark.parametrize(
    ("width", "columns", "short"), [(900, 2, False), (260, 1, False), (220, 1, True)]
)
def test_cost_legend_takes_one_column_where_two_do_not_fit(qtbot, width, columns, short):
    from ctxviewer.gui.insights.cost_plot import CostPlot

    plot = CostPlot(dark=False)
    qtbot.addWidget(plot)
    plot.resize(width, 400)
    plot.show()
    qtbot.waitExposed(plot)
    qtbot.waitUntil(lambda: plot.legend.columnCount == columns, timeout=2000)
    vb = plot.bar_plot.vb.sceneBoundingRect()
    assert plot.legend.sceneBoundingRect().right() <= vb.right()
    names = {item.text for _sample, item in plot.legend.items}
    assert {"read", "write"} <= names if short else {"cache read", "cache write"} <= names


def test_an_unpriced_model_reads_unknown_and_is_left_out_of_the_plots(
    window, qtbot, open_and_wait, corpus, tmp_path
):
    raw = (
        corpus
        / "codex"
        / (
            "lanegrid__agtrace__samples-tmp_.codex_sessions_2025_12_10_"
            "rollout-2025-12-10T04-55-16-019b04ae-b1c6-7c72-a134-"
            "a4c2de66058c.jsonl"
        )
    ).read_bytes()
    path = tmp_path / "rollout-unknown.jsonl"
    path.write_bytes(raw.replace(b"gpt-5.1-codex-max", b"gpt-6.2-sol"))
    panel = open_insights(window, qtbot, open_and_wait, str(path))
    texts = {k: label.text() for k, label in panel.cost.totals.items()}
    assert texts["total"] == "unknown (no price for gpt-6.2-sol)"
    assert texts["no_cache"] == texts["saved"] == "unknown"
    assert all("$0" not in t for t in texts.values())
    assert "unknown (no price)" in panel.cost.by_model.text()
    plot = panel.cost.plot
    n = len(panel.insights.cost.unpriced_requests)
    assert n > 0 and plot.note == f"{n} requests left out: no price for gpt-6.2-sol (cost unknown)"
    assert plot.bar_plot.titleLabel.text.startswith(f"{n} requests left out")
    assert all(len(b.opts["height"]) == 0 for b in plot.bars.values())
    assert len(plot.cumulative_curve.getData()[1] or ()) == 0


def test_sources_page_ranks_the_core_sources_and_a_click_selects_their_requests(
    window, qtbot, open_and_wait, transcript_path
):
    panel = open_insights(window, qtbot, open_and_wait, transcript_path)
    want = expected(window).sources
    page = panel.sources
    panel.pages.setCurrentWidget(page)
    qtbot.waitExposed(page.plot)
    plot = page.plot
    assert [(s.kind, s.name) for s in plot.shown] == [
        (s.kind, s.name) for s in want.top(len(plot.shown))
    ]
    assert plot.metric == "usd"
    assert list(plot.bars.opts["width"]) == pytest.approx([s.cost_usd for s in plot.shown])
    # a click on the second bar (a real mouse click at its place on screen)
    second = plot.shown[1]
    vb = plot.getPlotItem().vb
    y = len(plot.shown) - 2
    scene = vb.mapViewToScene(QPointF(plot.value(second) / 2, y))
    qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton, pos=plot.mapFromScene(scene))
    qtbot.waitUntil(lambda: window.requests.selected_rows() == list(second.requests))
    assert window.state.index == second.requests[0]
    assert list(plot.picked.opts["width"]) == pytest.approx([second.cost_usd])
    # a tool's largest single result, picked in the table
    group = next(s for s in want.sources if s.largest)
    one = group.largest[0]
    row = next(
        r for r in range(page.table.proxy.rowCount()) if page.table.record_at(r).name == one.name
    )
    click_row(qtbot, page.table, row)
    qtbot.waitUntil(lambda: window.requests.selected_rows() == list(one.requests))
    assert set(one.requests) <= set(group.requests)
