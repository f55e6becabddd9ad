"""Count a request's overhead as its agent's own ``/context`` does ("as the agent
sees it"), and say where that differs from what was sent ("on the wire").

The rules are data in the profile table (``Era.counting``):

- ``memory = "between-markers"`` (qwen-code): a memory file is the text between
  its ``--- Context from: <path> ---`` markers, without the marker lines;
- ``system = "core-prompt"`` (qwen-code up to 0.16.0): the system prompt is the
  core prompt alone; the deferred-tools list and the auto-memory section are
  left to Messages, as qwen-code does;
- ``tools = "registered"`` (qwen-code up to 0.16.0): every registered tool
  counts, deferred ones included, though only their names are sent
  (``unsent_tools``: sizes of built-in tools the agent never sends, as its own
  ``/context`` reports them for that version);
- ``skills = "listing-entries"`` (Claude Code): Skills is the sum of each
  skill's listing entry, estimated at ``skill_chars_per_token`` and rounded to
  ``skill_round``; the Skill tool's schema is left to Messages;
- ``skills = "xml-blocks"`` (qwen-code): a skill's row is its whole
  ``<skill>…</skill>`` entry of the skill tool's description;
- ``shows_buffer = false`` (Claude Code 2.1.101 to 2.1.331): ``/context`` shows no
  autocompact buffer row: free space is the window minus what is used;
  ``"native-window"`` (2.1.332): the row is there for a model whose own window is
  1M and not for the others (the auto-compact window's source is "auto" for them);
- ``tool_groups = "listed-raw"`` (Claude Code 2.1.332): System tools is the answer
  for the built-in tools sent, as answered (no overhead taken off), plus the
  deferred built-ins the conversation used, minus the Skills total; each deferred
  built-in is counted alone (overhead taken off) and, with ``deferred_rows``, the
  ones not used are a row of their own outside the total, as are the MCP tools
  not loaded (their share of the one MCP count, by the length of their JSON);
- ``skill_total = "entries"`` (Claude Code 2.1.332): Skills is the sum of the
  entries' estimates before each row is rounded for display;
- ``system_skip`` prefixes: system blocks the agent does not count (Claude
  Code's billing header);
- qwen-code 0.24.2 (``qwen_context``): ``system = "core-section"``,
  ``auto_memory = "memory-file"``, ``tools = "declarations"``, ``skills =
  "startup-listing"``, ``startup = "prelude"`` (the Startup context row) and
  ``messages = "history"`` (Messages is its history's estimate, at most what the
  total leaves; the rest is the Unattributed row: ``split_messages``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ctxviewer.analysis.agents import qwen_context
from ctxviewer.analysis.agents.claude_counts import AgentCounts, scaled_items
from ctxviewer.analysis.tokens.estimators import Estimator
from ctxviewer.ingest.classify import QWEN_MEMORY, SKILLS_LISTING, listing_body
from ctxviewer.jsonish import js_dumps
from ctxviewer.model import MEMORY, SKILL, SKILL_BODY, SKILL_LISTING, TOOL_USE, Block, Request

# (tokens, items) per category, as ``breakdown.overhead_parts`` builds them.
Parts = dict[str, tuple[int, list[Any]]]
# Rows an agent shows outside its total (Claude Code 2.1.332's deferred tools).
DEFERRED_BUILTIN = "builtin_tools_deferred"
DEFERRED_MCP = "mcp_tools_deferred"
OUTSIDE = (DEFERRED_BUILTIN, DEFERRED_MCP)
ItemFactory = Callable[..., Any]

_DEFERRED = re.compile(r"^#+ Deferred Tools\n.*?(?=^---\s*$|^--- Context from: |\Z)", re.M | re.S)
_DEFERRED_ENTRY = re.compile(r'^- "(?P<name>[^"\n]+)": "(?P<desc>.*)"\s*$', re.M)
_AUTO_MEMORY = re.compile(r"^# auto memory\n.*\Z", re.M | re.S)
_SKILL_HEAD = re.compile(r"^- (?P<name>[^:\n]{1,120}?): ", re.M)
_SKILL_XML = re.compile(r"<skill>\s*<name>(?P<name>.*?)</name>.*?</skill>", re.S)


@dataclass(frozen=True)
class Difference:
    """Where the agent's ``/context`` and the wire disagree, with both numbers."""

    what: str
    agent: int
    wire: int
    note: str

    def as_dict(self) -> dict[str, Any]:
        return {"what": self.what, "agent": self.agent, "wire": self.wire, "note": self.note}


@dataclass(frozen=True)
class CountingView:
    """An agent's counting rules, applied to one request's overhead parts."""

    agent: str  # the agent's label, for notes
    rules: dict[str, Any]
    answers: AgentCounts | None = None  # the agent's own count calls for this request
    native_window: bool = False  # the request's model has the large window of its own

    @property
    def shows_buffer(self) -> bool:
        rule = self.rules.get("shows_buffer", True)
        return self.native_window if rule == "native-window" else bool(rule)

    def adjust(
        self, parts: Parts, req: Request, est: Estimator, item: ItemFactory
    ) -> tuple[Parts, list[Difference]]:
        """``parts`` counted by the agent's rules, and what changed against the wire."""
        diffs: list[Difference] = []
        parts = dict(parts)
        sent = req.complete  # a transcript holds no system prompt or tools to count again
        if sent and self.rules.get("system_skip"):
            self._skip_system(parts, diffs)
        if self.rules.get("memory") == "between-markers":
            self._memory_between_markers(parts, req, est, item, diffs)
        if sent and self.rules.get("system") == "core-prompt":
            self._core_prompt(parts, req, est, item, diffs)
        if sent and self.rules.get("tools") == "registered":
            self._registered_tools(parts, req, est, item, diffs)
        if self.rules.get("skills") == "listing-entries":
            self._listing_entries(parts, req, est, item, diffs)
        elif self.rules.get("skills") == "xml-blocks":
            self._xml_blocks(parts, req, est, item)
        if sent and self.rules.get("startup") == "prelude":
            self._qwen_prelude(parts, req, est, item, diffs)
        if self.answers is not None:
            self._apply_answers(parts, self.answers, req, item, diffs)
        elif self.rules.get("tool_groups") == "listed-raw" and req.tools:
            self._listed_estimate(parts, req, est, item, diffs)
        return parts, diffs

    def counted(self, category: str) -> bool:
        """Whether ``category``'s number is the agent's own count (not an estimate)."""
        a = self.answers
        if a is None:
            return False
        return {
            "system_prompt": bool(a.system),
            "memory_files": bool(a.memory),
            "builtin_tools": bool(a.builtin),
            "mcp_tools": a.mcp is not None,
            DEFERRED_BUILTIN: bool(a.single),
            DEFERRED_MCP: a.mcp is not None,
        }.get(category, False)

    # -- rules ------------------------------------------------------------------

    def _skip_system(self, parts: Parts, diffs: list[Difference]) -> None:
        prefixes = tuple(self.rules["system_skip"])
        tokens, items = parts["system_prompt"]
        keep = [
            x
            for x in items
            if not (isinstance(x.ref, Block) and x.ref.text.lstrip().startswith(prefixes))
        ]
        if len(keep) != len(items):
            gone = tokens - sum(x.tokens for x in keep)
            parts["system_prompt"] = (tokens - gone, keep)
            diffs.append(
                Difference(
                    "system prompt",
                    tokens - gone,
                    tokens,
                    f"{self.agent} does not count its billing header ({gone:,}) in System prompt",
                )
            )

    def _memory_between_markers(
        self, parts: Parts, req: Request, est: Estimator, item: ItemFactory, diffs: list[Difference]
    ) -> None:
        wire, _ = parts["memory_files"]
        files: dict[str, int] = {}
        refs: dict[str, str] = {}
        for b in (*req.system, *(b for m in req.messages for b in m.blocks)):
            if b.tag != MEMORY:
                continue
            m = QWEN_MEMORY.search(b.text)
            body = m.group("body") if m else b.text
            name = b.name or "memory"
            files[name] = files.get(name, 0) + est.count(body)
            refs[name] = body
        if not files:
            return
        items = [item(name, tokens, "memory", ref=refs[name]) for name, tokens in files.items()]
        agent = sum(files.values())
        parts["memory_files"] = (agent, items)
        if agent != wire:
            diffs.append(
                Difference(
                    "memory files",
                    agent,
                    wire,
                    f"{self.agent} counts memory files without their "
                    "'--- Context from: … ---' marker lines",
                )
            )

    def _core_prompt(
        self, parts: Parts, req: Request, est: Estimator, item: ItemFactory, diffs: list[Difference]
    ) -> None:
        tokens, items = parts["system_prompt"]
        out, moved = [], []
        for x in items:
            text = x.ref.text if isinstance(x.ref, Block) else None
            if text is None:
                out.append(x)
                continue
            for pattern, what in (
                (_DEFERRED, "deferred-tools list"),
                (_AUTO_MEMORY, "auto-memory section"),
            ):
                m = pattern.search(text)
                if m:
                    moved.append((what, m.group(0)))
                    text = text[: m.start()] + text[m.end() :]
            if text == x.ref.text:
                out.append(x)
            elif text.strip(" \n-"):  # what is left of the block besides separators
                label = f"block {(x.index or 0) + 1}: {_first_line(text)}"
                out.append(item(label, est.count(text), x.kind, ref=text, index=x.index))
        if not moved:
            return
        agent = sum(x.tokens for x in out)
        parts["system_prompt"] = (agent, out)
        for what, text in moved:
            diffs.append(
                Difference(
                    what,
                    0,
                    est.count(text),
                    f"sent in the system prompt; {self.agent} counts it under Messages",
                )
            )

    def _registered_tools(
        self, parts: Parts, req: Request, est: Estimator, item: ItemFactory, diffs: list[Difference]
    ) -> None:
        sent = {t.name for t in req.tools}
        unsent: dict[str, int] = dict(self.rules.get("unsent_tools", {}))
        listed = [
            (m.group("name"), m.group("desc"))
            for b in req.system
            for d in _DEFERRED.finditer(b.text)
            for m in _DEFERRED_ENTRY.finditer(d.group(0))
        ]
        listed += [(name, "") for name in unsent if name not in dict(listed)]
        for name, desc in listed:
            if name in sent:
                continue
            if name in unsent:
                tokens = int(unsent[name])
                how = f"its size as {self.agent}'s own /context reports it"
            else:
                tokens = est.count(js_dumps({"name": name, "description": desc}))
                how = "estimated from its name and description (the schema is never sent)"
            category = "mcp_tools" if "__" in name.strip("_") else "builtin_tools"
            total, items = parts[category]
            row = item(name, tokens, "unsent", ref=f"{name}: not sent ({how})")
            if category == "mcp_tools":
                server = name.removeprefix("mcp__").split("__", 1)[0]
                items = _add_to_server(items, server, row, item)
            else:
                items = [*items, row]
            parts[category] = (total + tokens, items)
            diffs.append(
                Difference(
                    f"tool {name}",
                    tokens,
                    0,
                    f"{self.agent} counts this deferred tool; only its name is sent ({how})",
                )
            )

    def _listing_entries(
        self, parts: Parts, req: Request, est: Estimator, item: ItemFactory, diffs: list[Difference]
    ) -> None:
        wire, _ = parts["skills"]
        per = float(self.rules.get("skill_chars_per_token", 4))
        step = int(self.rules.get("skill_round", 1)) or 1
        entries: dict[str, str] = {}
        for m in req.messages:
            for b in m.blocks:
                if b.tag == SKILL_LISTING:
                    entries.update(skill_entries(b.text))
        if not entries:
            return
        if self.rules.get("skill_total") == "entries":  # each entry rounded, then its row
            sizes = {
                name: _js_round(len(text.rstrip("\n")) / per) for name, text in entries.items()
            }
            items = [
                item(name, _js_round(sizes[name] / step) * step, "skill", ref=text)
                for name, text in entries.items()
            ]
            agent = sum(sizes.values())
        else:
            items = [
                item(name, _round(len(text) / per, step), "skill", ref=text)
                for name, text in entries.items()
            ]
            agent = sum(x.tokens for x in items)
        parts["skills"] = (agent, items)
        skill_tool = sum(est.tool(t) for t in req.tools if t.kind == SKILL)
        note = f"{self.agent} sums each skill's listing entry (about {per:g} characters a token)"
        if skill_tool and self.rules.get("tool_groups") == "listed-raw":
            note += (
                f"; the Skill tool's schema ({skill_tool:,}) is in System tools, which has "
                "the Skills total taken off"
            )
        elif skill_tool:
            note += f"; the Skill tool's schema ({skill_tool:,}) falls under its Messages"
        diffs.append(Difference("skills", agent, wire, note))

    def _apply_answers(
        self, parts: Parts, a: AgentCounts, req: Request, item: ItemFactory, diffs: list[Difference]
    ) -> None:
        how = f"{self.agent}'s own {a.via}"
        if a.system:
            wire = parts["system_prompt"][0]
            rows = [
                item(f"section: {_first_line(text)}", tokens, "system", ref=text, index=i)
                for i, (text, tokens) in enumerate(a.system)
            ]
            total = sum(t for _, t in a.system)
            parts["system_prompt"] = (total, rows)
            if abs(total - wire) > max(10, total // 100):
                diffs.append(
                    Difference(
                        "system prompt (counted)",
                        total,
                        wire,
                        f"{how}, one per section; the estimate of what was sent is {wire:,}",
                    )
                )
        if a.memory:
            wire_items = {x.name: x for x in parts["memory_files"][1]}
            rows = [
                item(
                    path, tokens, "memory", ref=wire_items[path].ref if path in wire_items else path
                )
                for path, tokens in a.memory.items()
            ]
            parts["memory_files"] = (sum(a.memory.values()), rows)
        if self.rules.get("tool_groups") == "listed-raw" and a.listed is not None:
            self._listed_raw(parts, a, req, item)
            return
        if a.builtin:
            total = a.builtin_without_skill
            _, items = parts["builtin_tools"]
            parts["builtin_tools"] = (total, scaled_items(items, total, item))
        if a.mcp is not None:
            _, servers = parts["mcp_tools"]
            tools = [t for srv in servers for t in srv.items]
            shared = {
                id(t): x for t, x in zip(tools, scaled_items(tools, a.mcp, item), strict=True)
            }
            rows = []
            for srv in servers:
                kids = [shared[id(t)] for t in srv.items]
                rows.append(item(srv.name, sum(k.tokens for k in kids), "server", tuple(kids)))
            parts["mcp_tools"] = (a.mcp, rows)  # one count for all: shares by estimate

    def _listed_raw(self, parts: Parts, a: AgentCounts, req: Request, item: ItemFactory) -> None:
        """Claude Code 2.1.332's tool rows: the sent built-ins as answered, the deferred ones
        the conversation used, minus Skills; the rest of the deferred tools outside."""
        used = {b.name for m in req.messages for b in m.blocks if b.kind == TOOL_USE and b.name}
        loaded = {name: tokens for name, tokens in a.single.items() if name in used}
        skills = parts["skills"][0]
        listed = max(0, (a.listed or 0) - skills)
        _, items = parts["builtin_tools"]
        rows = [
            *scaled_items(items, listed, item),
            *(
                item(name, tokens, "tool", ref=f"{name}: deferred, loaded by its use")
                for name, tokens in loaded.items()
            ),
        ]
        parts["builtin_tools"] = (listed + sum(loaded.values()), rows)
        if self.rules.get("deferred_rows"):
            rest = {name: tokens for name, tokens in a.single.items() if name not in loaded}
            parts[DEFERRED_BUILTIN] = (
                sum(rest.values()),
                [
                    item(name, tokens, "tool", ref=f"{name}: deferred (its schema is not sent)")
                    for name, tokens in rest.items()
                ],
            )
        if a.mcp is None:
            return
        shares = _js_shares(a.mcp, {n: _js_round(size / 4) for n, size in a.mcp_sizes.items()})
        sent = {t.name for t in req.tools}
        deferred = _announced_deferred(req)
        is_loaded = {n: n in used or (n in sent and n not in deferred) for n in shares}
        if not self.rules.get("deferred_rows"):
            is_loaded = dict.fromkeys(shares, True)
        for key, want in (("mcp_tools", True), (DEFERRED_MCP, False)):
            chosen = {n: t for n, t in shares.items() if is_loaded[n] == want}
            if key == DEFERRED_MCP and not self.rules.get("deferred_rows"):
                continue
            parts[key] = (sum(chosen.values()), _by_server(chosen, item))

    def _listed_estimate(
        self, parts: Parts, req: Request, est: Estimator, item: ItemFactory, diffs: list[Difference]
    ) -> None:
        """Without its count_tokens answers, System tools as the agent counts it, estimated:
        the built-in tools sent (the deferred-tools placeholder aside, the Skill tool in) and
        the tool-use overhead, minus Skills."""
        wire, items = parts["builtin_tools"]
        placeholder = [t for t in req.tools if '"defer_loading":true' in t.text]
        skill_tool = sum(est.tool(t) for t in req.tools if t.kind == SKILL)
        listed = wire - sum(est.tool(t) for t in placeholder) + skill_tool
        agent = max(0, listed + int(self.rules.get("tool_overhead", 0)) - parts["skills"][0])
        kept = [x for x in items if x.ref not in placeholder]
        parts["builtin_tools"] = (agent, scaled_items(kept, agent, item))
        diffs.append(
            Difference(
                "built-in tools",
                agent,
                wire,
                f"{self.agent} counts the built-in tools it sends with the Skill "
                "tool and the API's tool-use overhead, then takes Skills off",
            )
        )

    def _qwen_prelude(
        self, parts: Parts, req: Request, est: Estimator, item: ItemFactory, diffs: list[Difference]
    ) -> None:
        """qwen-code 0.24.2's System prompt, tools, memory, Skills and Startup context."""
        core, auto = qwen_context.system_sections(req)
        wire = parts["system_prompt"][0]
        if core:
            parts["system_prompt"] = (
                est.count(core),
                [item("core prompt", est.count(core), "system", ref=core, index=0)],
            )
        if auto and self.rules.get("auto_memory") == "memory-file":
            tokens, items = parts["memory_files"]
            n = est.count(auto)
            parts["memory_files"] = (
                tokens + n,
                [*items, item("auto memory", n, "memory", ref=auto)],
            )
        diffs.append(
            Difference(
                "system prompt",
                parts["system_prompt"][0],
                wire,
                f"{self.agent} counts its core prompt alone: the auto memory "
                "is a memory file to it; the memory section's markers and the "
                "text between them are in no row of its",
            )
        )
        if self.rules.get("tools") == "declarations":
            closed = frozenset(self.rules.get("closed_declarations", ()))
            whole, builtin, mcp, skill_decl = qwen_context.tool_rows(req, est, closed)
            wire_tools = parts["builtin_tools"][0]
            parts["builtin_tools"] = (
                max(0, whole - skill_decl - sum(mcp.values())),
                [item(n, t, "tool") for n, t in builtin.items()],
            )
            diffs.append(
                Difference(
                    "built-in tools",
                    parts["builtin_tools"][0],
                    wire_tools,
                    f"{self.agent} counts the JSON of its declarations, which "
                    "the wire carries converted",
                )
            )
            if mcp:
                parts["mcp_tools"] = (sum(mcp.values()), _by_server(mcp, item))
        else:
            skill_decl = sum(est.tool(t) for t in req.tools if t.kind == SKILL)
        if self.rules.get("skills") == "startup-listing":
            listing = [b for m in req.messages for b in m.blocks if b.tag == SKILL_LISTING]
            bodies = [b for m in req.messages for b in m.blocks if b.tag == SKILL_BODY]
            rows = {
                x.group("name").strip(): item(
                    x.group("name").strip(), est.count(x.group(0)), "skill", ref=x.group(0)
                )
                for b in listing
                for x in _SKILL_XML.finditer(b.text)
            }
            total = skill_decl + sum(est.count(b.text) for b in (*listing, *bodies))
            if total != parts["skills"][0]:
                diffs.append(
                    Difference(
                        "skills",
                        total,
                        parts["skills"][0],
                        f"{self.agent} counts the skill tool's declaration, the "
                        "whole listing reminder and the loaded skill bodies",
                    )
                )
            parts["skills"] = (total, list(rows.values()))
        pre = qwen_context.prelude(req)
        startup = sum(est.count(b.text) for b in pre.startup)
        if startup:
            diffs.append(
                Difference(
                    "startup context",
                    startup,
                    0,
                    f"sent in the first user message; {self.agent} shows it as "
                    "Startup context, not Messages",
                )
            )
        parts["startup_context"] = (
            startup,
            [
                item(qwen_context.reminder_name(b.text), est.count(b.text), "block", ref=b)
                for b in pre.startup
            ],
        )

    def split_messages(
        self, req: Request, est: Estimator, left: int
    ) -> tuple[int, int, int, list[tuple[str, int, str]]] | None:
        """qwen-code 0.24.2's Messages and Unattributed out of ``left`` (the total less the
        other rows): (messages, unattributed, the history's estimate, the reminders it
        attributes to nothing as (name, tokens, text)); None for other agents."""
        if self.rules.get("messages") != "history" or not req.complete:
            return None
        pre = qwen_context.prelude(req)
        history = qwen_context.history_tokens(pre.conversation, est)
        messages = min(history, max(0, left))
        transient = [
            (qwen_context.reminder_name(b.text), est.count(b.text), b.text) for b in pre.transient
        ]
        return messages, max(0, left - messages), history, transient

    def _xml_blocks(self, parts: Parts, req: Request, est: Estimator, item: ItemFactory) -> None:
        """Each skill's row is its whole ``<skill>…</skill>`` entry in the skill tool's
        description (the category total stays the tool's schema)."""
        total, items = parts["skills"]
        rows = {
            m.group("name").strip(): item(
                m.group("name").strip(), est.count(m.group(0)), "skill", ref=m.group(0)
            )
            for t in req.tools
            if t.kind == SKILL
            for m in _SKILL_XML.finditer(t.description)
        }
        if rows:
            parts["skills"] = (total, list(rows.values()))


def _js_round(value: float) -> int:
    """JavaScript's ``Math.round``: halves go up (Python's ``round`` goes to even)."""
    return math.floor(value + 0.5)


def _js_shares(total: int, weights: dict[str, int]) -> dict[str, int]:
    """``total`` shared by ``weights`` as Claude Code shares its MCP count (each share
    rounded on its own)."""
    whole = sum(weights.values()) or 1
    return {name: _js_round(w / whole * total) for name, w in weights.items()}


def _by_server(tokens: dict[str, int], item: ItemFactory) -> list[Any]:
    """MCP tool rows (``mcp__server__tool``) grouped under one row per server."""
    servers: dict[str, list[Any]] = {}
    for name, n in tokens.items():
        server = name.removeprefix("mcp__").split("__", 1)[0] or "mcp"
        servers.setdefault(server, []).append(item(name, n, "tool", ref=name))
    return [
        item(server, sum(x.tokens for x in rows), "server", tuple(rows))
        for server, rows in servers.items()
    ]


_ANNOUNCED = "The following deferred tools are now available via ToolSearch"


def _announced_deferred(req: Request) -> set[str]:
    """The tools Claude Code announced as deferred (listed by name, schema not sent)."""
    out: set[str] = set()
    for m in req.messages:
        for b in m.blocks:
            at = b.text.find(_ANNOUNCED)
            if at == -1:
                continue
            body = b.text[b.text.find("\n", at) + 1 :]
            end = body.find("\n\n")
            out.update(
                ln.strip() for ln in (body if end == -1 else body[:end]).splitlines() if ln.strip()
            )
    return out


def _first_line(text: str, n: int = 50) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= n else line[: n - 1] + "…"


def _round(value: float, step: int) -> int:
    return int(math.floor(value / step + 0.5)) * step if step > 1 else math.ceil(value)


def _add_to_server(items: list[Any], server: str, row: Any, item: ItemFactory) -> list[Any]:
    out, done = [], False
    for x in items:
        if x.kind == "server" and x.name == server:
            x = item(x.name, x.tokens + row.tokens, "server", (*x.items, row))
            done = True
        out.append(x)
    if not done:
        out.append(item(server, row.tokens, "server", (row,)))
    return out


def skill_entries(text: str) -> dict[str, str]:
    """Each skill of a Claude Code listing with its whole entry (all its lines)."""
    at = text.find(SKILLS_LISTING)
    if at == -1:
        return {}
    body = listing_body(text[at + len(SKILLS_LISTING) :])
    heads = list(_SKILL_HEAD.finditer(body))
    out: dict[str, str] = {}
    for i, head in enumerate(heads):
        stop = heads[i + 1].start() if i + 1 < len(heads) else len(body)
        out.setdefault(head.group("name").strip(), body[head.start() : stop])
    return out
