"""Compaction forecast: at the growth rate of the last turns, in how many requests
(and minutes) the agent's own auto-compaction fires.

The main conversation's last ``TURNS`` answered requests since its last
compaction give the growth per request (first to last, by the API's prompt
sizes) and the time per request (their timestamps). The threshold is the
agent's auto-compaction threshold (``analysis.agents.policy``); an agent that
never compacts by itself is forecast to fill its window instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime

from ctxviewer.analysis.agents.controls import Controls
from ctxviewer.analysis.findings.model import ERROR, INFO, WARN, Finding
from ctxviewer.analysis.thresholds import Thresholds
from ctxviewer.fmt import fmt_tokens, plural
from ctxviewer.model import MAIN, Request

TURNS = 5
SOON_ERROR, SOON_WARN = 5, 20  # requests left


def _seconds(a: str | None, b: str | None) -> float | None:
    """Seconds from ``a`` to ``b``; None when one is unreadable, or when one has a UTC
    offset and the other none (a claude-trace log's ``logged_at`` is local time)."""
    try:
        return (
            (datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds()
            if a and b
            else None
        )
    except (ValueError, TypeError):
        return None


def last_turns(requests: Sequence[Request]) -> list[Request]:
    """The main conversation's last answered requests since its last compaction."""
    main = [r for r in requests if r.role == MAIN and r.usage is not None]
    prompts = [r.usage.prompt_tokens for r in main if r.usage is not None]  # each of main
    start = 0
    for i in range(1, len(main)):
        if prompts[i] < prompts[i - 1] * 0.7:
            start = i  # the prompt fell: a compaction (or /clear) happened
    return main[start:][-TURNS:]


def forecast_finding(
    requests: Sequence[Request], thresholds: Thresholds, window: int, controls: Controls
) -> Finding | None:
    turns = last_turns(requests)
    if len(turns) < 3:
        return None
    sizes = [r.usage.prompt_tokens for r in turns if r.usage is not None]  # each of turns
    growth = (sizes[-1] - sizes[0]) / (len(sizes) - 1)
    if growth <= 0:
        return None
    compacts = thresholds.auto < window
    limit = thresholds.auto if compacts else window
    left = max(0, limit - sizes[-1])
    n = math.ceil(left / growth) if left else 0
    span = _seconds(turns[0].timestamp, turns[-1].timestamp)
    minutes = span / (len(turns) - 1) * n / 60 if span is not None and span >= 0 else None
    when = f"{plural(n, 'request')}" + (
        f" (about {minutes:.0f} min)" if minutes is not None else ""
    )
    what = "auto-compaction fires" if compacts else "the window is full"
    if n == 0:  # the last request already reached it: the next one compacts (or fails)
        title = (
            "Compaction forecast: the last request reached the auto-compaction "
            "threshold, the next one compacts"
            if compacts
            else "Compaction forecast: the last request filled the window"
        )
    else:
        title = f"Compaction forecast: {what} in {when}"
    severity = ERROR if n <= SOON_ERROR else WARN if n <= SOON_WARN else INFO
    return Finding(
        "compaction-soon",
        severity,
        title,
        (f"threshold {limit:,}",),
        tuple(r.index for r in turns),
        round(growth),
        None,
        None,
        controls.action("compaction"),
        f"the last {len(turns)} main requests grew {fmt_tokens(round(growth))} tokens each, "
        f"to {sizes[-1]:,}; "
        + (
            f"{fmt_tokens(left)} tokens left below "
            if left
            else f"{fmt_tokens(sizes[-1] - limit)} tokens over "
        )
        + f"{'the auto-compaction threshold' if compacts else 'the window'} ({limit:,})",
        focus=turns[-1].index,
    )
