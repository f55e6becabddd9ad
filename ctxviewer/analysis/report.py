"""One analysis of a session, shared by ``ctxviewer report`` and the GUI.

``Analysis`` fixes the estimator, policy and window of a loaded session and
derives thresholds, the timeline and per-request breakdowns on demand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ctxviewer.analysis.breakdown import Breakdown, Item, breakdown, infer_overhead
from ctxviewer.analysis.estimators import DEFAULT, Estimator, get_estimator
from ctxviewer.analysis.thresholds import Thresholds, thresholds
from ctxviewer.analysis.timeline import Point, timeline
from ctxviewer.analysis.windows import context_window, window_source
from ctxviewer.model import Session

BREAKDOWNS_KEPT = 32  # per Analysis: stepping through requests recomputes no recent one


@dataclass
class Analysis:
    session: Session
    estimator_name: str = DEFAULT
    policy: str = "qwen"
    window_override: int | None = None
    custom: dict[str, int] | None = None
    _inferred: dict[tuple[str, str | None], int | None] = field(default_factory=dict, repr=False)
    _breakdowns: dict[int, Breakdown] = field(default_factory=dict, repr=False)

    @cached_property
    def estimator(self) -> Estimator:
        return get_estimator(self.estimator_name)

    @cached_property
    def window(self) -> int:
        return context_window(self.session.model, self.session.window_hint, self.window_override)

    @cached_property
    def window_source(self) -> str:
        return window_source(self.session.model, self.session.window_hint, self.window_override)

    @cached_property
    def thresholds(self) -> Thresholds:
        return thresholds(self.window, self.policy, self.custom)

    @cached_property
    def timeline(self) -> list[Point]:
        return timeline(self.session, self.estimator, self.thresholds)

    def resolve_index(self, which: int | str | None) -> int:
        """See ``Session.resolve_index``."""
        return self.session.resolve_index(which)

    def breakdown(self, index: int) -> Breakdown:
        """The breakdown of request ``index`` (the last ``BREAKDOWNS_KEPT`` are kept:
        a worker prepares the one a window shows first)."""
        index = range(len(self.session.requests))[index]  # IndexError as a list would
        done = self._breakdowns.get(index)
        if done is None:
            done = self._breakdowns[index] = self._breakdown(index)
            if len(self._breakdowns) > BREAKDOWNS_KEPT:
                del self._breakdowns[next(iter(self._breakdowns))]
        return done

    def _breakdown(self, index: int) -> Breakdown:
        req = self.session.requests[index]
        key = (req.role, req.agent)
        if not req.complete and key not in self._inferred:
            self._inferred[key] = infer_overhead(self.session.requests, req, self.estimator)
        window = context_window(req.model, req.window_hint or self.session.window_hint,
                                self.window_override) if req.model else self.window
        t = self.thresholds if window == self.window else thresholds(window, self.policy,
                                                                     self.custom)
        return breakdown(req, self.estimator, window, t, self._inferred.get(key))


def item_json(item: Item) -> dict[str, Any]:
    out: dict[str, Any] = {"name": item.name, "tokens": item.tokens}
    if item.index is not None:
        out["index"] = item.index
    if item.items:
        out["items"] = [item_json(x) for x in item.items]
    return out


def breakdown_json(b: Breakdown) -> dict[str, Any]:
    return {
        "request": b.request, "mode": b.mode, "estimator": b.estimator, "window": b.window,
        "total": b.total, "used": b.used, "overhead_scale": round(b.overhead_scale, 4),
        "raw_overhead": b.raw_overhead, "messages_estimate": b.messages_estimate,
        "messages_error": b.messages_error, "complete": b.complete, "notes": list(b.notes),
        "source_notes": list(b.source_notes),
        "categories": [
            {"name": c.name, "label": c.label, "tokens": c.tokens, "percent": b.percent(c.tokens),
             "estimated": c.estimated, "note": c.note, "items": [item_json(x) for x in c.items]}
            for c in b.categories
        ],
    }


def point_json(p: Point) -> dict[str, Any]:
    return {
        "index": p.index, "timestamp": p.timestamp, "model": p.model,
        "api_prompt_tokens": p.api_prompt_tokens,
        "estimated_prompt_tokens": p.estimated_prompt_tokens, "output_tokens": p.output_tokens,
        "cache_read_input_tokens": p.cache_read, "cache_creation_input_tokens": p.cache_write,
        "tier": p.tier, "sidechain": p.sidechain, "role": p.role, "events": list(p.events),
    }


def report_json(a: Analysis, which: int | str | None = None) -> dict[str, Any]:
    s = a.session
    out: dict[str, Any] = {
        "source": {"path": s.path, "format": s.format, "skipped_records": len(s.skipped),
                   "complete": s.complete, "requests": len(s.requests)},
        "model": s.model, "window": a.window, "window_source": a.window_source,
        "policy": a.policy, "estimator": a.estimator.name,
        "thresholds": a.thresholds.as_dict(),
        "requests": [point_json(p) for p in a.timeline],
        "events": [{"kind": e.kind, "request": r.index, "timestamp": e.timestamp,
                    "pre_tokens": e.pre_tokens, "post_tokens": e.post_tokens,
                    "next_prompt_tokens": r.api_prompt_tokens, "trigger": e.trigger}
                   for r in s.requests for e in r.events]
                  + [{"kind": e.kind, "request": None, "timestamp": e.timestamp,
                      "pre_tokens": e.pre_tokens, "post_tokens": e.post_tokens,
                      "trigger": e.trigger} for e in s.events],
        "breakdown": breakdown_json(a.breakdown(a.resolve_index(which))) if s.requests else None,
    }
    prompts = [p.api_prompt_tokens for p in a.timeline if p.api_prompt_tokens is not None]
    out["peak_prompt_tokens"] = max(prompts) if prompts else None
    return out
