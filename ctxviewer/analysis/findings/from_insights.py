"""Repeated and stale content, and cache breaks, as findings: taken from the insights
(``insights.redundancy``, ``insights.cache_breaks``), never computed again here.

One finding per kind. Redundant content is priced at the billing tiers of the
last request that carried it; a cache break at what writing its tokens to the
cache again cost over reading them from it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TypeVar

from ctxviewer.analysis.agents.controls import Controls
from ctxviewer.analysis.findings.carry import Carrier
from ctxviewer.analysis.findings.model import INFO, WARN, Cost, Finding
from ctxviewer.analysis.insights.cache_breaks import COMPACTION, EXPIRED, CacheBreak
from ctxviewer.analysis.insights.redundancy import Finding as Redundant
from ctxviewer.fmt import fmt_tokens, plural
from ctxviewer.model import Request

CARRIED_WARN = 1.0  # redundant content carried over this many windows' worth: a warning
BREAKS_WARN = 0.5  # cache re-written over this share of the window: a warning
TOP_ITEMS = 20
KIND_TITLES = {
    "stale_read": "Stale file reads",
    "repeated_read": "Repeated file reads",
    "old_todo": "Old todo lists",
    "duplicate_output": "Duplicate tool outputs",
    "duplicate_reminder": "Duplicate system reminders",
}


K = TypeVar("K", Redundant, CacheBreak)


def _by_kind(things: Sequence[K]) -> dict[str, list[K]]:
    """``things`` grouped by their ``kind``, in the order kinds first appear."""
    groups: dict[str, list[K]] = defaultdict(list)
    for t in things:
        groups[t.kind].append(t)
    return groups


def redundancy_findings(
    found: Sequence[Redundant],
    requests: Sequence[Request],
    carrier: Carrier,
    controls: Controls,
    window: int,
) -> list[Finding]:
    by_index = {r.index: r for r in requests}
    out = []
    for kind, fs in _by_kind(found).items():
        fs.sort(key=lambda f: -f.carry_tokens)
        cost = Cost()
        for f in fs:
            last = by_index.get(f.last_request if f.last_request is not None else -1)
            if last is not None:
                carrier.share(last, f.carry_tokens, cost)
        carried = sum(f.carry_tokens for f in fs)
        top = fs[0]
        requests_ = sorted(
            {f.since_request for f in fs}
            | ({top.last_request} if top.last_request is not None else set())
        )
        items = tuple(dict.fromkeys(f.path or f.name for f in fs))[:TOP_ITEMS]
        trim = sum(f.carry_tokens for f in fs if f.trim_drops)
        out.append(
            Finding(
                "stale-content" if kind == "stale_read" else "repeated-content",
                WARN if window and carried >= CARRIED_WARN * window else INFO,
                f"{KIND_TITLES.get(kind, kind)}: {len(fs)}, carried {fmt_tokens(carried)} tokens "
                "after they were superseded",
                items,
                tuple(requests_),
                sum(f.tokens for f in fs),
                carried,
                cost.usd,
                controls.action("content"),
                f"largest: {top.path or top.name} ({top.tokens:,} tokens x {top.carried_by} "
                f"requests, superseded by {top.superseded_by}); the trim strategy drops "
                f"{fmt_tokens(trim)} of the carried tokens",
                cost,
                cost.usd,
                "messages",
                (top.message,) if top.message is not None else (),
                top.last_request,
            )
        )
    return out


def cache_break_findings(
    breaks: Sequence[CacheBreak],
    requests: Sequence[Request],
    carrier: Carrier,
    controls: Controls,
    window: int,
) -> list[Finding]:
    by_index = {r.index: r for r in requests}
    out = []
    for kind, bs in _by_kind(breaks).items():
        tokens = sum(b.tokens or 0 for b in bs)
        if not tokens:
            continue  # nothing was written again: nothing to act on
        usd: float | None = None
        for b in bs:
            extra = (
                carrier.rewrite_usd(by_index[b.request], b.tokens or 0)
                if b.request in by_index
                else None
            )
            if extra is not None:
                usd = (usd or 0.0) + extra
        action = {
            COMPACTION: "a compaction rewrites the cache by nature: compact less often, "
            "at natural breaks",
            EXPIRED: "the cache expired during a pause: resume within its TTL, or "
            "expect one full re-write",
        }.get(kind, controls.action("cache"))
        worst = max(bs, key=lambda b: b.tokens or 0)
        out.append(
            Finding(
                "cache-break",
                WARN if window and tokens >= BREAKS_WARN * window else INFO,
                f"Cache breaks ({kind.replace('_', ' ')}): {plural(len(bs), 'break')}, "
                f"{fmt_tokens(tokens)} tokens written again",
                (kind,),
                tuple(b.request for b in bs),
                None,
                tokens,
                usd,
                action,
                f"largest at request {worst.request}: {worst.detail}; usd: the cache-write price "
                "over the cache-read price of the tokens written again",
                None,
                usd,
                None,
                focus=worst.request,
            )
        )
    return out
