"""What-if replay: where would auto-compaction have fired under another policy?

``replay(points, thresholds)`` walks the main-role requests of a timeline in
order and simulates the chosen policy's auto-compaction along the real token
curve:

- the prompt size of a request is the API count where known, else the
  estimate (``Point.prompt_tokens``);
- when the simulated prompt size reaches ``thresholds.auto``, a compaction
  would fire at that request: it is recorded (index, tokens) and the
  simulated context drops to the *target*;
- after that the conversation keeps growing by the real deltas between
  consecutive requests, shifted down by what the compaction removed. The
  simulated size stays between ``min(real, target)`` and the real size: a
  compaction only removes, and a real drop below the simulated size (a
  ``/clear``, an unlogged compaction) pulls the simulation down to it;
- a real compaction in the log (a ``compact_boundary`` event) resets the
  simulation to the real curve; real compactions are returned separately so
  the UI can compare ("3 compactions would fire (1 happened)"). Where the
  size before it (the log's ``preTokens``, else the previous request's),
  shifted like the simulation, reaches the threshold, the policy fires there
  too: under the agent's own policy, the compaction the agent made is one
  the replay makes.

Target: ``thresholds.target`` when the policy defines one (Shannon: 37.5% of
the window); otherwise ``DEFAULT_TARGET_FRACTION`` (30%) of the window, the
share of recent history qwen-code keeps verbatim when it compresses. Either
is capped at the auto threshold, so a simulated compaction always removes
something. A ``target`` argument overrides both.

No Qt here: the timeline plot draws the result.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ctxviewer.analysis.real_compactions import (
    COMPACTION_KINDS,
    RealCompaction,
    main_points,
    real_compactions,
    request_events,
)
from ctxviewer.analysis.thresholds import Thresholds
from ctxviewer.analysis.timeline import Point
from ctxviewer.model import Event

__all__ = [
    "COMPACTION_KINDS",
    "DEFAULT_TARGET_FRACTION",
    "Fire",
    "RealCompaction",
    "WhatIf",
    "default_target",
    "real_compactions",
    "replay",
    "request_events",
]

DEFAULT_TARGET_FRACTION = 0.3


@dataclass(frozen=True, slots=True)
class Fire:
    """A compaction the policy would have triggered before request ``index``."""

    index: int
    tokens: int  # simulated prompt size that crossed the auto threshold
    after: int  # simulated prompt size right after the compaction


@dataclass(frozen=True, slots=True)
class WhatIf:
    """A session replayed under another policy or window: where compaction would fire."""

    policy: str
    window: int
    auto: int
    target: int
    fired: tuple[Fire, ...]
    real: tuple[RealCompaction, ...]
    # The simulated curve of the main requests as (request index, tokens);
    # a fire adds a second entry at the same index (before, then after).
    simulated: tuple[tuple[int, int], ...]

    @property
    def fired_indices(self) -> list[int]:
        return [f.index for f in self.fired]

    @property
    def count(self) -> int:
        return len(self.fired)

    @property
    def real_count(self) -> int:
        return len(self.real)

    def label(self) -> str:
        """E.g. ``policy qwen: 3 compactions would fire (1 happened)``."""
        noun = "compaction" if self.count == 1 else "compactions"
        return f"policy {self.policy}: {self.count} {noun} would fire ({self.real_count} happened)"


def default_target(t: Thresholds) -> int:
    """Where a compaction brings the context under policy ``t`` (see module doc)."""
    target = t.target if t.target is not None else round(DEFAULT_TARGET_FRACTION * t.window)
    return max(0, min(target, t.auto))


def replay(
    points: Sequence[Point],
    thresholds: Thresholds,
    *,
    target: int | None = None,
    events: Iterable[tuple[int, Event]] | None = None,
) -> WhatIf:
    """Simulate ``thresholds``' auto-compaction along the real curve of ``points``."""
    goal = default_target(thresholds) if target is None else max(0, min(target, thresholds.auto))
    real = real_compactions(points, events)
    resets = {c.index: c for c in real}
    fired: list[Fire] = []
    curve: list[tuple[int, int]] = []
    sim = 0
    prev_real: int | None = None
    for p in main_points(points):
        actual = p.prompt_tokens
        reset = resets.get(p.index)
        if reset is not None and prev_real is not None and reset.pre_tokens:
            # what the context had grown to when the agent compacted, on the simulated
            # curve: the policy fires there too when that reaches its threshold
            before = sim + reset.pre_tokens - prev_real
            if before >= thresholds.auto:
                fired.append(Fire(p.index, before, min(actual, goal)))
        if prev_real is None or reset is not None:
            sim = actual
        else:
            sim = min(actual, max(sim + actual - prev_real, min(actual, goal)))
        prev_real = actual
        curve.append((p.index, sim))
        if sim >= thresholds.auto:
            fired.append(Fire(p.index, sim, goal))
            sim = goal
            curve.append((p.index, sim))
    return WhatIf(
        thresholds.label or thresholds.policy,
        thresholds.window,
        thresholds.auto,
        goal,
        tuple(fired),
        tuple(real),
        tuple(curve),
    )
