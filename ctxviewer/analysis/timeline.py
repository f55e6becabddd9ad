"""Prompt tokens per request over time: what the timeline plots and the report lists."""

from __future__ import annotations

from dataclasses import dataclass

from ctxviewer.analysis.breakdown import infer_overhead
from ctxviewer.analysis.thresholds import Thresholds, tier
from ctxviewer.analysis.tokens.estimators import Estimator
from ctxviewer.model import CONTEXT_OVERFLOW, Request, Session


@dataclass(frozen=True, slots=True)
class Point:
    """One request on the timeline: API count, estimate, usage and marks."""

    index: int
    timestamp: str | None
    model: str | None
    role: str
    sidechain: bool
    api_prompt_tokens: int | None
    estimated_prompt_tokens: int
    output_tokens: int | None
    cache_read: int | None
    cache_write: int | None
    uncached: int | None
    tier: str
    events: tuple[str, ...]
    agent: str | None = None  # the sub-agent's id (Claude Code's compaction call: "acompact-…")
    failure: str | None = None  # why the call got no answer: no point of the curves
    simulated: bool = False  # a simulated compaction's request: its count is an estimate

    @property
    def unanswered(self) -> bool:
        """A call that got no answer (an overflow aside, whose estimate is the point):
        marked, never drawn on the curves, no tier."""
        return self.failure is not None and CONTEXT_OVERFLOW not in self.events

    @property
    def prompt_tokens(self) -> int:
        """API count where known, else the estimate (what the tier is judged on)."""
        return self.api_prompt_tokens if self.api_prompt_tokens is not None \
            else self.estimated_prompt_tokens


def estimate_request(req: Request, est: Estimator, inferred: int | None = None) -> int:
    """The estimator's count of the whole prompt of ``req``.

    For transcripts the unrecorded system prompt and tools are taken as
    ``inferred`` (from the first API usage), since no estimator can see them.
    """
    if req.complete:
        overhead = sum(est.block(b) for b in req.system) + sum(est.tool(t) for t in req.tools)
    else:
        overhead = inferred or 0
    return overhead + est.messages(req.messages)


def timeline(session: Session, est: Estimator, thresholds: Thresholds,
             estimates: bool = True) -> list[Point]:
    """``estimates`` False: a request the API counted gets no estimate (0), for a session
    read without its messages (the library's rows: there is nothing to estimate)."""
    points: list[Point] = []
    inferred: dict[tuple[str, str | None], int | None] = {}
    for r in session.requests:
        u = r.usage
        api = u.prompt_tokens if u else None
        key = (r.role, r.agent)
        if api is not None and not estimates:
            estimate = 0
        else:
            if not r.complete and key not in inferred:
                inferred[key] = infer_overhead(session.requests, r, est)
            estimate = estimate_request(r, est, inferred.get(key))
        points.append(Point(
            r.index, r.timestamp, r.model, r.role, r.sidechain, api, estimate,
            u.output_tokens if u else None,
            u.cache_read_input_tokens if u else None,
            u.cache_creation_input_tokens if u else None,
            u.input_tokens if u else None,
            tier(api if api is not None else estimate, thresholds),
            tuple(e.kind for e in r.events),
            r.agent,
            r.failure,
            r.simulated,
        ))
    return points
