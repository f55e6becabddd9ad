"""Content: oversized tool results, items over a quarter of the window, large memory
files and skill listings.

Every distinct message is looked at once (readers intern a message that
requests repeat, so a message is one object however many requests carry it).
A tool result is oversized when it reaches ``OVERSIZED_SHARE`` of the cap the
agent itself puts on that tool's output (``controls.toml``): the agent cut
it there, or the cap was raised. Sizes in characters are measured on the
text; sizes in tokens with the estimator, after a cheap length test (the
estimators never give more than ``MAX_TOKENS_PER_CHAR`` tokens a character).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ctxviewer.analysis.agents.controls import Controls, OutputLimit
from ctxviewer.analysis.findings.carry import Carrier
from ctxviewer.analysis.findings.model import ERROR, INFO, WARN, Cost, Finding
from ctxviewer.analysis.tokens.estimators import Estimator
from ctxviewer.fmt import fmt_tokens, plural, short_text
from ctxviewer.model import (
    MCP,
    MEMORY,
    SKILL,
    SKILL_LISTING,
    TOOL_RESULT,
    TOOL_USE,
    Block,
    Message,
    Request,
)

OVERSIZED_SHARE = 0.9  # of the agent's cap
LARGE_ITEM_SHARE = 0.25  # of the window
MAX_TOKENS_PER_CHAR = 1.5  # the qwen rule's non-ASCII weight; the BPE ones give less
MEMORY_TOKENS_SHARE = 0.025  # a memory file over this share of the window is worth a look
SKILLS_WARN_SHARE = 0.05  # the skill listing's share of the window for a warning
SKILLS_INFO_SHARE = 0.01
DEFAULT_MEMORY_LIMIT_CHARS = 40_000


@dataclass
class Seen:
    """Where a message was first carried."""

    message: Message
    request: int  # the first request carrying it
    position: int  # its position in that request's messages


class Messages:
    """Every distinct message of the requests (by identity), where it first appears and
    the requests carrying it, from one pass over them."""

    def __init__(self, requests: Sequence[Request]) -> None:
        self.requests = requests
        self.seen: list[Seen] = []
        self._ids: list[set[int]] = []  # per request, the ids of its messages
        known: set[int] = set()
        for r in requests:  # set operations: each request repeats most of the one before
            ids = set(map(id, r.messages))
            self._ids.append(ids)
            new = ids - known
            if new:
                known |= new
                self.seen += [
                    Seen(m, r.index, pos) for pos, m in enumerate(r.messages) if id(m) in new
                ]

    def carriers(self, m: Message) -> list[Request]:
        """The requests carrying ``m``."""
        key = id(m)
        return [r for r, ids in zip(self.requests, self._ids, strict=True) if key in ids]


class _Sizer:
    def __init__(self, est: Estimator) -> None:
        self.est = est

    def at_least(self, b: Block, tokens: float) -> int | None:
        """The block's tokens when they reach ``tokens``, else None (cheaply)."""
        if b.fixed_tokens is None and len(b.text) * MAX_TOKENS_PER_CHAR < tokens:
            return None
        n = self.est.block(b)
        return n if n >= tokens else None

    def reaches(self, b: Block, limit: OutputLimit, share: float) -> bool:
        if limit.unit == "chars":
            return len(b.text) >= share * limit.limit
        return self.at_least(b, share * limit.limit) is not None


def _cost(reqs: list[Request], tokens: int, carrier: Carrier) -> Cost:
    cost = Cost()
    for r in reqs:
        carrier.share(r, tokens, cost)
    return cost


def _content(
    code: str,
    severity: str,
    title: str,
    item: str,
    reqs: list[Request],
    tokens: int,
    carrier: Carrier,
    action: str,
    detail: str,
    category: str,
    message: int | None,
) -> Finding:
    cost = _cost(reqs, tokens, carrier)
    return Finding(
        code,
        severity,
        title,
        (item,),
        tuple(r.index for r in reqs),
        tokens,
        tokens * len(reqs),
        cost.usd,
        action,
        detail,
        cost,
        cost.usd,
        category,
        (message,) if message is not None else (),
    )


def _tool_names(seen: list[Seen]) -> dict[str, tuple[str, bool]]:
    """tool_use id -> (tool name, whether it is an MCP tool)."""
    out = {}
    for s in seen:
        for b in s.message.blocks:
            if b.kind == TOOL_USE and b.ref:
                name = b.name or "?"
                out[b.ref] = (name, name.startswith("mcp__"))
    return out


def _blocks(seen: list[Seen]) -> Iterator[tuple[Seen, Block]]:
    for s in seen:
        for b in s.message.blocks:
            yield s, b


def content_findings(
    msgs: Messages, est: Estimator, carrier: Carrier, controls: Controls, window: int
) -> list[Finding]:
    requests, seen = msgs.requests, msgs.seen
    sizer = _Sizer(est)
    names = _tool_names(seen)
    mcp_tools = {t.name for r in requests[-1:] for t in r.tools if t.kind == MCP}
    large = LARGE_ITEM_SHARE * window
    hits: list[tuple[str, Seen, Block, OutputLimit | None]] = []
    for s, b in _blocks(seen):
        if b.tag == MEMORY or b.tag == SKILL_LISTING:
            continue  # looked at as memory files and skill listings
        if window and sizer.at_least(b, large) is not None:
            hits.append(("large-item", s, b, None))
        elif b.kind == TOOL_RESULT and b.ref in names:
            name, mcp = names[b.ref]
            limit = controls.output_limit(name, mcp or name in mcp_tools)
            if limit is not None and sizer.reaches(b, limit, OVERSIZED_SHARE):
                hits.append(("oversized-tool-result", s, b, limit))
    out: list[Finding] = []
    for code, s, b, limit in hits:
        reqs = msgs.carriers(s.message)
        tokens = est.block(b)
        what = (
            f"tool result of {names[b.ref][0]}"
            if b.kind == TOOL_RESULT and b.ref in names
            else f"{b.kind} block"
        )
        item = f"#{s.position} {s.message.role}: {what}"
        if code == "large-item":
            out.append(
                _content(
                    code,
                    ERROR,
                    f"One item is {100 * tokens / window:.0f}% of the window: {what} "
                    f"({fmt_tokens(tokens)} tokens)",
                    item,
                    reqs,
                    tokens,
                    carrier,
                    controls.action("tool_output" if b.kind == TOOL_RESULT else "content"),
                    f"{short_text(b.text, 80)!r}, first in request {s.request}, carried by "
                    f"{plural(len(reqs), 'request')}",
                    "messages",
                    s.position,
                )
            )
            continue
        assert limit is not None and b.ref is not None  # an oversized result is a known call's
        size = f"{len(b.text):,} characters" if limit.unit == "chars" else f"{tokens:,} tokens"
        out.append(
            _content(
                code,
                WARN,
                f"Oversized result of {names[b.ref][0]}: {size}, the agent's cap "
                f"{limit.limit:,} {limit.unit}",
                item,
                reqs,
                tokens,
                carrier,
                controls.action("tool_output"),
                f"{controls.label}'s cap on it: {limit.source}; first in request {s.request}, "
                f"carried by {plural(len(reqs), 'request')}",
                "messages",
                s.position,
            )
        )
    out += _memory_findings(msgs, est, carrier, controls, window)
    out += _skill_findings(msgs, est, carrier, controls, window)
    return out


def _memory_findings(
    msgs: Messages, est: Estimator, carrier: Carrier, controls: Controls, window: int
) -> list[Finding]:
    requests, seen = msgs.requests, msgs.seen
    files: dict[str, tuple[Block, set[int]]] = {}
    for r in requests:  # memory in the system prompt
        for b in r.system:
            if b.tag == MEMORY:
                files.setdefault(b.name or "memory", (b, set()))[1].add(r.index)
    for s, b in _blocks(seen):
        if b.tag == MEMORY:
            files.setdefault(b.name or "memory", (b, set()))[1].update(
                r.index for r in msgs.carriers(s.message)
            )
    limit = controls.memory_limit_chars or DEFAULT_MEMORY_LIMIT_CHARS
    index = {r.index: r for r in requests}
    out = []
    for path, (b, carried) in files.items():
        tokens = est.block(b)
        over = len(b.text) >= limit
        if not over and tokens < MEMORY_TOKENS_SHARE * window:
            continue
        why = (
            (controls.memory_limit_source or f"over {limit:,} characters")
            if over
            else f"over {100 * MEMORY_TOKENS_SHARE:.1f}% of the window in every request"
        )
        out.append(
            _content(
                "large-memory-file",
                WARN if over else INFO,
                f"Memory file {path}: {len(b.text):,} characters, {fmt_tokens(tokens)} tokens",
                path,
                [index[i] for i in sorted(carried)],
                tokens,
                carrier,
                controls.action("memory", path),
                why,
                "memory_files",
                None,
            )
        )
    return out


def _skill_findings(
    msgs: Messages, est: Estimator, carrier: Carrier, controls: Controls, window: int
) -> list[Finding]:
    """The skills listed to the model: in the Skill tool's description, or in a
    listing message; the largest listing one request carried."""
    requests, seen = msgs.requests, msgs.seen
    per_request: dict[int, int] = {}
    tool_sets: dict[int, int] = {}
    for r in requests:
        n = tool_sets.get(id(r.tools))
        if n is None:
            n = tool_sets[id(r.tools)] = sum(est.tool(t) for t in r.tools if t.kind == SKILL)
        if n:
            per_request[r.index] = n
    for s, b in _blocks(seen):
        if b.tag != SKILL_LISTING:
            continue
        n = est.block(b)
        for r in msgs.carriers(s.message):
            per_request[r.index] = per_request.get(r.index, 0) + n
    peak = max(per_request.values(), default=0)
    if not window or peak < SKILLS_INFO_SHARE * window:
        return []
    cost = Cost()
    for r in requests:
        if r.index in per_request:
            carrier.share(r, per_request[r.index], cost)
    severity = WARN if peak >= SKILLS_WARN_SHARE * window else INFO
    return [
        Finding(
            "large-skill-listing",
            severity,
            f"Skill listing: {fmt_tokens(peak)} tokens per request "
            f"({100 * peak / window:.1f}% of the window)",
            ("Skills",),
            tuple(sorted(per_request)),
            peak,
            sum(per_request.values()),
            cost.usd,
            controls.action("skills"),
            "the skills the agent lists to the model in every request",
            cost,
            cost.usd,
            "skills",
        )
    ]
