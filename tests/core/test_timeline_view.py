"""The Timeline tab's view model (analysis.timeline_view.view), without Qt."""

from __future__ import annotations

import numpy as np
import pytest

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.thresholds import TIERS, thresholds, tier
from ctxviewer.analysis.timeline import Point
from ctxviewer.analysis.timeline_view.series import parse_time
from ctxviewer.analysis.timeline_view.view import (
    THRESHOLD_KEYS,
    build,
    from_analysis,
    threshold_lines,
    with_budget,
    with_predicted,
    with_thresholds,
    with_x_mode,
)
from ctxviewer.analysis.timeline_view.whatif import replay, request_events
from ctxviewer.ingest import load
from ctxviewer.model import COMPACT_BOUNDARY

SPOTTER = (
    "claude-code/marot__spotter__test_fixtures_transcripts_"
    "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
)
QWEN = thresholds(200_000, "qwen")


def climb() -> list[Point]:
    """Main requests climbing 10k a step past the qwen ladder, a compaction at 18,
    a sub-agent call and a side call."""
    sizes = [20_000 + 10_000 * i for i in range(18)] + [30_000 + 10_000 * i for i in range(6)]
    pts = [
        Point(
            i,
            f"2026-02-12T15:{i:02d}:00+00:00",
            "m",
            "main",
            False,
            s,
            s - 1_000,
            50 + i,
            s - 500,
            400,
            100,
            tier(s, QWEN),
            (COMPACT_BOUNDARY,) if i == 18 else (),
        )
        for i, s in enumerate(sizes)
    ]
    n = len(pts)
    pts.append(Point(n, None, "m", "subagent", True, 5_000, 4_800, 10, 0, 0, 5_000, "safe", ()))
    pts.append(Point(n + 1, None, "h", "auxiliary", False, 300, 280, 5, 0, 0, 300, "safe", ()))
    return pts


def test_series_tiers_and_lines():
    pts = climb()
    v = build(pts, QWEN)
    main = [p for p in pts if p.role == "main"]
    assert v.data.main.index.tolist() == [p.index for p in main]
    assert v.data.estimate.tolist() == [p.estimated_prompt_tokens for p in main]
    assert [TIERS[c] for c in v.tiers] == [p.tier for p in main]
    assert v.data.subagent.index.tolist() == [24] and v.data.auxiliary.index.tolist() == [25]
    lines = {ln.key: ln for ln in v.lines}
    assert tuple(lines) == THRESHOLD_KEYS
    for key in ("warn", "auto", "hard", "effective", "window"):
        assert lines[key].value == getattr(QWEN, key)
    assert lines["target"].value is None and not lines["target"].labelled
    assert lines["auto"].full == f"auto  {QWEN.auto:,} ({QWEN.auto / QWEN.window:.0%})"
    assert lines["window"].below and not lines["auto"].below
    assert v.has_api and v.has_output


def test_equal_lines_share_one_label():
    t = thresholds(200_000, "claude-code")
    assert t.auto == t.hard == t.effective
    lines = {ln.key: ln for ln in threshold_lines(t)}
    assert lines["auto"].labelled and lines["auto"].full.startswith("auto = hard = effective  ")
    assert not lines["hard"].labelled and not lines["effective"].labelled


def test_marks_and_whatif_from_the_points():
    pts = climb()
    v = build(pts, QWEN)
    [mark] = v.marks
    assert (mark.kind, mark.x, mark.pre, mark.post) == ("compaction", 17.5, 190_000, 30_000)
    core = replay(pts, QWEN)
    assert v.whatif.replay == core
    assert v.whatif.marker_x == [float(i) for i in core.fired_indices]
    assert v.whatif.marker_y == [f.tokens for f in core.fired]
    assert v.whatif.title == f"{core.label()} \u00b7 window 200,000"
    assert v.whatif.short_title.endswith("window 200.0k")
    # the replay's curve is drawn only where it differs from the real one, or fires
    real = dict(zip(v.data.main.index.tolist(), v.data.main.y.tolist(), strict=True))
    fired = set(core.fired_indices)
    assert v.whatif.curve_x.tolist() == [float(i) for i, _ in core.simulated]
    for (i, y), shown in zip(core.simulated, v.whatif.curve_y, strict=True):
        assert bool(np.isnan(shown)) == (y == real.get(i) and i not in fired)
    assert not np.isnan(v.whatif.curve_y).all()


def test_a_policy_change_keeps_the_series():
    v = build(climb(), QWEN)
    t = thresholds(128_000, "shannon")
    w = with_thresholds(v, t)
    assert w.data is v.data and w.marks is v.marks and w.points is v.points
    assert w.thresholds is t and w.lines != v.lines
    assert [TIERS[c] for c in w.tiers] == [tier(float(y), t) for y in v.data.main.y]
    assert w.whatif.replay.policy == "shannon"
    assert v.thresholds is QWEN  # the old view is untouched


def test_predicted_and_budget_spots():
    v = build(climb(), QWEN)
    w = with_predicted(v, [10, 19, 99])  # 99: no such request
    assert w.predicted == (10, 19, 99)
    assert w.predicted_x == (10.0, 19.0)
    # at the size of the main request before each
    assert w.predicted_y == (float(v.data.main.y[9]), float(v.data.main.y[18]))
    b = with_budget(w, [(12, "limit", "limit"), (5, "warn", "warn"), (99, "warn", "x")])
    # on the index axis a mark stands at its index; neighbours alternate their labels
    assert [(s.index, s.x, s.slot) for s in b.budget_lines] == [
        (5, 5.0, 0),
        (12, 12.0, 1),
        (99, 99.0, 0),
    ]
    # on the time axis only requests that have a time
    assert [s.index for s in with_x_mode(b, "time").budget_lines] == [5, 12]
    assert b.predicted_x is w.predicted_x and b.data is v.data


def test_time_axis_moves_everything_and_keeps_the_choices():
    v = with_budget(with_predicted(build(climb(), QWEN), [10]), [(5, "warn", "w")])
    t = with_x_mode(v, "time")
    assert t.data is not v.data and t.data.x_mode == "time" and t.x_mode == "time"
    assert t.predicted == (10,) and t.budget == v.budget
    assert t.budget_lines[0].x == parse_time("2026-02-12T15:05:00+00:00")
    assert t.marks[0].x == parse_time("2026-02-12T15:18:00+00:00")  # no event time: at it
    with pytest.raises(ValueError):
        with_x_mode(v, "days")


@pytest.fixture
def spotter(corpus):
    return Analysis(load(str(corpus / SPOTTER)), policy="qwen", window_override=200_000)


def test_from_analysis(spotter):
    v = from_analysis(spotter)
    assert list(v.points) == spotter.timeline
    assert v.events == tuple(request_events(spotter.session))
    assert v.thresholds == spotter.thresholds
    assert v.predicted == tuple(spotter.compactions.predicted)
    assert v.attribution is spotter.attribution
    [mark] = v.marks
    assert "167,117 \u2192 32,015" in mark.label()
    # the same session under another policy: the series is kept, the lines move
    other = Analysis(spotter.session, policy="claude-code", window_override=200_000)
    w = from_analysis(other, previous=v)
    assert w.data is v.data and w.marks is v.marks
    assert {ln.key: ln.value for ln in w.lines}["auto"] == 150_000
    # another estimator, or another x axis: a new series
    heur = Analysis(
        spotter.session, estimator_name="heuristic", policy="qwen", window_override=200_000
    )
    assert from_analysis(heur, previous=v).data is not v.data
    assert from_analysis(spotter, x_mode="time", previous=v).data is not v.data
