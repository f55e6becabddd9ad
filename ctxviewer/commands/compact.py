"""``ctxviewer compact``: simulate a compaction strategy on one request."""

from __future__ import annotations

import argparse
import sys

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.compaction import (
    LABELS,
    STRATEGIES,
    CompactionResult,
    simulate_compaction,
)
from ctxviewer.analysis.compaction.base import Summarizer
from ctxviewer.analysis.compaction.summarize_local import LocalSummarizer
from ctxviewer.commands.common import (
    UsageError,
    add_estimator_argument,
    add_file_argument,
    add_json_argument,
    add_policy_argument,
    add_request_argument,
    add_window_argument,
    fmt_tokens,
    load_session,
    print_json,
    request_index,
)
from ctxviewer.fmt import plural

HELP = "simulate a compaction strategy on a request: tokens before/after, kept, summary"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_file_argument(p)
    add_request_argument(p, "the request to compact")
    strategies = "; ".join(f"{n}: {LABELS[n]}" for n in STRATEGIES).replace("%", "%%")
    p.add_argument(
        "--strategy",
        required=True,
        metavar="NAME",
        help=f"how to compact. {strategies} (docs/compaction.md)",
    )
    p.add_argument(
        "--summarizer",
        default="local",
        choices=("local", "anthropic"),
        help="local (offline, default) or anthropic (ANTHROPIC_API_KEY / _BASE_URL)",
    )
    add_estimator_argument(p, "how tokens are counted before and after")
    add_policy_argument(p)
    add_window_argument(p)
    add_json_argument(p)


def _summarizer(name: str) -> Summarizer:
    if name == "anthropic":
        from ctxviewer.analysis.compaction.summarize_anthropic import AnthropicSummarizer

        return AnthropicSummarizer()
    return LocalSummarizer()


def run(args: argparse.Namespace) -> int:
    if args.strategy not in STRATEGIES:
        raise UsageError(f"--strategy: unknown {args.strategy!r} (known: {', '.join(STRATEGIES)})")
    if args.window is not None and args.window <= 0:
        raise UsageError("--window must be a positive number of tokens")
    a = Analysis(load_session(args), args.estimator, args.policy, args.window)
    index = request_index(a.session, args.request)
    b = a.breakdown(index)
    unrec = b.category("unrecorded_overhead")
    req = a.session.requests[index]
    try:
        result = simulate_compaction(
            req,
            args.strategy,
            a.estimator,
            b.thresholds,
            summarizer=_summarizer(args.summarizer),
            inferred_overhead=unrec.estimated if unrec else None,
        )
    except Exception as e:
        from ctxviewer.analysis.compaction.summarize_anthropic import SummarizerError

        if isinstance(e, SummarizerError):
            raise UsageError(f"summarizer: {e}") from None
        raise
    if args.json:
        print_json(result.as_json())
    else:
        sys.stdout.write(render_text(result))
    return 0


def _ranges(indices: tuple[int, ...]) -> str:
    if not indices:
        return "none"
    out: list[str] = []
    start = prev = indices[0]
    for i in [*indices[1:], None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
        if i is not None:
            start = prev = i
    return ", ".join(out)


def render_text(r: CompactionResult) -> str:
    lines = [
        f"strategy {r.strategy} on request {r.request.index}",
        f"  before   {r.before:>9,} tokens"
        + (f"  (local estimate {r.before_estimate:,})" if r.before != r.before_estimate else ""),
        f"  after    {r.after:>9,} tokens (estimate)  saved ~{fmt_tokens(r.saved)} "
        "(estimate against estimate)"
        + (
            f"; ~{r.projected_after:,} as the API would count (x{r.ratio:.2f})"
            if r.before != r.before_estimate
            else ""
        ),
        f"  kept       ({len(r.kept)}): {_ranges(r.kept)}",
        f"  summarized ({len(r.summarized)}): {_ranges(r.summarized)}",
        f"  dropped    ({len(r.dropped)}): {_ranges(r.dropped)}",
    ]
    if r.slimmed:
        lines.append(
            f"  slimmed {plural(len(r.slimmed), 'tool output')}: "
            f"{sum(s.before for s in r.slimmed):,} -> "
            f"{sum(s.after for s in r.slimmed):,} tokens"
        )
    if r.usage:
        lines.append(f"  summary call: {r.usage}")
    lines += [f"  note: {n}" for n in r.notes]
    if r.summary:
        lines += ["", f"Summary ({r.summary_tokens:,} tokens): {r.title}", "", r.summary]
    return "\n".join(lines) + "\n"
