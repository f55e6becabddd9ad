"""``ctxviewer findings``: what to cut from the context, and what it would save."""

from __future__ import annotations

import argparse
import sys

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.findings import SEVERITIES, Finding, at_least, findings, findings_json
from ctxviewer.analysis.insights import load_prices
from ctxviewer.commands.common import (
    UsageError,
    add_estimator_argument,
    add_file_argument,
    add_json_argument,
    load_session,
    print_json,
)
from ctxviewer.fmt import fmt_tokens, plural, usd

HELP = (
    "findings: unused tools, costly MCP servers, oversized results, cache breaks, "
    "compaction forecast"
)
FAILED = 3  # the exit status when --fail-on found something


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_file_argument(p)
    add_json_argument(p, 'print {"findings": [...]}')
    p.add_argument(
        "--fail-on",
        choices=SEVERITIES[1:],
        metavar="warn|error",
        help=f"exit {FAILED} when a finding of this severity or above is present",
    )
    add_estimator_argument(p)


def run(args: argparse.Namespace) -> int:
    try:
        prices = load_prices()
    except ValueError as e:
        raise UsageError(f"price table: {e}") from None
    session = load_session(args)
    found = findings(Analysis(session, args.estimator), prices=prices)
    if args.json:
        print_json(findings_json(found))
    else:
        sys.stdout.write(render_text(session.path, found))
    return FAILED if args.fail_on and at_least(found, args.fail_on) else 0


def render_text(path: str | None, found: list[Finding]) -> str:
    counts = ", ".join(f"{sum(f.severity == s for f in found)} {s}" for s in reversed(SEVERITIES))
    lines = [f"{path}: {plural(len(found), 'finding')} ({counts})"]
    for f in found:
        per = (
            f"{fmt_tokens(f.tokens_per_request)}/request"
            if f.tokens_per_request is not None
            else ""
        )
        carried = f"{fmt_tokens(f.tokens_carried)} carried" if f.tokens_carried is not None else ""
        numbers = ", ".join(x for x in (per, carried, usd(f.usd) if f.usd is not None else "") if x)
        reqs = (
            f"request {f.requests[0]}"
            if len(f.requests) == 1
            else f"requests {f.requests[0]}..{f.requests[-1]} ({len(f.requests)})"
            if f.requests
            else ""
        )
        lines += ["", f"{f.severity.upper():<5} {f.code}: {f.title}"]
        if numbers or reqs:
            lines.append(f"      {numbers}{'; ' if numbers and reqs else ''}{reqs}")
        if f.detail:
            lines.append(f"      {f.detail}")
        lines.append(f"      -> {f.action}")
    return "\n".join(lines) + "\n"
