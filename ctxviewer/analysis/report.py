"""The JSON of ``ctxviewer report``: an ``Analysis`` as data (docs/json.md)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.breakdown import Breakdown, Category, Item
from ctxviewer.analysis.overflows import overflow_json
from ctxviewer.analysis.timeline import Point


def identity_json(a: Analysis) -> dict[str, Any]:
    ident = a.identity
    return {
        "id": ident.profile.id,
        "label": ident.label,
        "version": ".".join(map(str, ident.version)) if ident.version else None,
        "evidence": ident.evidence,
        "entrypoint": ident.entrypoint,
        "rules_note": ident.rules_note,
    }


def item_json(item: Item) -> dict[str, Any]:
    out: dict[str, Any] = {"name": item.name, "tokens": item.tokens}
    if item.index is not None:
        out["index"] = item.index
    if item.items:
        out["items"] = [item_json(x) for x in item.items]
    return out


def breakdown_json(b: Breakdown) -> dict[str, Any]:
    return {
        "request": b.request,
        "mode": b.mode,
        "estimator": b.estimator,
        "window": b.window,
        "total": b.total,
        "used": b.used,
        "overhead_scale": round(b.overhead_scale, 4),
        "raw_overhead": b.raw_overhead,
        "messages_estimate": b.messages_estimate,
        "counts": b.counts,
        "differences": [d.as_dict() for d in b.differences],
        "attribution": b.attribution,
        "failure": b.failure,
        "total_basis": b.total_basis,
        "messages_error": b.messages_error,
        "complete": b.complete,
        "notes": list(b.notes),
        "source_notes": list(b.source_notes),
        "categories": [category_json(b, c) for c in b.categories],
        "outside": [category_json(b, c) for c in b.outside],
    }


def category_json(b: Breakdown, c: Category) -> dict[str, Any]:
    return {
        "name": c.name,
        "label": c.label,
        "tokens": c.tokens,
        "percent": b.percent(c.tokens),
        "estimated": c.estimated,
        "basis": c.basis,
        "note": c.note,
        "items": [item_json(x) for x in c.items],
    }


CSV_HEADER = ("category", "item", "tokens", "percent", "depth", "leaf")


def _item_rows(
    category: str, items: tuple[Item, ...], b: Breakdown, depth: int, prefix: str = ""
) -> Iterator[tuple[str, str, int, float, int, bool]]:
    for x in items:
        name = f"{prefix}{x.name}"
        yield category, name, x.tokens, b.percent(x.tokens), depth, not x.items
        yield from _item_rows(category, x.items, b, depth + 1, f"{name} / ")


def breakdown_csv_rows(b: Breakdown) -> Iterator[tuple[str, str, int, float, int, bool]]:
    """(category, item, tokens, percent of window, depth, leaf): one row per category
    (depth 0), then its items (nested ones named ``parent / child``, one deeper). Every
    row is the sum of the rows one deeper under it (``analysis.balance``), so the leaf
    rows add up to the window and a sum of every row counts tokens twice or more."""
    for c in b.categories:
        yield c.name, "", c.tokens, b.percent(c.tokens), 0, not c.items
        yield from _item_rows(c.name, c.items, b, 1)


def point_json(p: Point) -> dict[str, Any]:
    return {
        "index": p.index,
        "timestamp": p.timestamp,
        "model": p.model,
        "api_prompt_tokens": p.api_prompt_tokens,
        "estimated_prompt_tokens": p.estimated_prompt_tokens,
        "output_tokens": p.output_tokens,
        "cache_read_input_tokens": p.cache_read,
        "cache_creation_input_tokens": p.cache_write,
        "tier": p.tier,
        "sidechain": p.sidechain,
        "role": p.role,
        "events": list(p.events),
        "failure": p.failure,
        "carried_prompt_tokens": p.carried_prompt_tokens,
    }


def report_json(a: Analysis, which: int | str | None = None) -> dict[str, Any]:
    s = a.session
    out: dict[str, Any] = {
        "source": {
            "path": s.path,
            "format": s.format,
            "skipped_records": len(s.skipped),
            "complete": s.complete,
            "requests": len(s.requests),
        },
        "model": s.model,
        "window": a.window,
        "window_source": a.window_source,
        "window_detail": a.window_info.detail,
        "agent": identity_json(a),
        "policy": a.policy,
        "policy_label": a.policy_label,
        "policy_source": a.policy_source,
        "rules_note": a.identity.rules_note,
        "threshold_evidence": a.threshold_evidence,
        "estimator": a.estimator.name,
        "thresholds": a.thresholds.as_dict(),
        "requests": [
            point_json(p) | att.as_dict() for p, att in zip(a.timeline, a.attribution, strict=True)
        ],
        "events": [
            {
                "kind": e.kind,
                "request": r.index,
                "timestamp": e.timestamp,
                "pre_tokens": e.pre_tokens,
                "post_tokens": e.post_tokens,
                "next_prompt_tokens": r.api_prompt_tokens,
                "trigger": e.trigger,
            }
            | overflow_json(e.overflow)
            for r in s.requests
            for e in r.events
        ]
        + [
            {
                "kind": e.kind,
                "request": None,
                "timestamp": e.timestamp,
                "pre_tokens": e.pre_tokens,
                "post_tokens": e.post_tokens,
                "trigger": e.trigger,
            }
            | overflow_json(e.overflow)
            for e in s.events
        ],
        "breakdown": breakdown_json(a.breakdown(a.resolve_index(which))) if s.requests else None,
    }
    out["compactions"] = a.compactions.as_dict()
    prompts = [p.api_prompt_tokens for p in a.timeline if p.api_prompt_tokens is not None]
    out["peak_prompt_tokens"] = max(prompts) if prompts else None
    return out
