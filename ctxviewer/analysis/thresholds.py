"""Compaction thresholds, tiers and the pre-send estimate (docs/estimators.md#policies).

Policies:

- ``agent`` (default): the policy of the agent that wrote the log, from its
  profile (``analysis.agents``: window, formula and constants per version);
- ``qwen``: qwen-code's three-tier ladder;
- ``qwen-legacy``: auto-compaction at 70% of the window;
- ``claude-code``: usable input = window - 50,000 (80% for windows of 50,000
  or less), auto-compaction there (an older Claude Code rule);
- ``shannon``: trigger at 75% of the budget, compress down to 37.5% (Shannon's);
- ``custom``: user-set numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

PCT = 0.7
WARN_PCT_OFFSET = 0.1
SUMMARY_RESERVE = 20_000
AUTOCOMPACT_BUFFER = 13_000
WARN_BUFFER = 20_000
HARD_BUFFER = 3_000
MAX_CONSECUTIVE_FAILURES = 3

CLAUDE_CODE_RESERVE = 50_000
SHANNON_TRIGGER = 0.75
SHANNON_TARGET = 0.375

POLICIES = ("agent", "qwen", "qwen-legacy", "claude-code", "shannon", "custom")
POLICY_LABELS = {
    "agent": "the agent's own",
    "qwen": "qwen-code three-tier",
    "qwen-legacy": "qwen-code legacy (70%)",
    "claude-code": "Claude Code (window - 50K)",
    "shannon": "Shannon (75% / 37.5%)",
    "custom": "custom",
}
TIERS = ("safe", "warn", "auto", "hard")


@dataclass(frozen=True, slots=True)
class Thresholds:
    """The warn, auto-compaction and hard limits of a window under a policy."""

    policy: str
    window: int
    warn: int
    auto: int
    hard: int
    effective: int
    target: int | None = None  # where compaction aims to bring the context (shannon)
    label: str = ""  # for people: the agent's policy ("Claude Code: window - …")

    @property
    def buffer(self) -> int:
        """The autocompact buffer: the space above the auto threshold."""
        return max(0, self.window - self.auto)

    def as_dict(self) -> dict[str, int | None]:
        return {
            "warn": self.warn,
            "auto": self.auto,
            "hard": self.hard,
            "effective": self.effective,
            "target": self.target,
        }


def _qwen(window: int) -> Thresholds:
    effective = window - SUMMARY_RESERVE
    auto = max(PCT * window, effective - AUTOCOMPACT_BUFFER)
    warn = max((PCT - WARN_PCT_OFFSET) * window, auto - WARN_BUFFER)
    hard = max(effective - HARD_BUFFER, auto)
    return Thresholds("qwen", window, round(warn), round(auto), round(hard), max(0, effective))


def _legacy(window: int) -> Thresholds:
    auto = round(PCT * window)
    warn = round((PCT - WARN_PCT_OFFSET) * window)
    return Thresholds("qwen-legacy", window, warn, auto, window, window)


def _claude_code(window: int) -> Thresholds:
    usable = window - CLAUDE_CODE_RESERVE if window > CLAUDE_CODE_RESERVE else int(window * 0.8)
    warn = max(usable - WARN_BUFFER, int(usable * 0.8))
    return Thresholds("claude-code", window, warn, usable, usable, usable)


def _shannon(window: int) -> Thresholds:
    auto = round(SHANNON_TRIGGER * window)
    target = round(SHANNON_TARGET * window)
    warn = round((SHANNON_TRIGGER - WARN_PCT_OFFSET) * window)
    return Thresholds("shannon", window, warn, auto, window, window, target)


def thresholds(
    window: int, policy: str = "qwen", custom: dict[str, int] | None = None
) -> Thresholds:
    """The threshold ladder of ``policy`` for a context window of ``window`` tokens."""
    if window <= 0:
        raise ValueError("window must be positive")
    if policy == "agent":
        raise KeyError("the 'agent' policy depends on the session: use Analysis.thresholds")
    if policy == "qwen":
        return _qwen(window)
    if policy == "qwen-legacy":
        return _legacy(window)
    if policy == "claude-code":
        return _claude_code(window)
    if policy == "shannon":
        return _shannon(window)
    if policy == "custom":
        return _custom(window, custom or {})
    raise KeyError(f"unknown policy {policy!r} (known: {', '.join(POLICIES)})")


def _custom(window: int, values: dict[str, int]) -> Thresholds:
    base = _qwen(window)
    auto = int(values.get("auto", base.auto))
    warn = min(int(values.get("warn", base.warn)), auto)
    hard = max(int(values.get("hard", max(base.hard, auto))), auto)
    effective = int(values.get("effective", base.effective))
    target = values.get("target")
    return Thresholds(
        "custom", window, warn, auto, hard, effective, int(target) if target is not None else None
    )


def tier_floors(t: Thresholds) -> tuple[int, int, int]:
    """Where the tiers above ``safe`` begin, in ``TIERS`` order: a prompt of ``warn``
    tokens or more is in the warn tier, of ``auto`` or more in auto, of ``hard`` or
    more in hard. Every policy orders its ladder (warn <= auto <= hard)."""
    return t.warn, t.auto, t.hard


def tier_code(tokens: int | None, t: Thresholds) -> int:
    """The index in ``TIERS`` of a prompt of ``tokens``: how many tier floors it
    reaches. None (a request without a count) is ``safe``. The timeline plot counts
    the same floors over a whole array at once."""
    if tokens is None:
        return 0
    warn, auto, hard = tier_floors(t)
    return (tokens >= warn) + (tokens >= auto) + (tokens >= hard)


def tier(tokens: int | None, t: Thresholds) -> str:
    """``safe`` below warn, then ``warn``, ``auto``, ``hard`` (``tier_code``)."""
    return TIERS[tier_code(tokens, t)]


def pre_send_estimate(last_api_prompt: int | None, pending_tokens: int, history_tokens: int) -> int:
    """Tokens the next request will carry, before it is sent (qwen-code's pre-send check).

    ``last API prompt size + estimate(pending user message)``, or, with no API
    count yet, a full estimate of the history plus the pending message. This
    closes the "lags one turn" and "first turn is 0" gaps.
    """
    if last_api_prompt:
        return last_api_prompt + pending_tokens
    return history_tokens + pending_tokens
