"""Predicted against observed compactions: does the agent's profile explain the log?

An agent checks its context just before it sends a request: when what it is
about to send has reached the auto threshold, it compacts first. For each
main request that size is known: the request's own prompt (the API's count)
when it went out uncompacted; where a compaction happened, the size the agent
recorded before compacting (Claude Code's ``preTokens``), else the previous
request's size plus the median growth of the last requests. A compaction is
*predicted* on the first request whose size reaches the threshold, and is
armed again once the size drops below it. A compaction is *observed* where the
log records one (a ``compact_boundary`` / summary event on the first request
after it). After the last request, the last size (plus its output, for agents
that count the whole exchange: ``counts_output``) says whether the next
request would compact (``pending``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxviewer.analysis.real_compactions import COMPACTION_KINDS, real_compactions, request_events
from ctxviewer.analysis.thresholds import Thresholds
from ctxviewer.analysis.timeline import Point
from ctxviewer.model import MAIN, Session

TOLERANCE = 1  # requests: a prediction this close to an observed compaction explains it


@dataclass(frozen=True)
class Compactions:
    """Where a session compacted, and where the agent's threshold says it would have."""

    observed: tuple[int, ...]  # request indices (the first request after each compaction)
    triggers: tuple[str | None, ...]  # per observed: "auto" | "manual" | "inferred" | None
    predicted: tuple[int, ...]
    pending: bool  # the last request reached the threshold: the next one would compact
    auto: int

    def explained(self, index: int) -> bool:
        """Whether observed compaction at ``index`` has a prediction within ``TOLERANCE``."""
        return any(abs(p - index) <= TOLERANCE for p in self.predicted)

    def as_dict(self) -> dict[str, object]:
        return {
            "observed": list(self.observed),
            "predicted": list(self.predicted),
            "triggers": list(self.triggers),
            "pending": self.pending,
            "auto": self.auto,
            "explained": [self.explained(i) for i in self.observed],
        }


GROWTH_WINDOW = 5  # requests whose growth estimates what a compacted request would have added


def predict(
    points: Sequence[Point], t: Thresholds, counts_output: bool, compacted: dict[int, int | None]
) -> tuple[list[int], bool]:
    """Indices where ``t``'s auto-compaction fires along the real curve, and whether the
    request after the last one would. ``compacted``: observed compactions, by the index
    of the request after them, with the size the agent recorded before (or None)."""
    main = [p for p in points if p.role == MAIN and not p.sidechain]
    fired: list[int] = []
    growth: list[int] = []
    armed = True
    prev: Point | None = None
    for p in main:
        if p.index in compacted:
            pre = compacted[p.index]
            if pre is None and prev is not None:
                recent = sorted(growth[-GROWTH_WINDOW:]) or [0]
                pre = prev.prompt_tokens + recent[len(recent) // 2]
            if counts_output and prev is not None:  # the agent compared the last exchange
                pre = max(pre or 0, prev.prompt_tokens + (prev.output_tokens or 0))
            size = pre or 0
        else:
            size = p.prompt_tokens
            if prev is not None and size >= prev.prompt_tokens:
                growth.append(size - prev.prompt_tokens)
        if size >= t.auto and armed:
            fired.append(p.index)
            armed = False
        elif size < t.auto or p.index in compacted:
            armed = True
        prev = p
    pending = False
    if prev is not None and armed:
        last = prev.prompt_tokens + ((prev.output_tokens or 0) if counts_output else 0)
        pending = last >= t.auto
    return fired, pending


def compactions(
    session: Session, points: Sequence[Point], t: Thresholds, counts_output: bool
) -> Compactions:
    real = real_compactions(points, request_events(session))
    observed = tuple(c.index for c in real)
    logged = {
        i: e.pre_tokens
        for i, e in request_events(session)
        if e.kind in COMPACTION_KINDS and e.pre_tokens
    }
    predicted, pending = predict(points, t, counts_output, {i: logged.get(i) for i in observed})
    return Compactions(observed, tuple(c.trigger for c in real), tuple(predicted), pending, t.auto)
