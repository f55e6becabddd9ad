"""``ctxviewer report``: the /context breakdown and the timeline, as text or JSON."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ctxviewer.analysis.agents.sessions import describe, split
from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.breakdown import Breakdown, Item
from ctxviewer.analysis.overflows import describe as overflow_text
from ctxviewer.analysis.report import report_json
from ctxviewer.commands.common import (
    UsageError,
    add_estimator_argument,
    add_file_argument,
    add_json_argument,
    add_policy_argument,
    add_request_argument,
    add_window_argument,
    fmt_tokens,
    load_file,
    load_session,
    print_json,
    request_index,
)
from ctxviewer.fmt import plural

if TYPE_CHECKING:  # imported when --against is given: kept off report's start-up
    from ctxviewer.analysis.agents.context_output import AgentContext

HELP = "print the context breakdown of a request and the prompt size of every request"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_file_argument(p)
    add_request_argument(p, "the request whose breakdown is shown")
    add_estimator_argument(p)
    add_window_argument(p)
    add_policy_argument(p)
    p.add_argument(
        "--counts",
        choices=("agent", "wire"),
        default="agent",
        help="count as the agent's own /context does (default) or as sent on the wire",
    )
    p.add_argument(
        "--against",
        metavar="CONTEXT_TXT",
        help="an agent's own /context output (Claude Code's screen or Markdown, "
        "qwen-code's text) or Codex's /status screen for the same request: "
        "print both side by side",
    )
    p.add_argument(
        "--sessions",
        action="store_true",
        help="list the sessions the file holds (a recording may hold several agents "
        "or conversations) and exit; pick one with --session N",
    )
    add_json_argument(p)
    p.add_argument(
        "--all-items",
        action="store_true",
        help="list every item row (text output shows the largest ones)",
    )


def analysis_from_args(args: argparse.Namespace) -> Analysis:
    if args.window is not None and args.window <= 0:
        raise UsageError("--window must be a positive number of tokens")
    session = load_session(args)
    return Analysis(
        session, args.estimator, args.policy, args.window, counts=getattr(args, "counts", "agent")
    )


def run(args: argparse.Namespace) -> int:
    if args.sessions:
        return _list_sessions(args)
    theirs = _read_context(args.against) if getattr(args, "against", None) else None
    a = analysis_from_args(args)
    which = request_index(a.session, args.request) if a.session.requests else None
    if args.json:
        out = report_json(a, which)
        if theirs is not None and out["breakdown"] is not None:
            from ctxviewer.analysis.agents.context_output import compare

            out["against"] = {"agent": theirs.agent, "rows": compare(theirs, out)}
        print_json(out)
        return 0
    sys.stdout.write(render_text(a, which, args.all_items))
    if theirs is not None and which is not None:
        from ctxviewer.analysis.agents.context_output import compare

        sys.stdout.write(render_against(theirs, compare(theirs, report_json(a, which))))
    return 0


def _list_sessions(args: argparse.Namespace) -> int:
    infos = describe(split(load_file(args.file, format=args.format)))
    if args.json:
        print_json({"sessions": [i.as_dict() for i in infos]})
        return 0
    for i in infos:
        peak = f"peak {i.peak:,}" if i.peak is not None else "no usage"
        sys.stdout.write(
            f"{i.number:>3}  {i.agent:<22} {i.conversation or '-':<38} "
            f"{plural(i.requests, 'request'):>14} ({i.main} main)  {peak}  "
            f"{i.first or '?'} .. {i.last or '?'}\n"
        )
    return 0


def _read_context(path: str) -> AgentContext:
    from ctxviewer.analysis.agents.context_output import parse as parse_context

    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return parse_context(f.read())
    except OSError as e:
        raise UsageError(f"--against {path}: {e.strerror or e}") from None
    except ValueError:
        raise UsageError(f"--against {path}: not an agent's /context or /status output") from None


def render_against(theirs: AgentContext, rows: list[dict[str, Any]]) -> str:
    ok = sum(r["ok"] for r in rows)
    lines = [
        "",
        f"Against {theirs.agent}'s own {theirs.command}: {ok} of {len(rows)} within 5% "
        "(items: or 10 tokens; or the precision it printed)",
        f"  {'':<52} {'agent':>10} {'ctxviewer':>10}",
    ]
    for r in rows:
        ours = f"{r['ours']:,}" if r["ours"] is not None else "-"
        lines.append(
            f"  {'  ' if r['ok'] else '✗ '}{r['what'][:50]:<50} {r['agent']:>10,.0f} {ours:>10}"
        )
    return "\n".join(lines) + "\n"


def attribution_text(att: dict[str, int]) -> str:
    return (
        f"{att['attributed_exact']:,} exact (the API's growth, explained), "
        f"{att['estimated']:,} estimated (the start of the chain), "
        f"{att['unattributed']:,} unattributed"
    )


def _bar(b: Breakdown, width: int = 50) -> str:
    glyphs = {
        "system_prompt": "S",
        "unrecorded_overhead": "S",
        "builtin_tools": "T",
        "mcp_tools": "M",
        "skills": "K",
        "memory_files": "F",
        "startup_context": "S",
        "messages": "#",
        "unattributed": "?",
        "free_space": ".",
        "autocompact_buffer": "~",
    }
    out = "".join(
        glyphs[c.name] * min(width, round(width * c.tokens / b.window)) for c in b.categories
    )
    return (out + "." * width)[:width]


def _items(lines: list[str], items: tuple[Item, ...], limit: int | None, depth: int = 1) -> None:
    shown = items if limit is None else items[:limit]
    for i, item in enumerate(shown):
        branch = "└" if i == len(shown) - 1 and len(shown) == len(items) else "├"
        lines.append(f"{'  ' * depth}{branch} {item.name}: {fmt_tokens(item.tokens)} tokens")
        if item.kind == "server":
            _items(lines, item.items, limit, depth + 1)
    if limit is not None and len(items) > limit:
        lines.append(f"{'  ' * depth}└ … {len(items) - limit} more")


def render_text(a: Analysis, which: int | None, all_items: bool = False) -> str:
    s = a.session
    t = a.thresholds
    lines = [
        f"{s.path}  [{s.format}]  {plural(len(s.requests), 'request')}"
        + (f", {plural(len(s.skipped), 'record')} skipped" if s.skipped else "")
    ]
    cut = next((k for k in s.skipped if "truncated here" in k.reason), None)
    if cut is not None:
        lines.append(f"note: line {cut.line}: {cut.reason}")
    cycles = [k for k in s.skipped if "closes a cycle" in k.reason]
    if cycles:
        more = f" (and {plural(len(cycles) - 1, 'more record')})" if len(cycles) > 1 else ""
        lines.append(f"note: line {cycles[0].line}: {cycles[0].reason}{more}")
    ident = a.identity
    w = a.window_info
    lines.append(
        f"agent {ident.label} ({ident.evidence})  model {s.model or '?'}  "
        f"estimator {a.estimator.name}"
    )
    lines.append(f"window {a.window:,} from the {w.source}: {w.detail}")
    lines.append(f"policy {a.policy_label} (from the {a.policy_source})")
    if ident.rules_note:
        lines.append(f"note: {ident.rules_note}")
    if a.threshold_evidence:
        lines.append(f"auto threshold from the log: {a.threshold_evidence}")
    lines.append(
        f"thresholds: warn {t.warn:,}  auto {t.auto:,}  hard {t.hard:,}  effective {t.effective:,}"
    )
    if which is None:
        lines.append("no requests in this session")
        return "\n".join(lines) + "\n"
    b = a.breakdown(which)
    req = s.requests[which]
    lines += [
        "",
        f"Context usage of request {which} ({req.role}, {req.model or '?'}, "
        f"{req.timestamp or 'no time'})",
    ]
    if req.role != "main" and not any(r.role == "main" for r in s.requests):
        lines.append(
            f"  No main request in this session: every call is {req.role} "
            "(side calls, count probes or sub-agents); showing the last one."
        )
    if b.failure:
        lines.append(
            f"  This call failed ({b.failure[:200]}): the model never read this "
            f"prompt{'; estimated overhead only' if b.mode == 'A' else ''}."
        )
    elif b.mode == "A":
        lines.append("  No API usage for this request: estimated overhead only.")
    if b.mode == "B":
        size = {
            "estimate": " (estimated: no API usage)",
            "overflow": " (as its overflow error states)",
        }.get(b.total_basis or "", "")
        lines.append(
            f"  {_bar(b)}  {fmt_tokens(b.total)}/{fmt_tokens(b.window)} tokens "
            f"({b.percent(b.used):.1f}%){size}"
        )
    lines.append("")
    for c in b.categories:
        lines.append(
            f"  {c.label:<38} {fmt_tokens(c.tokens):>7} tokens ({b.percent(c.tokens):.1f}%)"
        )
    for c in b.outside:
        lines.append(f"  {c.label:<38} {fmt_tokens(c.tokens):>7} tokens (not in the total)")
    for note in b.notes:
        lines.append(f"  note: {note}")
    for note in b.source_notes:
        lines.append(f"  from the log: {note}")
    if b.differences:
        other = "on the wire" if b.counts == "agent" else f"as {a.identity.profile.label} counts"
        lines += [
            "",
            f"  Where {a.identity.profile.label}'s /context and the wire differ "
            f"(shown: {'as the agent sees it' if b.counts == 'agent' else 'on the wire'}; "
            f"--counts {'wire' if b.counts == 'agent' else 'agent'} for {other})",
        ]
        for d in b.differences:
            lines.append(
                f"  - {d.what}: agent {fmt_tokens(d.agent)}, wire {fmt_tokens(d.wire)}: {d.note}"
            )
    msgs = b.category("messages")
    if msgs is not None:
        lines.append(f"  note: {msgs.note}")
    if b.attribution:
        lines.append(f"  prompt: {attribution_text(b.attribution)}")
    limit = None if all_items else 12
    for c in (*b.categories, *b.outside):
        if c.items and c.name != "messages":
            lines += ["", f"  {c.label}"]
            _items(lines, c.items, limit)
    if msgs is not None and msgs.items:
        lines += ["", "  Largest messages"]
        _items(lines, msgs.items, None if all_items else 8)
    points = a.timeline
    answered = [p for p in points if p.failure is None]
    peak = max((p.prompt_tokens for p in answered), default=0)
    failed = len(points) - len(answered)
    lines += [
        "",
        f"Timeline: {plural(len(points), 'request')}"
        f"{f' ({failed} failed)' if failed else ''}, peak prompt {peak:,} tokens",
    ]
    for p in points:
        if p.failure and not p.unanswered:  # an overflow: its numbers, what follows
            lines.append(f"  request {p.index}: context overflow: {p.failure[:120]}")
        elif p.failure:
            lines.append(f"  request {p.index}: failed: {p.failure[:120]}")
        elif p.events:
            lines.append(f"  request {p.index}: {', '.join(p.events)}")
        for e in s.requests[p.index].events:
            if e.overflow is not None and (said := overflow_text(e.overflow)):
                lines.append(f"    {said}")
    return "\n".join(lines) + "\n"
