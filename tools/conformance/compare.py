"""Side-by-side tables: an agent's own numbers next to ctxviewer's for the same conversation.

One table per (agent output, log) of a case: the agent's ``/context`` or ``/status`` (parsed
by ``ctxviewer.analysis.agents.context_output``, the parser ``report --against`` uses)
against ``report --json`` of the recording or of the agent's own log. For Codex and Gemini CLI
a second table per log holds the system prompt and tools as sent (the wire file, counted with
ctxviewer's estimator) against ctxviewer's categories. A row passes within 5% or within the
rounding the agent printed ("1.8k" is 1,750-1,849); items within 5% or 10 tokens. The rows
off that ``known_off`` names carry its reason; ``summary`` is the table of tables that
docs/conformance.md keeps.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.cases import WIRE_AGENTS, Case
from conformance.known_off import KNOWN_OFF, covers, why
from ctxviewer.analysis.agents.context_output import AgentContext, Number, compare, parse
from ctxviewer.analysis.agents.sessions import default_session, split
from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.report import report_json
from ctxviewer.analysis.tokens.estimators import get_estimator
from ctxviewer.ingest import load

WIRE = "wire"  # the output name of a table of what was sent


@dataclass(frozen=True)
class Row:
    what: str
    agent: float | None
    ours: int | None
    ok: bool

    @property
    def diff(self) -> float | None:
        return None if self.agent is None or self.ours is None else self.ours - self.agent

    @property
    def percent(self) -> float | None:
        d = self.diff
        return None if d is None or not self.agent else 100.0 * d / self.agent


@dataclass(frozen=True)
class Table:
    case: Case
    output: str  # "/context", "/status", "-o json", or WIRE
    log: str  # "recording", "transcript", "rollout", "chat"
    rows: tuple[Row, ...]
    request: int | None  # the request ctxviewer's breakdown is of
    note: str = ""  # why there are no rows of ctxviewer's (no requests in the log, ...)

    @property
    def key(self) -> str:
        return f"{self.case.key} {self.output} vs {self.log}"

    @property
    def ok(self) -> bool:
        return bool(self.rows) and all(r.ok for r in self.rows)

    @property
    def off(self) -> list[str]:
        return [r.what for r in self.rows if not r.ok]

    @property
    def unexplained(self) -> list[str]:
        """Rows off that no ``known_off`` entry explains."""
        return [w for w in self.off if why(self.key, w) is None]

    @property
    def stale(self) -> list[str]:
        """``known_off`` entries of this table that name no row off."""
        return [p for p in KNOWN_OFF.get(self.key, {}) if not any(covers(p, w) for w in self.off)]

    @property
    def as_known(self) -> bool:
        """Rows to compare, every row within tolerance or off for a known reason, and every
        known reason still holding."""
        return bool(self.rows) and not self.unexplained and not self.stale


@functools.lru_cache(maxsize=32)
def report_of(path: Path) -> dict[str, Any] | None:
    """``report --json`` of a log's default session (as the command picks it); None when the
    log holds no request."""
    parts = split(load(str(path)))
    session = parts[default_session(parts)]
    if not session.requests:
        return None
    return report_json(Analysis(session))


def agent_numbers(case: Case, output: str) -> AgentContext:
    """The agent's own numbers in one of its outputs."""
    if case.agent == "gemini-cli":
        return _gemini_numbers(case)
    return parse(case.text(case.outputs[output]))


def _gemini_numbers(case: Case) -> AgentContext:
    """Gemini CLI prints no breakdown: its window and compression threshold are constants of
    its bundle (source.json), its last prompt is in the turn's ``-o json`` stats."""
    source = json.loads(case.text(case.outputs["source"]))
    out = AgentContext("gemini-cli")
    if source.get("window"):
        out.window = Number(source["window"], 0.5)
        if source.get("compression_threshold"):
            auto = source["window"] * source["compression_threshold"]
            out.thresholds["auto"] = Number(auto, 0.5)
    try:
        stats = json.loads(case.text(case.outputs["-o json"]))["stats"]["models"]
    except (KeyError, ValueError):
        return out
    main = [m["tokens"]["prompt"] for m in stats.values() if "main" in (m.get("roles") or {})]
    if main:
        out.used = Number(main[-1], 0.5)
    return out


def specs(case: Case) -> list[tuple[str, str]]:
    """The tables of a case, as (output, log) pairs, without reading any log."""
    out = []
    for log_kind in case.logs:
        out += [(output, log_kind) for output in case.outputs if output != "source"]
        if case.wire and case.agent in WIRE_AGENTS:
            out.append((WIRE, log_kind))
    return out


def tables(case: Case) -> list[Table]:
    return [table(case, output, log_kind) for output, log_kind in specs(case)]


def table(case: Case, output: str, log_kind: str) -> Table:
    """One table: an agent output (or WIRE) of a case against ctxviewer on one of its logs."""
    report = report_of(case.file(case.logs[log_kind]))
    request = report["breakdown"]["request"] if report else None
    note = "" if report else f"no request in the {log_kind}"
    if output == WIRE:
        return Table(
            case, WIRE, log_kind, tuple(wire_rows(case, report) if report else ()), request, note
        )
    try:
        theirs = agent_numbers(case, output)
    except (ValueError, KeyError) as e:
        return Table(case, output, log_kind, (), request, f"no numbers in its output: {e}")
    rows = compare(theirs, report) if report else _unanswered(theirs)
    return Table(case, output, log_kind, tuple(_rows(rows)), request, note)


def _rows(raw: list[dict[str, Any]]) -> list[Row]:
    return [Row(r["what"], r["agent"], r["ours"], r["ok"]) for r in raw]


def _unanswered(theirs: AgentContext) -> list[dict[str, Any]]:
    """The agent's rows with nothing of ours beside them (a log without requests)."""
    rows = [
        ("window", theirs.window),
        ("used", theirs.used),
        *((f"threshold: {k}", v) for k, v in theirs.thresholds.items()),
        *theirs.categories.items(),
    ]
    return [
        {"what": w, "agent": n.value, "ours": None, "ok": False} for w, n in rows if n is not None
    ]


# -- what was sent ---------------------------------------------------------------------------


def wire_rows(case: Case, report: dict[str, Any]) -> list[Row]:
    """The last main request's system prompt and tools as sent, counted with ctxviewer's
    estimator, against ctxviewer's categories for the log."""
    body = last_turn_body(case)
    if body is None:
        return []
    system, tools = (_codex_parts if case.agent == "codex" else _gemini_parts)(body)
    est = get_estimator(report["estimator"])
    sent_system, sent_tools = est.count(system), est.count(tools)
    cats = {c["name"]: c["tokens"] for c in report["breakdown"]["categories"]}
    ours_system = cats.get("system_prompt")
    ours_tools = cats.get("builtin_tools", 0) + cats.get("mcp_tools", 0)
    unrecorded = cats.get("unrecorded_overhead", 0)
    if ours_system is not None:  # then the unrecorded overhead is the tools alone
        ours_tools += unrecorded
    both = (ours_system or 0) + ours_tools + (0 if ours_system is not None else unrecorded)
    rows = [
        ("wire: system prompt", sent_system, ours_system),
        ("wire: tools", sent_tools, ours_tools if ours_system is not None else None),
        ("wire: system prompt + tools", sent_system + sent_tools, both),
    ]
    return [
        Row(w, float(sent), ours, ours is not None and Number(sent, 0.5).matches(ours))
        for w, sent, ours in rows
    ]


def last_turn_body(case: Case) -> dict[str, Any] | None:
    """The body of the last main request: one that carried tools and that the agent itself
    marks as a turn of the conversation (not Codex's title or compaction call, which
    carry fewer tools or none): the request ctxviewer's breakdown is of."""
    last = None
    for line in case.text(case.wire or "").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        req = rec.get("request") if rec.get("type") == "exchange" else rec
        body = req.get("body") if isinstance(req, dict) else None
        if not isinstance(body, dict) or not (body.get("tools") or _codex_tool_item(body)):
            continue
        if _a_turn(req.get("headers") or {}):
            last = body
    return last


def _a_turn(headers: dict[str, str]) -> bool:
    """Whether the agent's own headers mark a request as a turn of the conversation: Codex
    names each request's kind in ``x-codex-turn-metadata`` (``turn``, ``compaction``) and a
    turn's trigger (``user``, ``exec``); its title call is a turn without one
    (``thread_source: thread_title``). Requests without the header (other agents, Codex
    0.10x) are turns."""
    try:
        meta = json.loads(headers.get("x-codex-turn-metadata") or "{}")
    except ValueError:
        return True
    if not isinstance(meta, dict) or "request_kind" not in meta:
        return True
    return meta["request_kind"] == "turn" and bool(meta.get("turn_trigger"))


def _codex_tool_item(body: dict[str, Any]) -> dict[str, Any] | None:
    items = body.get("input") if isinstance(body.get("input"), list) else []
    return next(
        (i for i in items if isinstance(i, dict) and i.get("type") == "additional_tools"), None
    )


def _codex_parts(body: dict[str, Any]) -> tuple[str, str]:
    """Codex 0.17x: ``input[0]`` is ``{"type": "additional_tools"}`` (the tools), the first
    developer message the base instructions; older requests carry ``instructions`` and
    ``tools`` at the top."""
    item = _codex_tool_item(body)
    tools = [*(item or {}).get("tools", []), *(body.get("tools") or [])]
    system = body.get("instructions") or ""
    if not system:
        dev = next(
            (
                i
                for i in body.get("input", [])
                if isinstance(i, dict)
                and i.get("type") == "message"
                and i.get("role") == "developer"
            ),
            {},
        )
        system = "\n".join(c.get("text", "") for c in dev.get("content", []) if isinstance(c, dict))
    return system, sent_json(tools) if tools else ""


def sent_json(value: Any) -> str:
    """JSON as the agents send it: compact, no spaces after ``,`` and ``:`` (a request's
    ``body_bytes`` in the fakes' logs is exactly this length)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _gemini_parts(body: dict[str, Any]) -> tuple[str, str]:
    parts = (body.get("systemInstruction") or {}).get("parts") or []
    system = "\n".join(p.get("text", "") for p in parts if isinstance(p, dict))
    tools = body.get("tools") or []
    return system, sent_json(tools) if tools else ""


# -- printing ----------------------------------------------------------------------------------


def render(table: Table) -> str:
    c = table.case
    side = "sent" if table.output == WIRE else "agent"
    title = (
        f"{c.agent} {c.version} · {c.scenario} ({c.via}): {c.what}\n"
        f"  {table.output if table.output != WIRE else 'the wire'} vs ctxviewer on the "
        f"{table.log}" + (f" (request {table.request})" if table.request is not None else "")
    )
    lines = [title]
    if table.note:
        lines.append(f"  note: {table.note}")
    lines.append(f"    {'row':<44} {side:>11} {'ctxviewer':>11} {'diff':>10} {'%':>8}")
    for r in table.rows:
        agent = f"{r.agent:,.0f}" if r.agent is not None else "-"
        ours = f"{r.ours:,}" if r.ours is not None else "-"
        diff = f"{r.diff:+,.0f}" if r.diff is not None else "-"
        pct = f"{r.percent:+.1f}%" if r.percent is not None else "-"
        what = r.what if len(r.what) <= 44 else r.what[:14] + "…" + r.what[-29:]
        lines.append(
            f"  {' ' if r.ok else '✗'} {what:<44} {agent:>11} {ours:>11} {diff:>10} {pct:>8}"
        )
    ok = sum(r.ok for r in table.rows)
    lines.append(
        f"  {ok} of {len(table.rows)} rows within tolerance"
        + ("" if table.ok else f"; off: {off_summary(table)}")
    )
    for reason, rows in _by_reason(table).items():
        lines.append(f"  known off ({_short(rows)}): {reason}")
    if table.unexplained:
        lines.append(f"  NOT KNOWN: {', '.join(table.unexplained)}")
    if table.stale:
        lines.append(f"  known off, but within tolerance now: {', '.join(table.stale)}")
    return "\n".join(lines) + "\n"


def _by_reason(table: Table) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for w in table.off:
        if (reason := why(table.key, w)) is not None:
            out.setdefault(reason, []).append(w)
    return out


def _short(rows: list[str]) -> str:
    """Rows, items counted per category: 'system_prompt, 2 mcp_tools items'."""
    names = [w for w in rows if ": " not in w or w.startswith(("threshold: ", "wire: "))]
    items: dict[str, int] = {}
    for w in rows:
        if w not in names:
            cat = w.split(": ", 1)[0]
            items[cat] = items.get(cat, 0) + 1
    names += [f"{n} {cat} item{'s' if n > 1 else ''}" for cat, n in items.items()]
    return ", ".join(names)


def summary(tables: list[Table]) -> str:
    """One Markdown row per table (rows within tolerance, the rows off), the reasons below."""
    notes: dict[str, int] = {}
    lines = [
        "| agent | version | case | table | rows within tolerance | off (reason) |",
        "|---|---|---|---|---|---|",
    ]
    for t in tables:
        c = t.case
        off = []
        for reason, rows in _by_reason(t).items():
            n = notes.setdefault(reason, len(notes) + 1)
            off.append(f"{_short(rows)} [{n}]")
        if t.unexplained:
            off.append(f"{', '.join(t.unexplained)} [not known]")
        if not t.rows:
            off.append(f"no rows: {t.note}")
        ok = sum(r.ok for r in t.rows)
        lines.append(
            f"| {c.agent} | {c.version} | {c.scenario} | "
            f"{t.output if t.output != WIRE else 'the wire'} vs {t.log} | "
            f"{ok} / {len(t.rows)} | {'; '.join(off)} |"
        )
    lines.append("")
    lines += [f"[{n}] {reason}" for reason, n in notes.items()]
    return "\n".join(lines) + "\n"


def off_summary(table: Table) -> str:
    """The rows off, items counted per category."""
    if not table.rows:
        return "no rows" + (f" ({table.note})" if table.note else "")
    return _short(table.off)
