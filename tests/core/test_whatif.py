"""What-if replay: where auto-compaction would have fired (no Qt)."""

from __future__ import annotations

import pytest

from ctxviewer.analysis.thresholds import thresholds, tier
from ctxviewer.analysis.timeline import Point
from ctxviewer.analysis.timeline_view.whatif import (
    DEFAULT_TARGET_FRACTION,
    default_target,
    real_compactions,
    replay,
    request_events,
)
from ctxviewer.model import COMPACT_BOUNDARY, Event, Request, Session, Usage

QWEN_200K = thresholds(200_000, "qwen")  # auto 167,000


def point(
    i: int,
    api: int | None,
    est: int | None = None,
    role: str = "main",
    events: tuple[str, ...] = (),
    sidechain: bool = False,
) -> Point:
    est = est if est is not None else (api if api is not None else 0)
    size = api if api is not None else est
    return Point(
        i, None, "m", role, sidechain, api, est, 10, None, None, None, tier(size, QWEN_200K), events
    )


def curve(values: list[int], compact_at: tuple[int, ...] = ()) -> list[Point]:
    return [
        point(i, v, events=(COMPACT_BOUNDARY,) if i in compact_at else ())
        for i, v in enumerate(values)
    ]


def climb(start: int, step: int, n: int) -> list[int]:
    return [start + step * i for i in range(n)]


def test_a_curve_climbing_past_auto_twice_fires_twice():
    # 20k + 10k per request: crosses 167k at request 15 (170k); after the
    # simulated compaction to 60k (30% of 200k) it grows by the same 10k steps
    # and crosses again 11 requests later (60k + 110k = 170k at request 26).
    w = replay(curve(climb(20_000, 10_000, 30)), QWEN_200K)
    assert w.count == 2
    assert w.fired_indices == [15, 26]
    assert [f.tokens for f in w.fired] == [170_000, 170_000]
    assert all(f.after == 60_000 for f in w.fired)
    assert w.real_count == 0
    assert w.label() == "policy qwen: 2 compactions would fire (0 happened)"


def test_simulated_curve_drops_to_the_target_and_follows_real_growth():
    w = replay(curve(climb(20_000, 10_000, 30)), QWEN_200K)
    sim: dict[int, list[int]] = {}
    for i, y in w.simulated:
        sim.setdefault(i, []).append(y)
    assert sim[14] == [160_000]
    assert sim[15] == [170_000, 60_000]  # before, then after the compaction
    assert sim[16] == [70_000]
    assert sim[25] == [160_000]
    assert sim[26] == [170_000, 60_000]
    assert sim[29] == [90_000]
    assert len(w.simulated) == 30 + 2


def test_a_real_compaction_is_counted_separately_and_resets_the_simulation():
    # climbs to 170k (fires at request 15), then the log shows a real
    # compaction before request 18 that brought the context to 30k
    values = climb(20_000, 10_000, 18) + climb(30_000, 10_000, 20)
    w = replay(curve(values, compact_at=(18,)), QWEN_200K)
    assert w.real_count == 1
    assert [c.index for c in w.real] == [18]
    assert w.real[0].pre_tokens == 190_000  # the previous main request
    assert w.real[0].post_tokens == 30_000
    # after the reset the simulation follows the real curve: 30k + 10k * k
    # reaches 170k at k = 14 (request 32)
    assert w.fired_indices == [15, 32]
    assert dict(w.simulated)[18] == 30_000
    assert w.label() == "policy qwen: 2 compactions would fire (1 happened)"


def test_a_real_compaction_alone_is_not_a_fire():
    values = climb(100_000, 5_000, 13) + climb(40_000, 5_000, 10)
    w = replay(curve(values, compact_at=(13,)), QWEN_200K)
    assert w.count == 0
    assert w.real_count == 1
    assert w.label() == "policy qwen: 0 compactions would fire (1 happened)"


def test_log_events_give_before_and_after_counts():
    values = climb(100_000, 5_000, 13) + climb(40_000, 5_000, 10)
    logged = [
        (
            13,
            Event(
                COMPACT_BOUNDARY,
                "2026-01-01T00:00:00Z",
                pre_tokens=167_117,
                post_tokens=31_000,
                trigger="auto",
            ),
        )
    ]
    [c] = real_compactions(curve(values), logged)  # the log alone marks it
    assert (c.index, c.pre_tokens, c.post_tokens, c.trigger) == (13, 167_117, 31_000, "auto")
    w = replay(curve(values), QWEN_200K, events=logged)
    # 167,117 before it reaches the auto threshold (167,000): the policy fires there too
    assert w.real_count == 1 and [(f.index, f.tokens) for f in w.fired] == [(13, 167_117)]


def test_one_compaction_per_request_even_with_boundary_and_summary():
    pts = curve([10_000, 20_000, 5_000])
    pts[2] = point(2, 5_000, events=("compact_boundary", "compact_summary"))
    assert len(real_compactions(pts)) == 1


def test_estimate_is_used_where_the_api_count_is_unknown():
    pts = [point(0, None, 100_000), point(1, None, 170_000), point(2, 175_000)]
    w = replay(pts, QWEN_200K)
    assert w.fired_indices == [1]
    assert w.fired[0].tokens == 170_000
    assert dict(w.simulated)[2] == 65_000  # 60k + the real 5k growth


def test_only_main_requests_take_part():
    pts = [
        point(0, 100_000),
        point(1, 190_000, role="subagent"),
        point(2, 180_000, sidechain=True),
        point(3, 190_000, role="auxiliary"),
        point(4, 110_000),
    ]
    w = replay(pts, QWEN_200K)
    assert w.count == 0
    assert [i for i, _ in w.simulated] == [0, 4]


def test_a_real_drop_without_event_pulls_the_simulation_down():
    # fire at 1 (-> 60k), then the real curve falls to 20k (a /clear): the
    # simulated context cannot stay above the real one
    w = replay(curve([100_000, 170_000, 175_000, 20_000, 25_000]), QWEN_200K)
    sim = dict(w.simulated)
    assert w.fired_indices == [1]
    assert sim[2] == 65_000
    assert sim[3] == 20_000
    assert sim[4] == 25_000


def test_targets():
    assert DEFAULT_TARGET_FRACTION == 0.3
    assert default_target(QWEN_200K) == 60_000
    shannon = thresholds(200_000, "shannon")
    assert default_target(shannon) == 75_000  # 37.5%
    w = replay(curve(climb(100_000, 20_000, 6)), shannon)
    assert w.target == 75_000
    assert w.fired_indices == [3]  # 160k >= 150k (75%)
    w = replay(curve(climb(100_000, 20_000, 6)), QWEN_200K, target=500_000)
    assert w.target == QWEN_200K.auto  # capped: a compaction always removes something


@pytest.mark.parametrize(
    "policy,window,fired",
    [
        ("qwen", 200_000, 1),
        ("claude-code", 200_000, 1),
        ("qwen-legacy", 128_000, 2),
    ],
)
def test_spotter_transcript(corpus, policy, window, fired):
    from ctxviewer.analysis.analysis import Analysis
    from ctxviewer.ingest import load

    path = (
        corpus
        / "claude-code"
        / ("marot__spotter__test_fixtures_transcripts_fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")
    )
    a = Analysis(load(str(path)), policy=policy, window_override=window)
    w = replay(a.timeline, a.thresholds, events=request_events(a.session))
    assert w.count == fired
    boundary = next(r.index for r in a.session.requests if r.events)
    assert [(c.index, c.pre_tokens, c.post_tokens, c.trigger) for c in w.real] == [
        (boundary, 167_117, 32_015, "auto")
    ]
    if policy == "claude-code":
        [fired_at] = w.fired_indices
        assert a.session.requests[fired_at].api_prompt_tokens == 154_364  # >= 150,000


def test_the_agents_own_compaction_is_one_its_policy_would_fire(corpus):
    """Claude Code compacted the spotter session at 167,117 tokens (its preTokens),
    just over its auto threshold of 167,000: replayed under its own policy, the
    compaction fires where it happened (as the timeline's predicted mark says)."""
    from ctxviewer.analysis.analysis import Analysis
    from ctxviewer.ingest import load

    path = (
        corpus
        / "claude-code"
        / ("marot__spotter__test_fixtures_transcripts_fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")
    )
    a = Analysis(load(str(path)))
    w = replay(a.timeline, a.thresholds, events=request_events(a.session))
    boundary = next(r.index for r in a.session.requests if r.events)
    assert a.thresholds.auto == 167_000
    assert [(f.index, f.tokens) for f in w.fired] == [(boundary, 167_117)]
    assert a.compactions.predicted == (boundary,)
    assert w.label().startswith(f"policy {w.policy}: 1 compaction would fire (1 happened)")


def test_request_events_pairs_events_with_their_request():
    e1, e2 = Event(COMPACT_BOUNDARY), Event("context_overflow")
    req = Request(0, "m", None, (), (), (), Usage(1), True, events=(e1,))
    s = Session(None, "test", requests=[req], events=[e2])
    assert request_events(s) == [(0, e1), (1, e2)]
