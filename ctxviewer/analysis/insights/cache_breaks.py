"""Cache breaks: where the prompt prefix of a conversation stopped matching.

Prompt caching reuses the longest unchanged prefix of the previous request,
in the API's order: tools, then system, then messages. Between consecutive
requests of one conversation with full bodies, the first block that differs
is the break; everything after it is written to the cache again. The cost is
the later request's ``cache_creation_input_tokens`` when the API reported
it, else the local estimate of the tokens from the break to the end.

Transcripts (no system prompt or tools recorded) only have usage: a request
whose cache read fell well below the previous prompt is a break at an
unknown position, labelled ``expired`` when the pause exceeded the cache
TTL and ``compaction`` when a compaction happened in between.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from itertools import pairwise
from typing import Any

from ctxviewer.analysis.insights.conversations import conversations
from ctxviewer.analysis.tokens.estimators import Estimator
from ctxviewer.fmt import plural
from ctxviewer.model import (
    COMPACT_BOUNDARY,
    COMPACT_SUMMARY,
    COMPACTION_SUMMARY,
    SYSTEM_REMINDER,
    Block,
    Request,
    Session,
)

# kinds
TOOLS_REORDERED = "tools_reordered"
TOOLS_CHANGED = "tools_changed"
SYSTEM_EDITED = "system_edited"
REMINDER_EDITED = "system_reminder_edited"
MESSAGES_REWRITTEN = "messages_rewritten"
COMPACTION = "compaction"
MODEL_CHANGED = "model_changed"
EXPIRED = "expired"
UNKNOWN = "unknown"

TTL_5M = 300.0
TTL_1H = 3600.0


@dataclass(frozen=True)
class CacheBreak:
    """A request whose prompt cache broke: where the prefix changed, and the cost."""

    request: int  # index of the later request
    previous: int  # index of the earlier request of the same conversation
    conversation: str
    section: str  # "model" | "tools" | "system" | "messages" | "unknown"
    position: int | None  # index within the section (tool, system block, message)
    block: int | None  # block within that message (messages only)
    kind: str
    detail: str
    tokens: int | None  # tokens written to the cache again
    tokens_source: str  # "api" | "estimate" | "none"
    lost_cache_read: int | None = None  # previous prompt - this cache read, when known

    def to_json(self) -> dict[str, Any]:
        return {
            "request": self.request,
            "previous": self.previous,
            "conversation": self.conversation,
            "section": self.section,
            "position": self.position,
            "block": self.block,
            "kind": self.kind,
            "detail": self.detail,
            "tokens": self.tokens,
            "tokens_source": self.tokens_source,
            "lost_cache_read": self.lost_cache_read,
        }


def _is_reminder(b: Block) -> bool:
    return b.tag == SYSTEM_REMINDER or b.text.lstrip().startswith("<system-reminder>")


def _compacted(prev: Request, cur: Request) -> bool:
    return (
        any(e.kind in (COMPACT_BOUNDARY, COMPACT_SUMMARY) for e in cur.events)
        or any(b.tag == COMPACTION_SUMMARY for m in cur.messages[:2] for b in m.blocks)
        and not any(b.tag == COMPACTION_SUMMARY for m in prev.messages[:2] for b in m.blocks)
    )


def _first_diff(a: tuple[object, ...], b: tuple[object, ...]) -> int | None:
    """First index where ``a`` (the earlier prefix) is not continued by ``b``."""
    for i, x in enumerate(a):
        if i >= len(b) or b[i] != x:
            return i
    return None


def _tools_diff(prev: Request, cur: Request) -> tuple[int, str, str] | None:
    i = _first_diff(prev.tools, cur.tools)
    if i is None and len(prev.tools) == len(cur.tools):
        return None
    if i is None:  # tools appended: the prefix up to the system changes anyway
        i = len(prev.tools)
        return i, TOOLS_CHANGED, f"{len(cur.tools) - len(prev.tools)} tool(s) added at the end"
    names_a = [t.name for t in prev.tools]
    names_b = [t.name for t in cur.tools]
    if sorted(names_a) == sorted(names_b) and {t.text for t in prev.tools} == {
        t.text for t in cur.tools
    }:
        moved = f"{names_a[i]} -> {names_b[i]}"
        return i, TOOLS_REORDERED, f"tool order changed at position {i} ({moved})"
    if i >= len(cur.tools):
        return i, TOOLS_CHANGED, f"tools removed from position {i} ({names_a[i]})"
    if names_a[i] == names_b[i]:
        return i, TOOLS_CHANGED, f"tool {names_a[i]} declaration changed"
    if names_a[i] not in names_b:
        return i, TOOLS_CHANGED, f"tool {names_a[i]} removed"
    return i, TOOLS_CHANGED, f"tool {names_b[i]} inserted/changed at position {i}"


def _system_diff(prev: Request, cur: Request) -> tuple[int, str, str] | None:
    i = _first_diff(prev.system, cur.system)
    if i is None:
        return None  # appended system blocks come after the old prefix: no break
    b = prev.system[i]
    kind = REMINDER_EDITED if _is_reminder(b) else SYSTEM_EDITED
    what = "removed" if i >= len(cur.system) else "edited"
    return i, kind, f"system block {i} {what}"


def _messages_diff(prev: Request, cur: Request) -> tuple[int, int, str, str] | None:
    n_prev = len(prev.messages)
    if len(cur.messages) >= n_prev and cur.messages[:n_prev] == prev.messages:
        return None  # the usual case, compared in C: the history grew
    for i, m in enumerate(prev.messages):
        if i >= len(cur.messages):
            kind = COMPACTION if _compacted(prev, cur) else MESSAGES_REWRITTEN
            n_old, n_new = len(prev.messages), len(cur.messages)
            return i, 0, kind, f"history shortened from {n_old} to {plural(n_new, 'message')}"
        n = cur.messages[i]
        if n is m or n == m:
            continue
        j = _first_diff(m.blocks, n.blocks)
        if j is None:
            if m.role == n.role:
                continue  # blocks appended to the last message: still a prefix
            j = 0
        old = m.blocks[j]
        if _compacted(prev, cur):
            kind = COMPACTION
        elif _is_reminder(old) or (j < len(n.blocks) and _is_reminder(n.blocks[j])):
            kind = REMINDER_EDITED
        else:
            kind = MESSAGES_REWRITTEN
        return i, j, kind, f"message {i} ({m.role}) block {j} {old.kind} changed"
    return None


def _seconds(a: str | None, b: str | None) -> float | None:
    if not a or not b:
        return None
    try:
        start = datetime.fromisoformat(a)
        end = datetime.fromisoformat(b)
        return (end - start).total_seconds()
    except (ValueError, TypeError):
        return None


def _tail_tokens(cur: Request, section: str, pos: int, block: int | None, est: Estimator) -> int:
    total = 0
    if section == "tools":
        total += sum(est.tool(t) for t in cur.tools[pos:])
    if section in ("tools", "system"):
        total += sum(est.block(b) for b in cur.system[pos if section == "system" else 0 :])
        pos, block = 0, None
    for i, m in enumerate(cur.messages[pos:]):
        blocks = m.blocks[block or 0 :] if i == 0 else m.blocks
        total += sum(est.block(b) for b in blocks)
    return total


def _structural(prev: Request, cur: Request, label: str, est: Estimator) -> CacheBreak | None:
    found: tuple[str, int | None, int | None, str, str] | None = None
    if prev.model and cur.model and prev.model != cur.model:
        found = ("model", None, None, MODEL_CHANGED, f"model {prev.model} -> {cur.model}")
    elif (t := _tools_diff(prev, cur)) is not None:
        found = ("tools", t[0], None, t[1], t[2])
    elif (s := _system_diff(prev, cur)) is not None:
        found = ("system", s[0], None, s[1], s[2])
    elif (m := _messages_diff(prev, cur)) is not None:
        found = ("messages", m[0], m[1], m[2], m[3])
    if found is None:
        return None
    section, pos, blk, kind, detail = found
    if cur.usage is not None:
        tokens, src = cur.usage.cache_creation_input_tokens, "api"
    else:
        tokens = _tail_tokens(cur, "tools" if section == "model" else section, pos or 0, blk, est)
        src = "estimate"
    lost = _lost(prev, cur)
    return CacheBreak(
        cur.index, prev.index, label, section, pos, blk, kind, detail, tokens, src, lost
    )


def _lost(prev: Request, cur: Request) -> int | None:
    if prev.usage is None or cur.usage is None:
        return None
    return max(0, prev.usage.prompt_tokens - cur.usage.cache_read_input_tokens)


def _usage_break(
    prev: Request, cur: Request, label: str, min_drop: float, min_tokens: int
) -> CacheBreak | None:
    lost = _lost(prev, cur)
    if lost is None or prev.usage is None or cur.usage is None:
        return None
    if lost < min_tokens or lost < min_drop * prev.usage.prompt_tokens:
        return None
    gap = _seconds(prev.timestamp, cur.timestamp)
    ttl = TTL_1H if prev.usage.cache_creation_1h_tokens else TTL_5M
    if _compacted(prev, cur) or len(cur.messages) < len(prev.messages):
        kind, detail = COMPACTION, "history compacted: the prefix was rewritten"
    elif gap is not None and gap > ttl:
        kind = EXPIRED
        detail = f"{gap / 60:.0f} min since the previous request (cache TTL {ttl / 60:.0f} min)"
    else:
        kind, detail = UNKNOWN, "cache read dropped; the source has no request body to locate it"
    detail += (
        f"; cache read {cur.usage.cache_read_input_tokens:,} vs previous prompt "
        f"{prev.usage.prompt_tokens:,}"
    )
    return CacheBreak(
        cur.index,
        prev.index,
        label,
        "unknown",
        None,
        None,
        kind,
        detail,
        cur.usage.cache_creation_input_tokens,
        "api",
        lost,
    )


def cache_breaks(
    session: Session, est: Estimator, *, min_drop: float = 0.2, min_tokens: int = 1024
) -> tuple[CacheBreak, ...]:
    """Every cache break, in request order.

    Usage-only detection needs the lost cache read to exceed both
    ``min_drop`` of the previous prompt and ``min_tokens`` (Anthropic's
    smallest cacheable prefix), so the usual jitter of a few tokens is ignored.
    """
    out: list[CacheBreak] = []
    for conv in conversations(session):
        reqs = conv.requests
        for prev, cur in pairwise(reqs):
            if prev.complete and cur.complete:
                b = _structural(prev, cur, conv.label, est)
                if b is None:
                    b = _usage_break(prev, cur, conv.label, min_drop, min_tokens)
                    if b is not None and b.kind == UNKNOWN:  # same prefix, cache missed
                        b = replace(
                            b,
                            detail="prefix unchanged but the cache was not read "
                            "(eviction, or cache_control moved); " + b.detail.split("; ", 1)[-1],
                        )
            else:
                b = _usage_break(prev, cur, conv.label, min_drop, min_tokens)
            if b is not None:
                out.append(b)
    return tuple(sorted(out, key=lambda b: b.request))


@dataclass(frozen=True)
class CacheSummary:
    """The session's cache hit rate, what caching saved, and every break."""

    hit_rate: float | None
    saved_usd: float | None  # None when no request has a price
    breaks: tuple[CacheBreak, ...]

    @property
    def rewritten_tokens(self) -> int:
        return sum(b.tokens or 0 for b in self.breaks)

    def to_json(self) -> dict[str, Any]:
        kinds: dict[str, int] = {}
        for b in self.breaks:
            kinds[b.kind] = kinds.get(b.kind, 0) + 1
        return {
            "hit_rate": self.hit_rate,
            "saved_usd": self.saved_usd,
            "breaks": [b.to_json() for b in self.breaks],
            "break_kinds": kinds,
            "rewritten_tokens": self.rewritten_tokens,
        }
