"""``ctxviewer insights``: cost, cache economics, redundancy and sub-agents of a session."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import Any

from ctxviewer.analysis.insights import (
    Budget,
    Insights,
    RequestDiff,
    diff_requests,
    insights,
    load_prices,
)
from ctxviewer.analysis.insights.compaction_outcome import KINDS
from ctxviewer.analysis.tokens.estimators import for_session
from ctxviewer.commands.common import (
    UsageError,
    add_estimator_argument,
    add_file_argument,
    add_json_argument,
    fmt_tokens,
    load_session,
    print_json,
    request_index,
)
from ctxviewer.fmt import plural, usd
from ctxviewer.model import Session

HELP = "cost, cache hit rate and breaks, redundant content and sub-agents of a session"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_file_argument(p)
    add_json_argument(p)
    add_estimator_argument(p)
    p.add_argument("--budget", type=float, metavar="USD", help="evaluate a spending budget")
    p.add_argument("--budget-tokens", type=int, metavar="N", help="evaluate a token budget")
    p.add_argument(
        "--budget-scope",
        choices=("session", "task"),
        default="session",
        help="a task budget resets at every user prompt (default session)",
    )
    p.add_argument(
        "--warn",
        type=float,
        default=0.8,
        metavar="FRACTION",
        help="warning threshold as a fraction of the budget (default 0.8)",
    )
    p.add_argument("--hard", action="store_true", help="hard budget: stop at the limit")
    p.add_argument("--diff", nargs=2, metavar=("A", "B"), help="also diff two requests")
    p.add_argument("--top", type=int, default=10, help="findings to show (default 10)")


def _budgets(args: argparse.Namespace) -> tuple[Budget, ...]:
    out = []
    try:
        if args.budget is not None:
            out.append(Budget(args.budget, "usd", args.budget_scope, args.warn, args.hard))
        if args.budget_tokens is not None:
            out.append(
                Budget(args.budget_tokens, "tokens", args.budget_scope, args.warn, args.hard)
            )
    except ValueError:
        raise UsageError("budgets must be positive and --warn in (0, 1]") from None
    return tuple(out)


def run(args: argparse.Namespace) -> int:
    budgets = _budgets(args)
    try:
        prices = load_prices()
    except ValueError as e:
        raise UsageError(f"price table: {e}") from None
    session = load_session(args)
    est = for_session(session, args.estimator)
    result = insights(session, est, prices, budgets)
    diff = None
    if args.diff:
        a, b = (request_index(session, x, "--diff") for x in args.diff)
        diff = diff_requests(session.requests[a], session.requests[b], est)
    if args.json:
        out: dict[str, Any] = {
            "source": {
                "path": session.path,
                "format": session.format,
                "requests": len(session.requests),
            },
            "model": session.model,
            "estimator": est.name,
            **result.to_json(top=None),
        }
        if diff is not None:
            out["diff"] = diff.to_json()
        print_json(out)
        return 0
    sys.stdout.write(render_text(session, result, args.top))
    if diff is not None:
        sys.stdout.write(render_diff(diff))
    return 0


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def render_text(session: Session, ins: Insights, top: int = 10) -> str:
    c = ins.cost
    head = (
        f"{session.path}  [{session.format}]  {plural(len(session.requests), 'request')}, "
        f"model {session.model or '?'}"
    )
    lines = [head, "", "Cost"]
    if c.total_usd is not None:
        lines.append(
            f"  total {c.total_text()}   without caching {usd(c.no_cache_usd)}   "
            f"caching saved {usd(c.saved_usd)}"
        )
    elif c.priced_usd:
        lines.append(
            f"  total {c.total_text()}   of the priced requests: without caching "
            f"{usd(c.no_cache_usd)}, caching saved {usd(c.saved_usd)}"
        )
    else:
        lines.append(f"  total {c.total_text()}")
    lines.append(
        f"  prompt {fmt_tokens(c.prompt_tokens)} tokens (cache read "
        f"{fmt_tokens(c.cache_read_tokens)}, cache write "
        f"{fmt_tokens(c.cache_write_tokens)}), output "
        f"{fmt_tokens(sum(r.output_tokens for r in c.requests))}"
    )
    for m in c.by_model:
        price = usd(m.total_usd) if m.price_key else "unknown (no price)"
        lines.append(
            f"  {m.model}: {plural(m.requests, 'request')}, {price}"
            + (f"  [{m.source}]" if m.source else "")
        )
    if c.prices_user_file:
        lines.append(f"  your prices from {c.prices_user_file}")
    for b in ins.budgets:
        bud = b.budget
        limit = usd(bud.limit) if bud.unit == "usd" else f"{fmt_tokens(bud.limit)} tokens"
        lines.append(
            f"  budget {limit} per {bud.scope} ({'hard' if bud.hard else 'soft'}, "
            f"warn at {bud.warn_fraction:.0%}):"
        )
        if not b.crossings:
            lines.append("    never reached the warning")
        for x in b.crossings:
            spent = usd(x.spent) if bud.unit == "usd" else fmt_tokens(x.spent)
            task = f" (task {x.task})" if bud.scope == "task" else ""
            lines.append(f"    {x.kind} crossed at request {x.request}{task}: {spent}")
        if b.stopped_at is not None:
            lines.append(
                f"    a hard limit stops the agent at request {b.stopped_at} "
                f"({plural(b.skipped_requests, 'later request')} would not run)"
            )
    lines += render_sources(ins, top)
    lines += [
        "",
        (
            f"Cache: hit rate {_pct(ins.cache.hit_rate)}, "
            f"{plural(len(ins.cache.breaks), 'break')}, {fmt_tokens(ins.cache.rewritten_tokens)} "
            f"tokens re-written"
        ),
    ]
    for br in ins.cache.breaks[:top]:
        where = (
            "an unknown position"
            if br.section == "unknown"
            else br.section
            if br.position is None
            else f"{br.section}[{br.position}]"
        )
        lines.append(
            f"  request {br.request} ({br.conversation}): {br.kind} at {where}, "
            f"{fmt_tokens(br.tokens)} tokens re-cached - {br.detail}"
        )
    r = ins.redundancy
    lines += [
        "",
        (
            f"Redundancy: {plural(len(r.findings), 'finding')}, carried "
            f"{fmt_tokens(r.carry_tokens)} tokens in later requests "
            f"({fmt_tokens(r.trim_carry_tokens)} of them dropped by trim)"
        ),
    ]
    for kind, (n, t) in r.by_kind().items():
        lines.append(f"  {kind}: {n} ({fmt_tokens(t)} carried)")
    for f in r.findings[:top]:
        what = f.path or f.name
        trim = "  [trim drops it]" if f.trim_drops else ""
        lines.append(
            f"  {f.kind} {what}: {fmt_tokens(f.tokens)} tokens x {f.carried_by} "
            f"requests = {fmt_tokens(f.carry_tokens)} (request {f.first_request}, "
            f"superseded by {f.superseded_by}){trim}"
        )
    lines += ["", f"Sub-agents: {plural(len(ins.subagents), 'run')}"]
    for s in ins.subagents:
        parent = (
            "no parent found"
            if s.parent is None
            else f"after request {s.parent}"
            if s.link == "compaction"
            else f"spawned by request {s.parent} ({s.link})"
        )
        lines.append(
            f"  {s.label} {s.description!r}: {plural(len(s.requests), 'request')}, "
            f"peak {fmt_tokens(s.peak_context)}, {fmt_tokens(s.total_tokens)} tokens, "
            f"{usd(s.cost_usd)}, {plural(s.tool_calls, 'tool call')}, {parent}"
        )
    for cp in ins.compactions:
        lines += [
            "",
            f"Compaction before request {cp.after}: {fmt_tokens(cp.before_tokens)} -> "
            f"{fmt_tokens(cp.after_tokens)} tokens (the API's); parts estimated at "
            f"{cp.ratio:.2f}x the estimator, calibrated on this session",
        ]
        for kind in KINDS:
            whats = Counter(p.what for p in cp.parts if p.kind == kind)
            common = ", ".join(f"{n} {w}" for w, n in whats.most_common(4))
            lines.append(f"  {kind:<10} {fmt_tokens(cp.tokens(kind)):>7} tokens  {common}")
    return "\n".join(lines) + "\n"


def render_sources(ins: Insights, top: int) -> list[str]:
    """The sources of the context over the session, the costliest first."""
    src = ins.sources
    if src is None or not src.sources:
        return []
    lines = [
        "",
        (
            f"Sources: {plural(len(src.sources), 'source')} over "
            f"{plural(src.requests, 'request')}, {fmt_tokens(src.token_requests)} "
            f"tokens x requests (the prompts sent: {fmt_tokens(src.prompt_tokens)})"
        ),
    ]
    for s in src.top(top):
        cost = usd(s.cost_usd, "unknown")
        lines.append(
            f"  {cost:>9}  {fmt_tokens(s.token_requests):>7} tok x req  "
            f"{fmt_tokens(s.tokens):>6} x {len(s.requests):<4} {s.kind}: {s.name}"
        )
        for one in s.largest[:2]:
            lines.append(f"             {fmt_tokens(one.token_requests):>7} tok x req  {one.name}")
    if len(src.sources) > top:
        lines.append(f"  … {len(src.sources) - top} more (--top N, or --json)")
    return lines


def render_diff(d: RequestDiff) -> str:
    lines = [
        "",
        (
            f"Diff of request {d.a} -> {d.b}: {d.delta:+,} tokens "
            f"(added {fmt_tokens(d.tokens('added'))}, removed "
            f"{fmt_tokens(d.tokens('removed'))}, unchanged "
            f"{fmt_tokens(d.unchanged_tokens)})"
        ),
    ]
    if d.tools_reordered:
        lines.append("  tools reordered")
    for c in d.changes[:50]:
        lines.append(f"  {c.status:<8} {c.section:<8} {c.label}: {c.delta:+,}")
    if len(d.changes) > 50:
        lines.append(f"  … {len(d.changes) - 50} more")
    return "\n".join(lines) + "\n"
