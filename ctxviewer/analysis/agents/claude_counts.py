"""Claude Code's own ``/context`` numbers, replayed from a recording.

To draw ``/context``, Claude Code counts each part of its context with one
``count_tokens`` call: each section of its system prompt, each memory file,
then its tools in groups (MCP tools, the Skill tool, the built-in tools in
batches). When count_tokens is unavailable, up to 2.1.197 it sends the same content
as ``max_tokens: 1`` probes and reads their usage; 2.1.332 estimates the same content
itself (``local_estimate``). A recording that holds these
calls holds the agent's exact numbers: this module matches each call to the
part of the request it counted. A tool group's answer includes the fixed
tool-use overhead the API adds whenever tools are present, which Claude Code
subtracts (``tool_overhead`` in the profile table).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ctxviewer.model import AUXILIARY, MEMORY, Request, Session, TokenCount

if TYPE_CHECKING:  # breakdown imports this module
    from ctxviewer.analysis.breakdown import Item

SKILL_TOOL = "Skill"


@dataclass
class AgentCounts:
    """What the agent's count calls said about one request's overhead."""

    system: list[tuple[str, int]] = field(default_factory=list)  # (section text, tokens)
    memory: dict[str, int] = field(default_factory=dict)  # file path -> tokens
    builtin: int = 0  # built-in tool groups, overhead removed (the Skill tool included)
    mcp: int | None = None
    skill_tool: int | None = None
    calls: int = 0
    via: str = "count_tokens"  # or "max_tokens: 1 probes"
    unmatched: int = 0  # calls whose content is not in the request
    # What 2.1.332's /context needs of the tool calls (``tool_groups = "listed-raw"``):
    listed: int | None = None  # the one call of several built-in tools at once, as answered
    single: dict[str, int] = field(default_factory=dict)  # one built-in tool a call, net
    mcp_sizes: dict[str, int] = field(default_factory=dict)  # each MCP tool's JSON length

    @property
    def builtin_without_skill(self) -> int:
        return max(0, self.builtin - (self.skill_tool or 0))


def _probe_count(r: Request) -> TokenCount | None:
    if r.usage is None:
        return None
    texts = tuple(b.text for b in r.system) + tuple(m.text for m in r.messages)
    return TokenCount(r.line or 0, r.timestamp, r.model, texts, r.tools, r.usage.input_tokens)


LocalEstimate = Callable[[TokenCount], int]


def local_estimate(chars_per_token: float, tool_overhead: int) -> LocalEstimate:
    """What Claude Code 2.1.332 counts when count_tokens fails ("count unavailable,
    estimating locally"): each text's length over ``chars_per_token``, rounded; a call's
    tools as their JSON array the same way, plus the tool-use overhead."""

    def estimate(call: TokenCount) -> int:
        if call.tools:
            array = "[" + ",".join(t.text for t in call.tools) + "]"
            return math.floor(len(array) / chars_per_token + 0.5) + tool_overhead
        return sum(math.floor(len(t) / chars_per_token + 0.5) for t in call.texts)

    return estimate


def _calls_after(
    session: Session, req: Request, local: LocalEstimate | None = None
) -> tuple[list[TokenCount], str]:
    """The count calls made between ``req`` and the next main request after it (with
    ``local``, failed ones answered by the agent's own estimate)."""
    reqs = session.requests
    start = req.line or 0
    later = [r.line for r in reqs if r.role != AUXILIARY and (r.line or 0) > start]
    stop = min((x for x in later if x is not None), default=None)

    def inside(line: int) -> bool:
        return line > start and (stop is None or line < stop)

    counted = [c for c in session.token_counts if inside(c.line) and c.tokens is not None]
    if counted:
        return _last_round(counted), "count_tokens"
    if local is not None:
        failed = [replace(c, tokens=local(c)) for c in session.token_counts if inside(c.line)]
        if failed:
            return _last_round(failed), "local estimate (count_tokens failed)"
    probes = [
        c
        for r in reqs
        if r.role == AUXILIARY
        and r.max_tokens is not None
        and r.max_tokens <= 1
        and inside(r.line or 0)
        and (c := _probe_count(r))
    ]
    return _last_round(probes), "max_tokens: 1 probes"


def _last_round(calls: list[TokenCount]) -> list[TokenCount]:
    """The calls of the last ``/context`` among ``calls``: each ``/context`` counts its
    parts again, starting with the same first section (Claude Code 2.1.197's TUI counts
    anew for a second ``/context`` and ``/context all``; 2.1.332 reuses its counts)."""
    if not calls:
        return calls
    first = _what(calls[0])
    starts = [i for i, c in enumerate(calls) if _what(c) == first]
    return calls[starts[-1] :]


def _what(call: TokenCount) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return call.texts, tuple(t.text for t in call.tools)


def _memory_of(req: Request) -> dict[str, str]:
    return {
        b.name or "memory": b.text.strip()
        for m in req.messages
        for b in m.blocks
        if b.tag == MEMORY
    }


def agent_counts(
    session: Session, index: int, tool_overhead: int, local: LocalEstimate | None = None
) -> AgentCounts | None:
    """The agent's own counts of request ``index``'s overhead, or None when the
    recording holds no count calls for it. ``local``: what the agent counts when its
    calls fail (Claude Code 2.1.332 estimates locally; older versions send probes)."""
    req = session.requests[index]
    if req.line is None or not req.complete:
        return None
    calls, via = _calls_after(session, req, local)
    if not calls:
        return None
    out = AgentCounts(via=via)
    system_text = "\n".join(b.text for b in req.system)
    memory = _memory_of(req)
    for call in calls:
        tokens = call.tokens or 0
        if call.tools:
            names = {t.name for t in call.tools}
            net = max(0, tokens - tool_overhead)
            if all(n.startswith("mcp__") for n in names):
                out.mcp = (out.mcp or 0) + net
                out.mcp_sizes.update((t.name, len(t.text)) for t in call.tools)
            elif names == {SKILL_TOOL}:
                if out.skill_tool is None:
                    out.skill_tool = net
                else:
                    continue  # counted twice (once for Skills): not another group
            else:
                out.builtin += net
                if len(call.tools) == 1:
                    name = call.tools[0].name
                    out.single[name] = out.single.get(name, 0) + net
                else:
                    out.listed = (out.listed or 0) + tokens
            out.calls += 1
            continue
        text = "\n".join(call.texts).strip()
        path = next(
            (p for p, body in memory.items() if text and (text == body or text in body)), None
        )
        if path is not None:
            out.memory[path] = out.memory.get(path, 0) + tokens
        elif text and text in system_text:
            out.system.append((text, tokens))
        else:
            out.unmatched += 1
            continue
        out.calls += 1
    return out if out.calls else None


def scaled_items(items: Sequence[Item], total: int, item: Callable[..., Item]) -> list[Item]:
    """Items whose tokens are shared out to sum to ``total``, in proportion to their estimates."""
    est = sum(x.tokens for x in items)
    if not items or est <= 0:
        return list(items)
    out: list[Item] = []
    left = total
    for i, x in enumerate(items):
        share = left if i == len(items) - 1 else round(total * x.tokens / est)
        left -= share
        out.append(item(x.name, share, x.kind, x.items, x.ref, x.index))
    return out
