"""Sub-agent runs: what each sidechain cost and which request spawned it.

Runs come from ``conversations`` (grouped by agent id, else by the task
prompt). The parent is the main-chain request whose response issued the
Task/Agent tool call: matched exactly when the run's first message is that
call's ``prompt``, otherwise inferred by time (the latest unmatched spawn call
before the run started), and said so.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

import orjson

from ctxviewer.analysis.insights.conversations import Conversation, conversations
from ctxviewer.analysis.insights.cost import SessionCost
from ctxviewer.ingest.claude.subagents import is_compaction
from ctxviewer.model import AUXILIARY, MAIN, TOOL_USE, Block, Message, Request, Session

SPAWN_TOOLS = frozenset({"Task", "Agent", "task", "dispatch_agent", "spawn_agent"})


@dataclass(frozen=True)
class SubagentRun:
    """One sub-agent run: its requests, model, peak context and tokens."""

    label: str
    agent: str | None
    requests: tuple[int, ...]
    model: str | None
    peak_context: int | None  # largest API prompt size
    total_tokens: int  # prompt + output over all requests (API usage)
    output_tokens: int
    cost_usd: float | None
    tool_calls: int
    tools: tuple[tuple[str, int], ...]  # (tool name, calls), most used first
    first_timestamp: str | None
    last_timestamp: str | None
    parent: int | None  # index of the spawning main request
    parent_tool_use: str | None  # the Task/Agent tool_use id
    link: str  # "exact" | "inferred" | "none"
    description: str = ""
    agent_type: str = ""  # the spawn call's subagent_type ("Explore", …); "compaction"

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "agent": self.agent,
            "requests": list(self.requests),
            "n_requests": len(self.requests),
            "model": self.model,
            "peak_context": self.peak_context,
            "total_tokens": self.total_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
            "tool_calls": self.tool_calls,
            "tools": dict(self.tools),
            "first_timestamp": self.first_timestamp,
            "last_timestamp": self.last_timestamp,
            "parent": self.parent,
            "parent_tool_use": self.parent_tool_use,
            "link": self.link,
            "description": self.description,
            "agent_type": self.agent_type,
        }


@dataclass
class _Spawn:
    """A sub-agent launch seen in the main conversation."""

    ref: str
    request: int | None  # index of the main request whose response issued it
    position: int  # order of the main request (issuing, or first carrying it)
    timestamp: str | None
    prompt: str
    description: str
    exact_request: bool
    agent_type: str = ""


def _spawn(b: Block, issuer: Request, pos: int, exact: bool) -> _Spawn:
    try:
        args = orjson.loads(b.text) if b.text else {}
    except orjson.JSONDecodeError:
        args = {}
    args = args if isinstance(args, dict) else {}
    return _Spawn(
        b.ref or "",
        issuer.index,
        pos,
        issuer.timestamp,
        str(args.get("prompt") or ""),
        str(args.get("description") or ""),
        exact,
        str(args.get("subagent_type") or args.get("agent_type") or ""),
    )


def _spawns(main: list[Request]) -> list[_Spawn]:
    """Spawn calls of the main chain with the request that issued them.

    Exact when the call is in a request's response, or in an assistant
    message whose id is a request's message id; otherwise the request just
    before the first one that carries the call (inferred).
    """
    by_msg_id = {r.message_id: (p, r) for p, r in enumerate(main) if r.message_id}
    found: dict[str, _Spawn] = {}
    for pos, r in enumerate(main):
        for b in r.response.blocks if r.response else ():
            if b.kind == TOOL_USE and b.name in SPAWN_TOOLS and b.ref:
                found[b.ref] = _spawn(b, r, pos, True)
    seen: set[int] = set()  # requests repeat their history's Message objects: each once
    before: tuple[Message, ...] = ()
    for pos, r in enumerate(main):
        n = len(before)
        grown = n and r.messages[:n] == before  # the same objects: compared by identity
        before = r.messages
        for m in r.messages[n:] if grown else r.messages:  # the history seen: skipped whole
            if m.role != "assistant" or id(m) in seen:
                continue
            seen.add(id(m))
            for b in m.blocks:
                if b.kind != TOOL_USE or b.name not in SPAWN_TOOLS or not b.ref or b.ref in found:
                    continue
                if m.id in by_msg_id:
                    p, owner = by_msg_id[m.id]
                    found[b.ref] = _spawn(b, owner, p, True)
                else:
                    p = max(pos - 1, 0)
                    found[b.ref] = _spawn(b, main[p], p, False)
    return sorted(found.values(), key=lambda s: (s.position, s.ref))


def _tool_counts(reqs: tuple[Request, ...]) -> Counter[str]:
    seen: dict[str, str] = {}
    for r in reqs:
        blocks = list(r.response.blocks) if r.response else []
        blocks += [b for m in r.messages if m.role == "assistant" for b in m.blocks]
        for b in blocks:
            if b.kind == TOOL_USE:
                seen.setdefault(b.ref or f"{r.index}:{len(seen)}", b.name or "?")
    return Counter(seen.values())


def _run(conv: Conversation, cost: SessionCost | None) -> SubagentRun:
    reqs = conv.requests
    prompts = [r.usage.prompt_tokens for r in reqs if r.usage]
    models = Counter(r.model for r in reqs if r.model)
    usd: float | None = None
    if cost is not None:
        by_index = {c.index: c for c in cost.requests}
        parts = [by_index[r.index].total_usd for r in reqs if r.index in by_index]
        usd = None if any(p is None for p in parts) else sum(p or 0.0 for p in parts)
    tools = _tool_counts(reqs)
    return SubagentRun(
        conv.label,
        conv.agent,
        conv.indices,
        models.most_common(1)[0][0] if models else None,
        max(prompts) if prompts else None,
        sum(r.usage.total_tokens for r in reqs if r.usage),
        sum(r.usage.output_tokens for r in reqs if r.usage),
        usd,
        sum(tools.values()),
        tuple(tools.most_common()),
        reqs[0].timestamp,
        reqs[-1].timestamp,
        None,
        None,
        "none",
    )


def _first_text(r: Request) -> str:
    return r.messages[0].text.strip() if r.messages else ""


def subagent_runs(session: Session, cost: SessionCost | None = None) -> tuple[SubagentRun, ...]:
    """Every sub-agent run with its totals and its parent request, in order of start."""
    convs = [c for c in conversations(session) if c.role not in (MAIN, AUXILIARY)]
    main = [r for r in session.requests if r.role == MAIN and not r.sidechain]
    spawns = _spawns(main)
    used: set[str] = set()
    runs = []
    for conv in convs:
        run = _run(conv, cost)
        if is_compaction(conv.agent):  # Claude Code's compaction call, not a Task run
            start = conv.requests[0].index
            before = [r.index for r in main if r.index < start]
            runs.append(
                replace(
                    run,
                    parent=before[-1] if before else None,
                    link="compaction",
                    description="compaction: summarized the main conversation",
                    agent_type="compaction",
                )
            )
            continue
        first = _first_text(conv.requests[0])
        match = next(
            (s for s in spawns if s.ref not in used and s.prompt and s.prompt.strip() == first),
            None,
        )
        link = "exact"
        if match is None:
            start = conv.requests[0].index
            earlier = [
                s
                for s in spawns
                if s.ref not in used and s.request is not None and s.request < start
            ]
            match = earlier[-1] if earlier else None
            link = "inferred"
        if match is not None:
            used.add(match.ref)
            if not match.exact_request:
                link = "inferred"
            run = replace(
                run,
                parent=match.request,
                parent_tool_use=match.ref,
                link=link,
                description=match.description,
                agent_type=match.agent_type,
            )
        runs.append(run)
    return tuple(runs)
