"""Prompt tokens per request over time: what the timeline plots and the report lists."""

from __future__ import annotations

from dataclasses import dataclass

from ctxviewer.analysis.breakdown import infer_overhead
from ctxviewer.analysis.thresholds import Thresholds, pre_send_estimate, tier
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
    api_prompt_tokens: int | None  # an overflowing call: the size its error states
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
    # no usage after an API count of its conversation: that count plus the estimate of
    # what was added since (the pre-send estimate, ``carried_estimate``)
    carried_prompt_tokens: int | None = None

    @property
    def unanswered(self) -> bool:
        """A call that got no answer (an overflow aside, whose estimate is the point):
        marked, never drawn on the curves, no tier."""
        return self.failure is not None and CONTEXT_OVERFLOW not in self.events

    @property
    def prompt_tokens(self) -> int:
        """API count where known, else the pre-send estimate from the last API count,
        else the estimate (what the tier is judged on)."""
        if self.api_prompt_tokens is not None:
            return self.api_prompt_tokens
        if self.carried_prompt_tokens is not None:
            return self.carried_prompt_tokens
        return self.estimated_prompt_tokens


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


def _overhead(req: Request, est: Estimator) -> int:
    return sum(est.block(b) for b in req.system) + sum(est.tool(t) for t in req.tools)


def carried_estimate(last: Request, req: Request, est: Estimator) -> int | None:
    """The size of ``req`` (no usage) from ``last``, the previous call of its conversation
    with an API count: that count, less the estimate of what ``req`` no longer holds,
    plus the estimate of what it added (qwen-code's pre-send estimate, generalised to a
    history that was rewound or edited). None when ``last`` has no count."""
    if last.usage is None:
        return None
    old, new = last.messages, req.messages
    k = 0
    for a, b in zip(old, new, strict=False):
        if a is not b and a != b:
            break
        k += 1
    added = est.messages(new[k:]) - est.messages(old[k:])
    if req.complete and last.complete:
        added += _overhead(req, est) - _overhead(last, est)
    return max(
        0,
        pre_send_estimate(last.usage.prompt_tokens, added, est.messages(new) + _overhead(req, est)),
    )


def overflow_size(r: Request) -> int | None:
    """The prompt size a call's own context-overflow error states (the API's count of a
    prompt it refused), or None."""
    return next(
        (
            e.overflow.input_tokens
            for e in r.events
            if e.kind == CONTEXT_OVERFLOW and e.overflow is not None and e.overflow.input_tokens
        ),
        None,
    )


def timeline(
    session: Session, est: Estimator, thresholds: Thresholds, estimates: bool = True
) -> list[Point]:
    """``estimates`` False: a request the API counted gets no estimate (0), for a session
    read without its messages (the library's rows: there is nothing to estimate)."""
    points: list[Point] = []
    inferred: dict[tuple[str, str | None], int | None] = {}
    counted: dict[tuple[str, str | None], Request] = {}  # the last call with usage
    for r in session.requests:
        key = (r.role, r.agent)
        u = r.usage
        api = u.prompt_tokens if u else overflow_size(r)
        if api is not None and not estimates:
            estimate = 0
        else:
            if not r.complete and key not in inferred:
                inferred[key] = infer_overhead(session.requests, r, est)
            estimate = estimate_request(r, est, inferred.get(key))
        last = counted.get(key)
        carried = carried_estimate(last, r, est) if api is None and last is not None else None
        if u is not None:
            counted[key] = r
        size = api if api is not None else carried if carried is not None else estimate
        events = r.events
        points.append(
            Point(
                r.index,
                r.timestamp,
                r.model,
                r.role,
                r.sidechain,
                api,
                estimate,
                u.output_tokens if u else None,
                u.cache_read_input_tokens if u else None,
                u.cache_creation_input_tokens if u else None,
                u.input_tokens if u else None,
                tier(size, thresholds),
                tuple(e.kind for e in events) if events else (),
                r.agent,
                r.failure if u is None else None,  # a call with usage was answered
                r.simulated,
                carried,
            )
        )
    return points
