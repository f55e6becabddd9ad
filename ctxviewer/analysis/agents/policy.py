"""An agent's own compaction thresholds, from a ``PolicyRule`` of its profile.

The formulas are written once here, by kind; their constants come from the
profile table (``profiles.toml``). The result is an ordinary ``Thresholds``
with policy ``"agent"``, so the timeline, tiers and what-if replay treat it
like any other policy.
"""

from __future__ import annotations

from dataclasses import replace

from ctxviewer.analysis.agents.table import PolicyRule
from ctxviewer.analysis.thresholds import Thresholds

AGENT = "agent"


def _ordered(
    window: int,
    warn: float,
    auto: float,
    hard: float,
    effective: float,
    target: int | None = None,
    label: str = "",
) -> Thresholds:
    """Clamp to ``0 <= warn <= auto <= hard <= window`` (tiny windows included)."""
    hard_i = max(0, min(window, round(hard)))
    auto_i = max(0, min(hard_i, round(auto)))
    warn_i = max(0, min(auto_i, round(warn)))
    return Thresholds(
        AGENT, window, warn_i, auto_i, hard_i, max(0, round(effective)), target, label
    )


def rule_thresholds(
    rule: PolicyRule,
    window: int,
    *,
    model: str | None = None,
    max_output: int | None = None,
    raw_window: int | None = None,
    pct_override: float | None = None,
) -> Thresholds:
    """Thresholds of ``rule`` for a ``window``.

    ``max_output``: the request's output cap (Claude Code reserves
    ``min(max output, summary_cap)``, before 2.1.21 all of it); ``raw_window``: the model's full window
    where the agent works with a share of it (Codex); ``pct_override``:
    Claude Code's ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`` (it can only lower auto).
    """
    if window <= 0:
        raise ValueError("window must be positive")
    t = _rule_thresholds(rule, window, model, max_output, raw_window, pct_override)
    return replace(t, label=rule.label.split(":", 1)[0])  # "Claude Code", "Codex", …


def _rule_thresholds(
    rule: PolicyRule,
    window: int,
    model: str | None,
    max_output: int | None,
    raw_window: int | None,
    pct_override: float | None,
) -> Thresholds:
    c = rule.constant
    kind = rule.kind
    if kind == "reserve-buffer":
        cap = c("summary_cap")
        out = max_output or c("default_output") or cap
        usable = window - (min(out, cap) if cap else out)
        auto = usable - c("buffer")
        if pct_override is not None and 0 < pct_override < 100:
            auto = min(auto, int(usable * pct_override / 100))
        return _ordered(window, auto - c("warn_buffer"), auto, usable - c("hard_buffer"), usable)
    if kind in ("ladder", "ladder-min"):
        pct = c("pct")
        effective = window - c("summary_reserve")
        ceiling = effective - c("buffer")
        auto = max(pct * window, ceiling) if kind == "ladder" else min(pct * window, ceiling)
        auto = max(auto, 0.0)
        warn = (
            max((pct - 0.1) * window, auto - c("warn_buffer"))
            if kind == "ladder"
            else auto - c("warn_buffer")
        )
        hard = (
            max(effective - c("hard_buffer"), auto)
            if kind == "ladder"
            else min(window, max(effective - c("hard_buffer"), auto + c("hard_buffer")))
        )
        return _ordered(window, warn, auto, hard, effective)
    if kind == "fraction":
        pct = c("pct")
        target = round(window * (1 - c("preserve"))) if c("preserve") else None
        return _ordered(
            window,
            max(0.0, pct - 0.1) * window,
            pct * window,
            window,
            window,
            target if target is not None and target < pct * window else None,
        )
    if kind == "limit":
        limit = rule.limit_for(model)
        if limit is None and c("limit_pct"):
            limit = round(c("limit_pct") * (raw_window or window))
        if limit is None:
            return _ordered(window, c("warn_pct", 0.9) * window, window, window, window)
        return _ordered(
            window, min(limit, c("warn_pct", 0.9) * (raw_window or window)), limit, window, window
        )
    if kind == "window-table":  # Cline: a reserve per window, else the larger of two
        exact = dict(rule.limits).get(str(window))
        auto = exact if exact is not None else max(window - c("reserve"), c("pct") * window)
        return _ordered(window, auto, auto, window, window)
    if kind == "buffer-reserve":  # Roo Code: a share of the window, less the output reserve
        usable = (1 - c("buffer_pct")) * window - (max_output or c("reserve"))
        auto = min(c("pct", 1.0) * window, usable)
        return _ordered(window, auto, auto, window, window)
    if kind == "none":
        return _ordered(window, c("warn_pct", 0.8) * window, window, window, window)
    raise KeyError(f"unknown policy kind {kind!r}")
