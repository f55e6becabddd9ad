from __future__ import annotations

import pytest

from ctxviewer.analysis.thresholds import (
    POLICIES,
    TIERS,
    pre_send_estimate,
    thresholds,
    tier,
    tier_code,
    tier_floors,
)
from ctxviewer.analysis.windows import context_window

# qwen-code's ladder (docs/estimators.md): must hold exactly.
REFERENCE = [
    (32_000, 19_200, 22_400, 22_400, 12_000),
    (128_000, 76_800, 95_000, 105_000, 108_000),
    (200_000, 147_000, 167_000, 177_000, 180_000),
    (1_000_000, 947_000, 967_000, 977_000, 980_000),
]


@pytest.mark.parametrize("window,warn,auto,hard,effective", REFERENCE)
def test_qwen_reference_table(window, warn, auto, hard, effective):
    t = thresholds(window)
    assert (t.warn, t.auto, t.hard, t.effective) == (warn, auto, hard, effective)
    assert isinstance(t.warn, int) and isinstance(t.auto, int)


@pytest.mark.parametrize("policy", [p for p in POLICIES if p != "agent"])
@pytest.mark.parametrize(
    "window", [1_000, 10_000, 32_000, 64_000, 128_000, 200_000, 256_000, 1_000_000]
)
def test_ladder_is_ordered_for_every_policy(policy, window):
    t = thresholds(window, policy)
    assert 0 < t.warn <= t.auto <= t.hard <= window
    assert 0 <= t.buffer <= window


def test_legacy_buffer_is_30_percent():
    # (1 - 0.7) * 131072 = 39322 (qwen-code's /context)
    assert thresholds(131_072, "qwen-legacy").buffer == 39_322


def test_claude_code_policy():
    assert thresholds(200_000, "claude-code").auto == 150_000
    assert thresholds(1_000_000, "claude-code").auto == 950_000
    assert thresholds(40_000, "claude-code").auto == 32_000  # 80% at or below 50K


def test_shannon_policy():
    t = thresholds(200_000, "shannon")
    assert t.auto == 150_000 and t.target == 75_000


def test_custom_policy_keeps_order():
    t = thresholds(200_000, "custom", {"warn": 190_000, "auto": 100_000, "hard": 50_000})
    assert t.warn <= t.auto == 100_000 <= t.hard


def test_tiers():
    t = thresholds(200_000)
    assert [tier(x, t) for x in (0, 146_999, 147_000, 167_000, 176_999, 177_000)] == [
        "safe",
        "safe",
        "warn",
        "auto",
        "auto",
        "hard",
    ]


@pytest.mark.parametrize("policy", [p for p in POLICIES if p != "agent"])
@pytest.mark.parametrize("window", [10_000, 128_000, 200_000])
def test_a_prompt_is_in_the_tier_of_the_highest_floor_it_reaches(policy, window):
    t = thresholds(window, policy)
    floors = tier_floors(t)
    assert floors == (t.warn, t.auto, t.hard)
    for tokens in sorted({0, window, *floors, *(f - 1 for f in floors), *(f + 1 for f in floors)}):
        reached = [name for name, floor in zip(TIERS[1:], floors, strict=True) if tokens >= floor]
        expected = reached[-1] if reached else "safe"
        assert tier(tokens, t) == TIERS[tier_code(tokens, t)] == expected
    assert tier(None, t) == TIERS[tier_code(None, t)] == "safe"  # no count: nothing to warn of


def test_pre_send_estimate_closes_both_gaps():
    assert pre_send_estimate(5_000, 120, 999) == 5_120  # lags one turn: add the pending message
    assert pre_send_estimate(0, 120, 999) == 1_119  # first turn: full estimate
    assert pre_send_estimate(None, 10, 5) == 15


def test_windows():
    assert context_window("claude-sonnet-4-5-20250929") == 200_000
    assert context_window("claude-opus-4-6[1m]") == 1_000_000
    assert context_window("claude-opus-4-6", override=123_000) == 123_000
    assert context_window("gpt-5.1-codex-max", hint=272_000) == 272_000
    assert context_window("anthropic/claude-3-5-haiku") == 200_000
    assert context_window("some-unknown-model") == 200_000
    assert context_window(None) == 200_000
