"""Tool definitions: the unused ones, and MCP servers and built-in tools by carry cost.

A tool is used when any message of the session (a request's history or an
answer) calls it by name. Its tokens per request are the breakdown's
(``breakdown.tool_items``: the estimator over the declaration as sent); its
carry cost prices each request's copy where it sits in the prompt (tools lead
it, so they are mostly cache reads after the first request).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ctxviewer.analysis.agents.controls import Controls
from ctxviewer.analysis.breakdown import mcp_server
from ctxviewer.analysis.findings.carry import Carrier
from ctxviewer.analysis.findings.model import ERROR, INFO, WARN, Cost, Finding, rank
from ctxviewer.analysis.tokens.estimators import Estimator
from ctxviewer.fmt import fmt_tokens, plural
from ctxviewer.model import MCP, SKILL, TOOL_USE, Message, Request, ToolDef

UNUSED_TOOL_WARN = 1_000  # an unused tool this size per request is worth a warning
MCP_WARN, MCP_ERROR = 0.05, 0.20  # an MCP server's share of the window per request
BUILTIN_WARN = 0.10  # the built-in tools' share of the window per request


@dataclass
class Carried:
    """One tool (or server) over the session."""

    name: str
    kind: str
    server: str | None = None
    requests: list[int] = field(default_factory=list)
    tokens: int = 0  # carried over the session
    per_request: int = 0  # the largest copy
    cost: Cost = field(default_factory=Cost)
    tools: set[str] = field(default_factory=set)  # a server's tools

    def add(self, req: Request, start: int, tokens: int, carrier: Carrier) -> None:
        if not self.requests or self.requests[-1] != req.index:
            self.requests.append(req.index)
        self.tokens += tokens
        carrier.span(req, start, tokens, self.cost)


def called_tools(messages: Iterable[Message]) -> set[str]:
    """Names of the tools the messages call."""
    return {b.name for m in messages for b in m.blocks if b.kind == TOOL_USE and b.name}


def _layout(tools: tuple[ToolDef, ...], est: Estimator) -> list[tuple[ToolDef, int, int]]:
    """(tool, start, tokens) of each tool in prompt order."""
    out, pos = [], 0
    for t in tools:
        n = est.tool(t)
        out.append((t, pos, n))
        pos += n
    return out


def carried_tools(
    requests: Iterable[Request], est: Estimator, carrier: Carrier
) -> tuple[dict[str, Carried], dict[str, Carried], int]:
    """Every tool and every MCP server over the session, by name, and the most tokens
    of built-in tools one request carried."""
    builtin_peak = 0
    tools: dict[str, Carried] = {}
    servers: dict[str, Carried] = {}
    layouts: dict[int, list[tuple[ToolDef, int, int]]] = {}
    for req in requests:
        if not req.tools:
            continue
        layout = layouts.get(id(req.tools))
        if layout is None:
            layout = layouts[id(req.tools)] = _layout(req.tools, est)
        per_server: dict[str, int] = {}
        builtin_peak = max(
            builtin_peak, sum(n for t, _s, n in layout if t.kind not in (MCP, SKILL))
        )
        for t, start, n in layout:
            c = tools.get(t.name)
            if c is None:
                c = tools[t.name] = Carried(
                    t.name, t.kind, mcp_server(t) if t.kind == MCP else None
                )
            c.add(req, start, n, carrier)
            c.per_request = max(c.per_request, n)
            if t.kind == MCP:
                s = servers.get(mcp_server(t))
                if s is None:
                    s = servers[mcp_server(t)] = Carried(mcp_server(t), "server")
                s.add(req, start, n, carrier)
                s.tools.add(t.name)
                per_server[s.name] = per_server.get(s.name, 0) + n
        for name, n in per_server.items():
            servers[name].per_request = max(servers[name].per_request, n)
    return tools, servers, builtin_peak


def _finding(
    code: str,
    severity: str,
    title: str,
    c: Carried,
    items: tuple[str, ...],
    action: str,
    detail: str,
    category: str,
) -> Finding:
    return Finding(
        code,
        severity,
        title,
        items,
        tuple(c.requests),
        c.per_request,
        c.tokens,
        c.cost.usd,
        action,
        detail,
        c.cost,
        c.cost.usd,
        category,
    )


def tool_findings(
    requests: list[Request],
    used: set[str],
    est: Estimator,
    carrier: Carrier,
    controls: Controls,
    window: int,
) -> list[Finding]:
    tools, servers, builtin_peak = carried_tools(requests, est, carrier)
    out: list[Finding] = []
    agent = controls.label
    for c in tools.values():
        if c.name in used:
            continue
        mcp = c.kind == MCP
        what = "mcp_tool" if mcp else "builtin_tool"
        severity = WARN if c.per_request >= UNUSED_TOOL_WARN else INFO
        category = "mcp_tools" if mcp else "skills" if c.kind == SKILL else "builtin_tools"
        out.append(
            _finding(
                "unused-tool",
                severity,
                f"Unused tool {c.name}: {fmt_tokens(c.per_request)} tokens "
                f"in {plural(len(c.requests), 'request')}",
                c,
                (c.name,),
                controls.action(what, c.name),
                f"{c.name} was defined in {plural(len(c.requests), 'request')} and never called; "
                f"{agent} sent {c.tokens:,} tokens of it",
                category,
            )
        )
    for s in servers.values():
        share = s.per_request / window if window else 0.0
        severity = ERROR if share >= MCP_ERROR else WARN if share >= MCP_WARN else INFO
        names = tuple(sorted(s.tools))
        unused = [n for n in names if n not in used]
        if len(unused) == len(names):
            out.append(
                _finding(
                    "unused-mcp-server",
                    severity
                    if rank(severity) > rank(WARN)
                    else WARN
                    if s.per_request >= UNUSED_TOOL_WARN
                    else INFO,
                    f"Unused MCP server {s.name}: {plural(len(names), 'tool')}, none called, "
                    f"{fmt_tokens(s.per_request)} tokens per request",
                    s,
                    (s.name, *names),
                    controls.action("mcp_server", s.name),
                    f"none of the {plural(len(names), 'tool')} of {s.name} was called",
                    "mcp_tools",
                )
            )
        out.append(
            _finding(
                "mcp-server-cost",
                severity,
                f"MCP server {s.name}: {fmt_tokens(s.per_request)} tokens per request "
                f"({100 * share:.1f}% of the window)",
                s,
                (s.name, *names),
                controls.action("mcp_server", s.name),
                f"{len(names) - len(unused)} of {plural(len(names), 'tool')} called"
                + (f"; never called: {', '.join(unused)}" if unused else ""),
                "mcp_tools",
            )
        )
    builtin = sorted(
        (c for c in tools.values() if c.kind not in (MCP, SKILL)), key=lambda c: (-c.tokens, c.name)
    )
    if builtin:
        total = Carried("built-in tools", "tools")
        per: dict[int, int] = {}
        for c in builtin:
            total.tokens += c.tokens
            total.cost.merge(c.cost)
            for r in c.requests:
                per[r] = per.get(r, 0) + 1
        total.requests = sorted(per)
        total.per_request = builtin_peak
        share = total.per_request / window if window else 0.0
        unused = [c.name for c in builtin if c.name not in used]
        top = ", ".join(f"{c.name} {fmt_tokens(c.per_request)}" for c in builtin[:5])
        out.append(
            _finding(
                "builtin-tools-cost",
                WARN if share >= BUILTIN_WARN else INFO,
                f"Built-in tools: {plural(len(builtin), 'tool')}, {fmt_tokens(total.per_request)} "
                f"tokens per request ({100 * share:.1f}% of the window)",
                total,
                tuple(c.name for c in builtin),
                controls.action("builtin_tools"),
                f"largest: {top}; {len(unused)} never called",
                "builtin_tools",
            )
        )
    return out
