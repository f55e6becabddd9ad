"""Every source of the context, over the whole session: what entered the prompts, how
many requests carried it, and what carrying it cost.

A source is the system prompt, a built-in tool's schema, an MCP server's tools, the
skill listing, a loaded skill, a memory file, one tool's results (and its largest
single results apart), one tool's calls, the user's prompts, the assistant's text and
thinking, the compaction summaries, the system reminders, images, and what the log
does not record (a transcript holds neither the system prompt nor the tool schemas).

Each request's prompt is split into its sources by the estimator, then scaled to the
API's count of that prompt, so a session's sources add up to the prompts it sent:
with the whole request body (a trace) every source takes its share of the estimator's
error; with a transcript the recorded sources keep their estimates and the rest of the
API's count is "not in the log" (scaled down only when they exceed it).
``token_requests`` is a source's tokens summed over the requests it stayed in;
``cost_usd`` what that cost at each request's own prices, split as the API billed the
prompt (a prefix read from the cache, then the part written, then uncached input):
what an earlier request already sent is normally a cache read, what is new a write.
What the log does not record has no place in that order: it is billed at the
request's own mix of tiers, and the recorded sources are placed in the rest.

Requests repeat their history: a request whose messages extend a recent one's is
worked out from that one, so the cost grows with the new messages, not the history.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ctxviewer.analysis.breakdown import mcp_server
from ctxviewer.analysis.insights.cost import billed_rates, split_billed
from ctxviewer.analysis.pricing import PriceTable
from ctxviewer.analysis.tokens.estimators import Estimator
from ctxviewer.model import (
    COMPACTION_SUMMARY,
    DOCUMENT,
    IMAGE,
    MCP,
    MEMORY,
    SKILL,
    SKILL_BODY,
    SKILL_LISTING,
    SYSTEM_REMINDER,
    TEXT,
    THINKING,
    TOOL_RESULT,
    TOOL_USE,
    Block,
    Message,
    Request,
    Session,
)

Key = tuple[str, str]  # (kind, name)
UNRECORDED: Key = (
    "unrecorded",
    "not in the log: system prompt, tool schemas, what else the agent sent",
)
RECENT = 16  # earlier requests a new one may extend (traces interleave side calls)
LARGEST = 5  # single tool results kept per tool
KINDS = (
    "system",
    "tool",
    "mcp",
    "skills",
    "skill",
    "memory",
    "tool_results",
    "tool_calls",
    "user",
    "assistant",
    "thinking",
    "summary",
    "reminder",
    "image",
    "other",
    "unrecorded",
)


@dataclass(frozen=True)
class Source:
    """One source over the session."""

    kind: str
    name: str
    tokens: int  # its largest size in one request (tokens, scaled to the API's count)
    requests: tuple[int, ...]  # the requests that carried it
    token_requests: int  # its tokens summed over those requests
    cost_usd: float | None  # what carrying it cost; None when a request has no price
    largest: tuple[Source, ...] = ()  # tool results: the largest single results

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "name": self.name,
            "tokens": self.tokens,
            "requests": len(self.requests),
            "token_requests": self.token_requests,
            "cost_usd": self.cost_usd,
            "first_request": self.requests[0] if self.requests else None,
        }
        if self.largest:
            out["largest"] = [s.to_json() for s in self.largest]
        return out


@dataclass(frozen=True)
class Sources:
    """Every source of a session, ranked by cost (then by tokens x requests)."""

    sources: tuple[Source, ...]
    prompt_tokens: int  # the prompts the session sent (the API's counts)
    requests: int  # requests with a prompt count

    @property
    def token_requests(self) -> int:
        return sum(s.token_requests for s in self.sources)

    def top(self, n: int) -> tuple[Source, ...]:
        return self.sources[:n]

    def to_json(self) -> list[dict[str, Any]]:
        return [s.to_json() for s in self.sources]


def _block_key(b: Block, role: str, names: dict[str, str]) -> Key:
    tag = b.tag
    if tag == MEMORY:
        return "memory", b.name or "memory"
    if tag == SKILL_LISTING:
        return "skills", "skill listing"
    if tag == SKILL_BODY:
        return "skill", b.name or "skill"
    if tag == COMPACTION_SUMMARY:
        return "summary", "compaction summaries"
    if tag == SYSTEM_REMINDER:
        return "reminder", "system reminders"
    kind = b.kind
    if kind == TOOL_RESULT:
        return "tool_results", b.name or names.get(b.ref or "", "") or "unknown tool"
    if kind == TOOL_USE:
        if b.ref and b.name:
            names[b.ref] = b.name
        return "tool_calls", b.name or "unknown tool"
    if kind == THINKING:
        return "thinking", "thinking"
    if kind in (IMAGE, DOCUMENT):
        return "image", "images and documents"
    if kind == TEXT:
        if role == "assistant":
            return "assistant", "assistant text"
        if role in ("user", "human"):
            return "user", "user prompts"
        return "system", "system prompt"  # a system / developer message
    return "other", "other content"


@dataclass
class _Parts:
    """One message's (or the overhead's) estimated tokens by source, in prompt order."""

    chunks: list[tuple[Key, int, Block | None]]
    total: int

    @cached_property
    def by_key(self) -> dict[Key, int]:
        out: dict[Key, int] = {}
        for k, n, _ in self.chunks:
            out[k] = out.get(k, 0) + n
        return out


@dataclass
class _State:
    """A request as worked out: its messages and its tokens by source (estimated)."""

    messages: tuple[Message, ...]
    by_key: dict[Key, int]
    size: int  # estimated tokens of the messages
    node: int  # its position in the tree of requests (-1: no usage)


@dataclass
class _Acc:
    """One source as it is being added up."""

    tokens: float = 0.0  # largest in one request
    requests: list[int] = field(default_factory=list)
    token_requests: float = 0.0
    usd: float = 0.0
    unpriced: bool = False


class _Walker:
    """Works out every request's sources, each from the recent request it extends."""

    def __init__(self, est: Estimator, prices: PriceTable) -> None:
        self.est, self.prices = est, prices
        self.names: dict[str, str] = {}  # tool_use id -> tool name
        self.msg_parts: dict[int, tuple[Message, _Parts]] = {}
        self.head_parts: dict[tuple[int, int], tuple[object, object, _Parts]] = {}
        self.acc: dict[Key, _Acc] = {}
        self.recent: list[_State] = []
        # the tree of requests with usage: a request's parent is the one it extends
        self.parent: list[int] = []
        self.scale: list[float] = []
        self.read_usd: list[float | None] = []  # USD of one estimated token read from cache
        self.blocks: list[tuple[Block, Key, int, int, float | None]] = []  # results by node
        self.prompt_tokens = 0

    # -- estimates, once per distinct message and overhead ------------------------------
    def message(self, m: Message) -> _Parts:
        known = self.msg_parts.get(id(m))
        if known is not None and known[0] is m:
            return known[1]
        chunks: list[tuple[Key, int, Block | None]] = []
        for b in m.blocks:
            chunks.append((_block_key(b, m.role, self.names), self.est.block(b), b))
        extra = self.est.message_overhead
        if extra and chunks:
            k, n, first = chunks[0]
            chunks[0] = (k, n + extra, first)
        parts = _Parts(chunks, sum(n for _, n, _ in chunks))
        self.msg_parts[id(m)] = (m, parts)
        return parts

    def head(self, req: Request) -> _Parts:
        """The tool schemas and the system prompt, which lead the prompt."""
        key = (id(req.tools), id(req.system))
        known = self.head_parts.get(key)
        if known is not None and known[0] is req.tools and known[1] is req.system:
            return known[2]
        chunks: list[tuple[Key, int, Block | None]] = []
        for t in req.tools:
            k: Key = (
                ("mcp", mcp_server(t))
                if t.kind == MCP
                else ("skills", "skill listing")
                if t.kind == SKILL
                else ("tool", t.name)
            )
            chunks.append((k, self.est.tool(t), None))
        for b in req.system:
            chunks.append((_block_key(b, "system", self.names), self.est.block(b), None))
        parts = _Parts(chunks, sum(n for _, n, _ in chunks))
        self.head_parts[key] = (req.tools, req.system, parts)
        return parts

    # -- one request ---------------------------------------------------------------------
    def extends(self, messages: tuple[Message, ...]) -> _State | None:
        """The latest recent request whose messages start ``messages`` (all of them)."""
        size = len(messages)
        for s in reversed(self.recent):
            n = len(s.messages)
            if n and n <= size and messages[n - 1] is s.messages[-1] and messages[:n] == s.messages:
                return s
        return None

    def add(self, req: Request) -> None:
        messages = tuple(req.messages)
        prev = self.extends(messages)
        start = len(prev.messages) if prev is not None else 0
        by_key = dict(prev.by_key) if prev is not None else {}
        size = prev.size if prev is not None else 0
        new: list[tuple[Key, int, Block | None]] = []
        for m in messages[start:]:
            parts = self.message(m)
            new += parts.chunks
            size += parts.total
            for k, n, _ in parts.chunks:
                by_key[k] = by_key.get(k, 0) + n
        api = req.api_prompt_tokens
        node = -1
        if api is not None:
            node = self.price(req, prev, new, messages, api)
        self.recent.append(_State(messages, by_key, size, node))
        if len(self.recent) > RECENT:
            self.recent.pop(0)

    def price(
        self,
        req: Request,
        prev: _State | None,
        new: list[tuple[Key, int, Block | None]],
        messages: tuple[Message, ...],
        api: int,
    ) -> int:
        """Scale ``req``'s sources to its API count, bill them, add them up; its node."""
        head = self.head(req)
        recorded = head.total + (prev.size if prev is not None else 0) + sum(n for _, n, _ in new)
        unrecorded = 0
        if req.complete:
            scale = api / recorded if recorded else 0.0
        else:
            scale = min(1.0, api / recorded) if recorded else 0.0
            unrecorded = max(0, api - round(recorded * scale))
        rates = billed_rates(req, self.prices)
        node = len(self.parent)
        self.parent.append(prev.node if prev is not None and prev.node >= 0 else -1)
        self.scale.append(scale)
        self.read_usd.append(rates[0] * scale if rates is not None else None)
        self.prompt_tokens += api
        # estimated tokens by source: ``cached`` all read from the cache (priced at once),
        # the rest walked in prompt order (``walked``'s dollars by position)
        cached: dict[Key, int] = {}
        walk: list[tuple[Key, int, Block | None]] = []
        # what the log does not record is billed at the request's own mix of tiers; the
        # recorded sources are placed in the rest, each tier in proportion
        share = (api - unrecorded) / api if api else 1.0
        at = 0.0
        if prev is not None:
            # what an earlier request sent, but for the tail of it the cache did not
            # cover (walked, as the new messages are)
            u = req.usage
            tail_at = len(prev.messages)
            short = (head.total + prev.size) * scale - (
                u.cache_read_input_tokens * share if u is not None else 0
            )
            tail: dict[Key, int] = {}
            while short > 0 and tail_at > 0:
                tail_at -= 1
                for k, n, _ in self.message(messages[tail_at]).chunks:
                    tail[k] = tail.get(k, 0) + n
                    short -= n * scale
            if short > 0:  # the cache broke before the messages: walk them all
                walk = list(head.chunks)
                tail_at = 0
            else:
                cached = dict(prev.by_key)
                for k, n in head.by_key.items():
                    cached[k] = cached.get(k, 0) + n
                for k, n in tail.items():
                    cached[k] -= n
                at += (head.total + prev.size - sum(tail.values())) * scale
            for m in messages[tail_at : len(prev.messages)]:
                walk += self.message(m).chunks
        else:
            walk = list(head.chunks)
        estimated = dict(cached)
        walked: dict[Key, float] = {}
        start = len(walk)
        walk += new
        # the prompt's tiers by position (``split_billed``): a span inside one of them is
        # priced at once; only a span across a boundary is split
        u = req.usage
        read_end = round(u.cache_read_input_tokens * share) if u is not None else 0
        write_end = read_end + (
            round(u.cache_creation_input_tokens * share) if u is not None else 0
        )
        for i, (k, n, b) in enumerate(walk):
            estimated[k] = estimated.get(k, 0) + n
            if rates is not None and n:
                first, span = round(at), round(n * scale)
                if u is None or first >= write_end:
                    spent = span * rates[2]
                elif first + span <= read_end:
                    spent = span * rates[0]
                else:
                    spent = _span_usd(req, rates, at, n * scale, share)
                walked[k] = walked.get(k, 0.0) + spent
                if i >= start and b is not None and b.kind == TOOL_RESULT:
                    self.blocks.append((b, k, node, n, spent / n))
            elif i >= start and b is not None and b.kind == TOOL_RESULT and n:
                self.blocks.append((b, k, node, n, None))
            at += n * scale
        read = rates[0] * scale if rates is not None else 0.0
        if unrecorded:
            self._add(
                UNRECORDED,
                float(unrecorded),
                req.index,
                None if rates is None else _mix_usd(req, rates, unrecorded),
            )
        for k, n in estimated.items():
            if n > 0:
                self._add(
                    k,
                    n * scale,
                    req.index,
                    None if rates is None else cached.get(k, 0) * read + walked.get(k, 0.0),
                )
        return node

    def _add(self, key: Key, tokens: float, request: int, usd: float | None) -> None:
        a = self.acc.get(key)
        if a is None:
            a = self.acc[key] = _Acc()
        if tokens > a.tokens:
            a.tokens = tokens
        a.requests.append(request)
        a.token_requests += tokens
        if usd is None:
            a.unpriced = True
        else:
            a.usd += usd

    # -- the session ---------------------------------------------------------------------
    def largest(self, indices: Sequence[int]) -> dict[Key, tuple[Source, ...]]:
        """The largest single tool results of each tool (those of the most tokens x
        requests among the largest), with the requests that carried them: a result stays
        in every request that extends the one it came in (its subtree of requests)."""
        n = len(self.parent)
        children: list[list[int]] = [[] for _ in range(n)]
        for i, p in enumerate(self.parent):
            if p >= 0:
                children[p].append(i)
        # preorder: a subtree is the run order[first[i]:last[i]], its sums differences
        order: list[int] = []
        first, last = [0] * n, [0] * n
        for root in (i for i in range(n) if self.parent[i] < 0):
            stack = [(root, False)]
            while stack:
                i, done = stack.pop()
                if done:
                    last[i] = len(order)
                    continue
                first[i] = len(order)
                order.append(i)
                stack.append((i, True))
                stack += [(c, False) for c in reversed(children[i])]
        scales, reads, unpriced = [0.0], [0.0], [0]
        for i in order:
            scales.append(scales[-1] + self.scale[i])
            reads.append(reads[-1] + (self.read_usd[i] or 0.0))
            unpriced.append(unpriced[-1] + (self.read_usd[i] is None))
        seen: set[int] = set()
        picked: dict[Key, list[tuple[Block, int, int, float | None]]] = {}
        for b, key, node, est_tokens, per in sorted(self.blocks, key=lambda x: -x[3]):
            if id(b) not in seen and len(picked.get(key, ())) < 3 * LARGEST:
                seen.add(id(b))
                picked.setdefault(key, []).append((b, node, est_tokens, per))
        out: dict[Key, tuple[Source, ...]] = {}
        for key, blocks in picked.items():
            found = []
            for b, node, est_tokens, per in blocks:
                a, z = first[node], last[node]
                later = reads[z] - reads[a] - (self.read_usd[node] or 0.0)
                usd = (
                    None if per is None or unpriced[z] - unpriced[a] else est_tokens * (per + later)
                )
                text = " ".join(b.text[:200].split())[:60] or "(empty)"
                found.append(
                    Source(
                        "tool_result",
                        f"{key[1]} result at request {indices[node]}: {text}",
                        round(est_tokens * self.scale[node]),
                        tuple(indices[i] for i in sorted(order[a:z])),
                        round(est_tokens * (scales[z] - scales[a])),
                        usd,
                    )
                )
            found.sort(key=lambda x: -x.token_requests)
            out[key] = tuple(found[:LARGEST])
        return out


def _mix_usd(req: Request, rates: tuple[float, float, float], n: float) -> float:
    """``n`` tokens of ``req`` billed in proportion to its prompt's tiers."""
    u = req.usage
    total = u.prompt_tokens if u is not None else 0
    if not total or u is None:
        return n * rates[2]
    return (
        n
        * (
            u.cache_read_input_tokens * rates[0]
            + u.cache_creation_input_tokens * rates[1]
            + u.input_tokens * rates[2]
        )
        / total
    )


def _span_usd(
    req: Request, rates: tuple[float, float, float], at: float, n: float, share: float = 1.0
) -> float:
    r, w, u = split_billed(req, round(at), round(n), share)
    return r * rates[0] + w * rates[1] + u * rates[2]


def session_sources(
    session: Session | Sequence[Request], est: Estimator, prices: PriceTable
) -> Sources:
    """Every source of ``session`` over all its requests with a prompt count."""
    reqs = session.requests if isinstance(session, Session) else list(session)
    walker = _Walker(est, prices)
    for r in reqs:
        walker.add(r)
    indices = [r.index for r in reqs if r.api_prompt_tokens is not None]
    largest = walker.largest(indices)
    out = [
        Source(
            k[0],
            k[1],
            round(a.tokens),
            tuple(a.requests),
            round(a.token_requests),
            None if a.unpriced else a.usd,
            largest.get(k, ()),
        )
        for k, a in walker.acc.items()
        if a.requests
    ]
    out.sort(key=lambda s: (-(s.cost_usd or 0.0), -s.token_requests, s.kind, s.name))
    return Sources(tuple(out), walker.prompt_tokens, len(indices))
