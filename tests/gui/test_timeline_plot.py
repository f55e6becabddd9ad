"""The timeline plot: assert on plot data (getData, value), not pixels."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.thresholds import POLICIES, TIERS, thresholds, tier, tier_code, tier_floors
from ctxviewer.analysis.timeline import Point
from ctxviewer.analysis.timeline_view import series as ts
from ctxviewer.analysis.timeline_view.whatif import replay, request_events
from ctxviewer.gui.timeline import geometry as td
from ctxviewer.gui.timeline.plot import TimelinePlot
from ctxviewer.ingest import load
from ctxviewer.model import COMPACT_BOUNDARY, Event

SPOTTER = (
    "claude-code/marot__spotter__test_fixtures_transcripts_"
    "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
)
LEMMY = "claude-trace/badlogic__lemmy__apps_claude-trace_test_test-traffic.jsonl"

# qwen-code's ladder (docs/estimators.md), qwen policy: window -> (warn, auto, hard, effective)
REFERENCE = {
    32_000: (19_200, 22_400, 22_400, 12_000),
    128_000: (76_800, 95_000, 105_000, 108_000),
    200_000: (147_000, 167_000, 177_000, 180_000),
    1_000_000: (947_000, 967_000, 977_000, 980_000),
}
QWEN_200K = thresholds(200_000, "qwen")
T0 = datetime(2026, 2, 12, 15, 0, tzinfo=UTC)


def point(
    i: int,
    api: int | None,
    est: int,
    role: str = "main",
    *,
    sidechain: bool = False,
    events: tuple[str, ...] = (),
    output: int | None = 100,
    cache: tuple[int, int, int] | None = None,
    minutes: float | None = None,
) -> Point:
    ts = (T0 + timedelta(minutes=i if minutes is None else minutes)).isoformat()
    if cache is None and api is not None:
        cache = (api - 500, 400, 100)
    read, write, uncached = cache if cache is not None else (None, None, None)
    size = api if api is not None else est
    return Point(
        i,
        ts,
        "claude-test",
        role,
        sidechain,
        api,
        est,
        output,
        read,
        write,
        uncached,
        tier(size, QWEN_200K),
        events,
    )


def crafted() -> list[Point]:
    """A main curve climbing past auto (167k) twice, with one real compaction,
    one unknown API count, a sub-agent, a sidechain and two side calls."""
    pts = [point(i, 20_000 + 10_000 * i, 18_000 + 9_000 * i) for i in range(18)]  # ..190k
    pts[5] = point(5, None, 63_000)
    pts.append(point(18, 30_000, 28_000, events=(COMPACT_BOUNDARY,)))
    pts += [point(19 + k, 40_000 + 10_000 * k, 36_000 + 9_000 * k) for k in range(16)]
    n = len(pts)
    pts += [
        point(n, 5_000, 4_800, "subagent"),
        point(n + 1, 8_000, 7_000, sidechain=True),
        point(n + 2, 300, 280, "auxiliary"),
        point(n + 3, 200, 190, "auxiliary"),
    ]
    return pts


def main_points(pts: list[Point]) -> list[Point]:
    return [p for p in pts if p.role == "main" and not p.sidechain]


@pytest.fixture
def plot(qtbot):
    w = TimelinePlot(dark=False)
    w.resize(1000, 500)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    return w


@pytest.fixture
def spotter(corpus):
    return Analysis(load(str(corpus / SPOTTER)), policy="qwen", window_override=200_000)


def view_pos(plot: TimelinePlot, x: float, y: float) -> QPoint:
    """Where the data point (x, y) is on the plot's viewport, in widget pixels."""
    scene = plot.getPlotItem().vb.mapViewToScene(QPointF(x, y))
    return plot.mapFromScene(scene)


# -- curves equal the core timeline ------------------------------------------------
def test_curves_equal_the_core_timeline(plot, spotter):
    plot.set_timeline(spotter.timeline, spotter.thresholds, request_events(spotter.session))
    main = main_points(spotter.timeline)
    x, y = plot.api_curve.getData()
    known = [p for p in main if p.api_prompt_tokens is not None]
    assert x.tolist() == [p.index for p in known]
    assert y.tolist() == [p.api_prompt_tokens for p in known]
    x, y = plot.estimate_curve.getData()
    assert x.tolist() == [p.index for p in main]
    assert y.tolist() == [p.estimated_prompt_tokens for p in main]
    assert plot.estimate_curve.opts["pen"].style() == Qt.PenStyle.DashLine
    x, y = plot.tier_scatter.getData()
    assert y.tolist() == [p.prompt_tokens for p in main]
    assert [TIERS[c] for c in plot.tier_codes] == [p.tier for p in main]


def test_crafted_series(plot):
    pts = crafted()
    plot.set_timeline(pts, QWEN_200K)
    main = main_points(pts)
    x, y = plot.api_curve.getData()
    assert 5 not in x.tolist()  # unknown API count: only on the estimate curve
    assert len(x) == len(main) - 1
    x, y = plot.estimate_curve.getData()
    assert x.tolist() == [p.index for p in main]
    x, y = plot.subagent_scatter.getData()
    assert x.tolist() == [35, 36] and y.tolist() == [5_000, 8_000]
    x, y = plot.auxiliary_scatter.getData()
    assert x.tolist() == [37, 38]
    assert not plot.auxiliary_scatter.isVisible()  # side calls hidden by default
    assert plot.subagent_scatter.isVisible()
    # output tokens: one bar per main request, on the right axis
    x, y = plot.output_curve.getData()
    assert x.tolist() == [p.index for p in main]
    assert y.tolist() == [p.output_tokens for p in main]
    assert plot.output_curve.opts["width"] == pytest.approx(0.6)
    assert plot.output_curve.getViewBox() is plot.output_view
    assert plot.getPlotItem().getAxis("right").linkedView() is plot.output_view


def test_tiers_colour_the_points(plot):
    pts = crafted()
    plot.set_timeline(pts, QWEN_200K)
    main = main_points(pts)
    assert [TIERS[c] for c in plot.tier_codes] == [p.tier for p in main]
    brushes = [s.brush().color().name() for s in plot.tier_scatter.points()]
    expected = [plot._tier_brushes[TIERS.index(p.tier)].color().name() for p in main]
    assert brushes == expected
    assert {"safe", "warn", "auto", "hard"} <= {p.tier for p in main}


@pytest.mark.parametrize("policy", [p for p in POLICIES if p != "agent"])
def test_tier_codes_are_the_cores_tier_code_of_every_value(policy):
    """The plot colours a whole array at once, by the core's rule (its tier floors)."""
    t = thresholds(128_000, policy)
    floors = tier_floors(t)
    values = sorted({0, t.window, *floors, *(f - 1 for f in floors), *(f + 1 for f in floors)})
    codes = ts.tier_codes(np.array([*values, np.nan], dtype=float), t)
    assert codes.tolist() == [tier_code(v, t) for v in values] + [tier_code(None, t)]
    assert codes.dtype == np.int8


# -- threshold lines ------------------------------------------------------------------
@pytest.mark.parametrize("window", sorted(REFERENCE))
def test_lines_match_the_reference_table(plot, window):
    t = thresholds(window, "qwen")
    plot.set_timeline(crafted(), t)
    lines = plot.threshold_lines
    got = tuple(int(lines[k].value()) for k in ("warn", "auto", "hard", "effective"))
    assert got == REFERENCE[window]
    assert got == (t.warn, t.auto, t.hard, t.effective)
    assert lines["window"].value() == window
    for key in ("warn", "auto", "hard", "effective", "window"):
        assert lines[key].isVisible()
    assert not lines["target"].isVisible()


@pytest.mark.parametrize("policy", [p for p in POLICIES if p != "agent"])
@pytest.mark.parametrize("window", [32_000, 128_000, 200_000, 1_000_000])
def test_lines_follow_every_policy(plot, policy, window):
    t = thresholds(window, policy)
    plot.set_timeline(crafted(), t)
    for key in ("warn", "auto", "hard", "effective", "window"):
        assert plot.threshold_lines[key].value() == getattr(t, key)
    assert plot.threshold_lines["target"].isVisible() == (t.target is not None)


def test_labels_show_values_and_merge_equal_lines(plot):
    plot.set_timeline(crafted(), QWEN_200K)
    text = {k: ln.label.toPlainText() for k, ln in plot.threshold_lines.items()}
    assert text["auto"].startswith("auto  167,000")
    assert text["warn"].startswith("warn  147,000")
    assert "177,000" in text["hard"] and "180,000" in text["effective"]
    assert "200,000" in text["window"]
    plot.set_thresholds(thresholds(200_000, "claude-code"))  # auto = hard = effective
    lines = plot.threshold_lines
    assert lines["auto"].label.toPlainText().startswith("auto = hard = effective  150,000")
    assert lines["auto"].label.isVisible()
    assert not lines["hard"].label.isVisible() and not lines["effective"].label.isVisible()


def test_threshold_labels_do_not_overlap(plot, qtbot):
    plot.set_timeline(crafted(), QWEN_200K)
    qtbot.wait(10)
    rects = [
        ln.label.sceneBoundingRect()
        for ln in plot.threshold_lines.values()
        if ln.isVisible() and ln.label.isVisible()
    ]
    assert len(rects) == 5
    for i, a in enumerate(rects):
        for b in rects[i + 1 :]:
            inter = a.intersected(b)
            assert inter.height() <= 6 or inter.width() <= 0, (a, b)  # text margins may touch


def _labels_in_view(plot: TimelinePlot) -> list:
    view = plot.getPlotItem().vb.sceneBoundingRect()
    shown = [ln for ln in plot.threshold_lines.values() if ln.isVisible() and ln.label.isVisible()]
    shown += [ln for ln in plot.event_lines if ln.label.isVisible()]
    return [(ln.label.toPlainText(), view.contains(ln.label.sceneBoundingRect())) for ln in shown]


@pytest.mark.parametrize("size", [(1000, 500), (560, 330)])
def test_labels_and_legend_fit_the_view(plot, qtbot, size):
    """Every label ends inside the view, none under the legend; a narrow view
    shows the thresholds in their compact text."""
    plot.resize(*size)
    pts = [point(i, 20_000 + 10_000 * i, 18_000 + 9_000 * i) for i in range(17)]
    pts.append(point(17, 30_000, 28_000, events=(COMPACT_BOUNDARY,)))  # at the right edge
    plot.set_timeline(pts, QWEN_200K)
    qtbot.wait(50)
    assert plot.event_lines and all(ln.label.isVisible() for ln in plot.event_lines)
    labels = _labels_in_view(plot)
    assert labels and all(inside for _text, inside in labels), labels
    legend = plot.legend.sceneBoundingRect()
    assert not any(
        legend.intersects(ln.label.sceneBoundingRect())
        for ln in plot.threshold_lines.values()
        if ln.label.isVisible()
    )
    if size[0] >= 1000:  # it wraps into rows rather than running out of the view
        assert legend.right() <= plot.getPlotItem().vb.sceneBoundingRect().right()
    auto = plot.threshold_lines["auto"].label.toPlainText()
    assert auto == ("auto 167.0k" if size[0] < 800 else "auto  167,000 (84%)")


def test_set_thresholds_moves_lines_without_rebuilding(plot, monkeypatch):
    pts = crafted()
    plot.set_timeline(pts, QWEN_200K)
    api_before = plot.api_curve.getOriginalDataset()
    rebuilt = []
    for layer, method in (
        (plot.curves, "draw_series"),
        (plot.bars, "draw_series"),
        (plot.marks_layer, "draw_events"),
    ):
        monkeypatch.setattr(layer, method, lambda *_: rebuilt.append(1))
    t = thresholds(128_000, "qwen")
    plot.set_thresholds(t)
    assert not rebuilt
    assert plot.api_curve.getOriginalDataset()[1] is api_before[1]
    assert [plot.threshold_lines[k].value() for k in ("warn", "auto", "hard", "effective")] == [
        76_800,
        95_000,
        105_000,
        108_000,
    ]
    main = main_points(pts)
    assert [TIERS[c] for c in plot.tier_codes] == [tier(p.prompt_tokens, t) for p in main]
    assert plot.whatif.auto == 95_000
    # and back
    plot.set_thresholds(QWEN_200K)
    assert plot.threshold_lines["auto"].value() == 167_000


def test_window_override_rescales_the_view_until_the_user_zooms(plot):
    plot.set_timeline(crafted(), QWEN_200K)
    plot.set_thresholds(thresholds(1_000_000, "qwen"))
    assert plot.getPlotItem().vb.viewRange()[1][1] >= 1_000_000
    plot.getPlotItem().vb.setYRange(0, 50_000, padding=0)
    plot._on_view_changed_manually()  # what a wheel or drag reports
    plot.set_thresholds(QWEN_200K)
    assert plot.getPlotItem().vb.viewRange()[1][1] == pytest.approx(50_000)


def test_set_analysis_with_another_policy_only_moves_lines(plot, spotter, monkeypatch):
    plot.set_analysis(spotter)
    calls = []
    monkeypatch.setattr(plot, "set_timeline", lambda *a, **k: calls.append(a))
    other = Analysis(spotter.session, policy="claude-code", window_override=200_000)
    plot.set_analysis(other)
    assert not calls
    assert plot.threshold_lines["auto"].value() == 150_000
    [fired] = plot.whatif.fired_indices
    assert spotter.session.requests[fired].api_prompt_tokens == 154_364  # >= 150,000


# -- events ---------------------------------------------------------------------------
def test_real_compaction_marker_with_before_and_after(plot, spotter):
    plot.set_timeline(spotter.timeline, spotter.thresholds, request_events(spotter.session))
    [line] = plot.event_lines
    after = _boundary(spotter)
    before = max(p.index for p in spotter.timeline if p.role == "main" and p.index < after)
    assert line.value() == (before + after) / 2  # between the last main request and the next
    assert line.angle == 90
    text = line.label.toPlainText()
    assert "compaction (auto)" in text and "167,117 \u2192 32,015" in text


def test_compaction_marker_on_the_time_axis(plot, spotter):
    plot.set_timeline(
        spotter.timeline, spotter.thresholds, request_events(spotter.session), x_mode="time"
    )
    [line] = plot.event_lines
    assert line.value() == ts.parse_time("2026-02-12T16:13:25.613Z")  # the log's own time
    after = _boundary(spotter)
    last = max(p.index for p in spotter.timeline if p.role == "main" and p.index < after)
    before, after = (ts.parse_time(spotter.timeline[i].timestamp) for i in (last, after))
    assert before < line.value() < after


def _boundary(a: Analysis) -> int:
    """The spotter's first request after its compaction."""
    return next(r.index for r in a.session.requests if r.events)


def test_event_markers_from_points_alone(plot):
    plot.set_timeline(crafted(), QWEN_200K)  # no events list: read off the curve
    [line] = plot.event_lines
    assert line.value() == 17.5
    assert "190,000 \u2192 30,000" in line.label.toPlainText()


def test_overflow_marker(plot):
    pts = crafted()
    events = [(10, Event("context_overflow", detail="prompt is too long"))]
    plot.set_timeline(pts, QWEN_200K, events)
    kinds = [m.kind for m in plot.marks]
    assert kinds == ["compaction", "overflow"]
    assert plot.event_lines[1].value() == 9.5
    assert plot.event_lines[1].label.toPlainText() == "context overflow"


# -- what-if ----------------------------------------------------------------------------
def test_whatif_markers_and_label(plot):
    pts = crafted()
    plot.set_timeline(pts, QWEN_200K)
    core = replay(pts, QWEN_200K)
    assert core.count == 2 and core.real_count == 1
    x, y = plot.whatif_markers.getData()
    assert x.tolist() == core.fired_indices == [15, 32]
    assert y.tolist() == [f.tokens for f in core.fired]
    assert plot.whatif_label.text.startswith("policy qwen: 2 compactions would fire (1 happened)")
    x, y = plot.whatif_curve.getData()
    drawn = {(int(a), int(b)) for a, b in zip(x, y, strict=True) if not np.isnan(b)}
    assert (15, 60_000) in drawn and (16, 70_000) in drawn
    assert all(i != 3 for i, _ in drawn)  # where the simulation equals reality: no line
    plot.set_show_whatif(False)
    assert not plot.whatif_markers.isVisible() and not plot.whatif_curve.isVisible()


def test_whatif_follows_the_policy(plot):
    plot.set_timeline(crafted(), QWEN_200K)
    plot.set_thresholds(thresholds(200_000, "shannon"))  # trigger 150k, target 75k
    assert plot.whatif.target == 75_000
    assert plot.whatif_label.text.startswith("policy shannon:")
    assert plot.threshold_lines["target"].isVisible()
    assert plot.threshold_lines["target"].value() == 75_000


# -- toggles ----------------------------------------------------------------------------
def test_subagents_and_side_calls_can_be_hidden(plot):
    plot.set_timeline(crafted(), QWEN_200K)
    plot.set_show_subagents(False)
    assert not plot.subagent_scatter.isVisible()
    plot.set_show_subagents(True)
    assert plot.subagent_scatter.isVisible()
    plot.set_show_auxiliary(True)
    assert plot.auxiliary_scatter.isVisible()
    assert plot.auxiliary_scatter.opts["brush"].color().alpha() < 255  # faint
    assert plot.menu_actions["auxiliary"].isChecked()


def test_cache_view_stacks_read_write_uncached(plot):
    pts = crafted()
    plot.set_timeline(pts, QWEN_200K)
    assert not any(a.isVisible() for a in plot.cache_areas.values())
    plot.set_cache_view(True)
    assert all(a.isVisible() for a in plot.cache_areas.values())
    main = [p for p in main_points(pts) if p.api_prompt_tokens is not None]
    x, read = plot.cache_areas["cache_read"].getData()
    _, write = plot.cache_areas["cache_write"].getData()
    _, top = plot.cache_areas["uncached"].getData()
    assert x.tolist() == [p.index for p in main]
    assert read.tolist() == [p.cache_read for p in main]
    assert (write - read).tolist() == [p.cache_write for p in main]
    assert top.tolist() == [p.api_prompt_tokens for p in main]  # the stack is the prompt
    plot.set_cache_view(False)
    assert not plot.cache_areas["uncached"].isVisible()


def test_output_bars_stand_in_front_of_the_cache_bands(plot, qtbot):
    plot.set_timeline(crafted(), QWEN_200K)
    plot.set_cache_view(True)
    qtbot.wait(10)
    stack = plot.scene().items()  # front first
    front = stack.index(plot.output_curve)
    assert all(stack.index(a) > front for a in plot.cache_areas.values())
    assert stack.index(plot.api_curve) < front and stack.index(plot.tier_scatter) < front
    assert plot.output_curve.opts["brush"] is plot.output_brushes[1]  # full strength
    vb = plot.getPlotItem().vb
    vb.setRange(xRange=(3, 20), yRange=(10_000, 90_000), padding=0)  # the bands follow
    assert plot.cache_box.viewRange() == vb.viewRange()
    assert plot.cache_box.sceneBoundingRect() == vb.sceneBoundingRect()


def test_time_axis(plot):
    pts = crafted()
    plot.set_timeline(pts, QWEN_200K)
    assert plot.set_x_mode("time") == "time"
    assert isinstance(plot.getPlotItem().getAxis("bottom"), pg.DateAxisItem)
    main = main_points(pts)
    x, _ = plot.estimate_curve.getData()
    assert x.tolist() == [datetime.fromisoformat(p.timestamp).timestamp() for p in main]
    assert plot.threshold_lines["auto"].value() == 167_000
    assert plot.set_x_mode("index") == "index"
    assert not isinstance(plot.getPlotItem().getAxis("bottom"), pg.DateAxisItem)
    x, _ = plot.estimate_curve.getData()
    assert x.tolist() == [p.index for p in main]


def test_time_axis_falls_back_to_index_without_timestamps(plot):
    pts = [
        Point(i, None, None, "main", False, 1000 * i, 900 * i, 1, None, None, None, "safe", ())
        for i in range(5)
    ]
    plot.set_timeline(pts, QWEN_200K, x_mode="time")
    assert plot.data.x_mode == "index"
    x, _ = plot.estimate_curve.getData()
    assert x.tolist() == [0, 1, 2, 3, 4]


# -- interaction ------------------------------------------------------------------------
def test_clicking_a_point_emits_its_request_index(plot, qtbot):
    pts = crafted()
    plot.set_timeline(pts, QWEN_200K)
    qtbot.wait(10)
    target = pts[12]
    pos = view_pos(plot, target.index, target.prompt_tokens)
    with qtbot.waitSignal(plot.request_clicked, timeout=2000) as blocker:
        qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert blocker.args == [12]


def test_clicking_a_sub_agent_point(plot, qtbot):
    plot.set_timeline(crafted(), QWEN_200K)
    qtbot.wait(10)
    pos = view_pos(plot, 35, 5_000)
    with qtbot.waitSignal(plot.request_clicked, timeout=2000) as blocker:
        qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert blocker.args == [35]


def test_clicking_empty_space_emits_nothing(plot, qtbot):
    plot.set_timeline(crafted(), QWEN_200K)
    qtbot.wait(10)
    pos = view_pos(plot, 3, 190_000)
    with qtbot.assertNotEmitted(plot.request_clicked):
        qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton, pos=pos)


def test_hover_shows_a_readout(plot, qtbot):
    pts = crafted()
    plot.set_timeline(pts, QWEN_200K)
    qtbot.wait(10)
    p = pts[15]
    with qtbot.waitSignal(plot.request_hovered, timeout=2000) as blocker:
        qtbot.mouseMove(plot.viewport(), view_pos(plot, p.index, p.prompt_tokens))
    assert blocker.args == [15]
    assert plot.hover_label.isVisible()
    text = plot.hover_label.toPlainText()
    assert text.startswith("#15  2026-02-12 ")
    assert "claude-test \u00b7 main" in text
    assert "API 170,000 \u00b7 estimate 153,000 (-10.0%)" in text
    assert "tier auto" in text
    qtbot.wait(20)  # pyqtgraph drops moves closer than 10 ms (mouseRateLimit)
    qtbot.mouseMove(plot.viewport(), view_pos(plot, 3, 190_000))
    qtbot.waitUntil(lambda: not plot.hover_label.isVisible(), timeout=2000)
    assert plot.hovered_index == -1


def test_select_request_mirrors_an_outside_selection(plot):
    pts = crafted()
    plot.set_timeline(pts, QWEN_200K)
    plot.select_request(7)
    assert plot.selection_marker.isVisible()
    x, y = plot.selection_marker.getData()
    assert (x.tolist(), y.tolist()) == ([7], [pts[7].prompt_tokens])
    plot.set_show_auxiliary(False)
    plot.select_request(37)  # a hidden side call: nothing to ring
    assert not plot.selection_marker.isVisible()
    plot.set_show_auxiliary(True)
    assert plot.selection_marker.isVisible()
    plot.select_request(None)
    assert not plot.selection_marker.isVisible()


def test_select_request_pans_to_an_offscreen_point(plot):
    plot.set_timeline(crafted(), QWEN_200K)
    vb = plot.getPlotItem().vb
    vb.setXRange(0, 5, padding=0)
    plot.select_request(30)
    x0, x1 = vb.viewRange()[0]
    assert x0 <= 30 <= x1
    assert x1 - x0 == pytest.approx(5)


def test_reset_view_by_double_click_and_menu(plot, qtbot):
    plot.set_timeline(crafted(), QWEN_200K)
    vb = plot.getPlotItem().vb
    full = vb.viewRange()
    assert full[1][1] >= 200_000 and full[0][0] < 0 and full[0][1] > 36
    vb.setRange(xRange=(3, 8), yRange=(0, 10_000), padding=0)
    # what a real double-click delivers: press, release, double-click, release
    # (QTest.mouseDClick alone sends only the middle event)
    pos, left = view_pos(plot, 5, 5_000), Qt.MouseButton.LeftButton
    qtbot.mouseClick(plot.viewport(), left, pos=pos)
    qtbot.mouseDClick(plot.viewport(), left, pos=pos)
    qtbot.mouseRelease(plot.viewport(), left, pos=pos)
    qtbot.waitUntil(lambda: vb.viewRange()[0][1] > 30, timeout=2000)
    flat = [*full[0], *full[1]]
    assert [*vb.viewRange()[0], *vb.viewRange()[1]] == pytest.approx(flat)
    vb.setRange(xRange=(3, 8), yRange=(0, 10_000), padding=0)
    plot.menu_actions["reset"].trigger()
    assert [*vb.viewRange()[0], *vb.viewRange()[1]] == pytest.approx(flat)


def test_empty_timeline(plot):
    plot.set_timeline([], QWEN_200K)
    assert plot.api_curve.getData()[0] is None or len(plot.api_curve.getData()[0]) == 0
    assert plot.threshold_lines["auto"].value() == 167_000
    assert plot.whatif.count == 0
    plot.select_request(3)
    assert not plot.selection_marker.isVisible()


# -- pure helpers -----------------------------------------------------------------------
def test_stack_slots():
    assert td.stack_slots([0, 5, 30], [10, 10, 10]) == [0, 1, 0]
    assert td.stack_slots([0, 1, 2], [10, 10, 10], max_slots=2) == [0, 1, -1]


def test_nearest():
    x, y = np.array([0.0, 1.0, 2.0]), np.array([0.0, 10.0, 20.0])
    assert td.nearest(x, y, 1.05, 10.0, 0.01, 1.0, 12)[0] == 1
    assert td.nearest(x, y, 1.5, 10.0, 0.01, 1.0, 12)[0] == -1


# -- real logs: smoke renders ---------------------------------------------------------
@pytest.mark.parametrize("name", [SPOTTER, LEMMY])
def test_render_corpus(qtbot, corpus, tmp_path, name):
    w = TimelinePlot(dark=False)
    w.resize(1400, 600)
    qtbot.addWidget(w)
    a = Analysis(load(str(corpus / name)), policy="qwen", window_override=200_000)
    w.set_analysis(a)
    w.select_request(a.resolve_index("last"))
    w.show()
    qtbot.waitExposed(w)
    image = w.grab()
    assert not image.isNull() and image.width() == 1400
    assert image.save(str(tmp_path / "timeline.png"))
    assert w.threshold_lines["auto"].value() == 167_000
    if name == SPOTTER:
        assert max(w.api_curve.getData()[1]) == 166_874  # the climb to ~167k
        assert len(w.event_lines) == 1
    else:
        assert len(w.auxiliary_scatter.getData()[0]) > 0


# -- cheap repaints (gui/widgets/plot_paint.py) ----------------------------------
def test_text_items_and_axes_are_cached_after_a_paint(plot):
    from PySide6.QtWidgets import QGraphicsItem, QGraphicsTextItem

    plot.set_timeline(crafted(), QWEN_200K)
    plot.grab()
    texts = [i for i in plot.scene().items() if isinstance(i, QGraphicsTextItem)]
    assert len(texts) > 5 and all(
        i.cacheMode() == QGraphicsItem.CacheMode.DeviceCoordinateCache for i in texts
    )
    for side in ("left", "bottom", "right"):
        assert plot.getPlotItem().getAxis(side).cacheMode() != QGraphicsItem.CacheMode.NoCache


def test_hover_says_how_much_of_a_transcript_prompt_is_exact(plot, spotter):
    plot.set_analysis(spotter)
    i = spotter.resolve_index("last")
    a = spotter.attribution[i]
    assert a.exact > 0
    plot.show_hover((i, float(i), float(spotter.session.requests[i].api_prompt_tokens)))
    assert (
        f"exact {a.exact:,} \u00b7 estimated {a.estimated:,} \u00b7 unattributed {a.unattributed:,}"
    ) in plot.hover_label.toPlainText()


@pytest.mark.parametrize("size", [(1000, 500), (520, 300)])
@pytest.mark.parametrize("which", ["last", "first", "highest", "left of the middle"])
def test_hover_readout_stays_inside_the_plot(plot, qtbot, size, which):
    pts = crafted()
    plot.resize(*size)
    plot.set_timeline(pts, QWEN_200K)
    plot.set_show_auxiliary(True)
    qtbot.wait(10)
    main = main_points(pts)
    p = {
        "last": main[-1],
        "first": main[0],
        "highest": max(main, key=lambda p: p.prompt_tokens),
        "left of the middle": main[len(main) // 2 - 2],
    }[which]
    qtbot.mouseMove(plot.viewport(), view_pos(plot, p.index, p.prompt_tokens))
    qtbot.waitUntil(lambda: plot.hovered_index == p.index, timeout=2000)
    label = plot.hover_label.sceneBoundingRect()
    view = plot.getPlotItem().vb.sceneBoundingRect()
    assert plot.hover_label.isVisible() and label.width() > 100
    assert view.contains(label), (label, view)
    at = plot.getPlotItem().vb.mapViewToScene(QPointF(p.index, p.prompt_tokens))
    assert not label.contains(at)  # beside the point, not over it


def test_label_spot_flips_and_clamps():
    view = (0, 0, 400, 300)
    assert td.label_spot((100, 50), (10, 10), view) == (20, 20)  # right, below
    assert td.label_spot((100, 50), (390, 10), view) == (280, 20)  # left of it
    assert td.label_spot((100, 50), (10, 290), view) == (20, 230)  # above it
    assert td.label_spot((300, 50), (200, 10), view) == (0, 20)  # neither side: inside
    assert td.label_spot((500, 400), (200, 100), view) == (0, 0)  # larger than the view


@pytest.mark.parametrize("width", [1000, 470])
def test_title_takes_its_short_form_before_being_cut(plot, qtbot, width):
    plot.resize(width, 400)
    plot.set_timeline(crafted(), QWEN_200K)
    qtbot.wait(10)
    title = plot.getPlotItem().titleLabel
    shown = title.item.toPlainText()
    full = title.toolTip()
    assert full.startswith("policy qwen: ") and full.endswith(" \u00b7 window 200,000")
    if width == 1000:
        assert shown == full
    else:
        assert shown != full and "\u2026" not in shown
        assert shown.startswith("policy qwen: ") and shown.endswith(" \u00b7 window 200.0k")
        assert "would fire" in shown and "happened)" in shown
    assert title.sceneBoundingRect().width() <= plot.width()


def test_a_crowded_legend_takes_short_names_rather_than_being_cut(plot, qtbot):
    """Eight entries in a 520x420 plot: the long names fit in no row count that
    leaves the plot room; the short ones do."""
    plot.resize(520, 420)
    plot.set_timeline(crafted(), thresholds(64_000, "qwen"))  # what-if compactions fire
    plot.set_show_auxiliary(True)
    plot.set_predicted([10, 20])
    qtbot.wait(20)
    names = [item.text for _sample, item in plot.legend.items]
    assert "predicted" in names and "what-if" in names and "API prompt" in names
    assert (
        plot.legend.sceneBoundingRect().right() <= plot.getPlotItem().vb.sceneBoundingRect().right()
    )
    plot.resize(1400, 500)  # room again: the long names come back
    qtbot.waitUntil(
        lambda: "predicted compaction" in [item.text for _sample, item in plot.legend.items],
        timeout=2000,
    )
