"""``ctxviewer compare``: every estimator next to the API's prompt size, per request."""

from __future__ import annotations

import argparse
import sys

from ctxviewer.analysis.compare.scoring import Comparison, compare, comparison_json, write_csv
from ctxviewer.analysis.tokens.counter import CATEGORIES
from ctxviewer.analysis.tokens.estimators import names as local_names
from ctxviewer.analysis.tokens.registry import (
    ANTHROPIC,
    check_names,
    default_names,
    remote_counters,
)
from ctxviewer.commands.common import (
    UsageError,
    add_file_argument,
    add_json_argument,
    add_request_argument,
    load_session,
    print_json,
    request_index,
)
from ctxviewer.fmt import plural

HELP = "compare the token estimators with the API usage of every request"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_file_argument(p)
    p.add_argument(
        "--estimators",
        help="comma-separated names (default: "
        f"{','.join(default_names())}); also '{ANTHROPIC}' (the API's count_tokens)",
    )
    out = p.add_mutually_exclusive_group()
    add_json_argument(out)
    out.add_argument("--csv", action="store_true", help="print one CSV row per request")
    add_request_argument(p, "also show the per-category table of this request", default=None)
    p.add_argument(
        "--calibrate-base",
        help="base estimator of 'calibrated' (default: the one "
        "with the lowest MAPE on the earlier requests of the same model and role)",
    )
    p.add_argument(
        "--calibrate-fit",
        choices=("affine", "ratio"),
        default="affine",
        help="calibrated: api ~ offset + ratio*estimate (default) or ratio only",
    )


def _names(arg: str | None) -> list[str]:
    if not arg:
        return default_names()
    return check_names(n.strip() for n in arg.split(","))


def _progress(done: int, total: int) -> None:
    print(f"\rcount_tokens {done}/{total}", end="" if done < total else "\n", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    wanted = _names(args.estimators)
    if args.calibrate_base and args.calibrate_base not in local_names():
        raise UsageError(
            f"--calibrate-base: unknown local estimator {args.calibrate_base!r} "
            f"(known: {', '.join(local_names())})"
        )
    session = load_session(args)
    which = None if args.request is None else request_index(session, args.request)
    counters = remote_counters(
        session, wanted, request=which, progress=None if args.json or args.csv else _progress
    )
    c = compare(
        session,
        wanted,
        request=which,
        calibrate_base=args.calibrate_base,
        calibrate_fit=args.calibrate_fit,
        counters=counters,
    )
    if ANTHROPIC in counters:
        from ctxviewer.analysis.tokens.anthropic import AnthropicCounter

        counter = counters[ANTHROPIC]
        assert isinstance(counter, AnthropicCounter)
        counter.cache.save()
        failed = [r.index for r in c.rows if r.estimates.get(ANTHROPIC) is None]
        if failed:
            first = counter.error(session.requests[failed[0]]) or "?"
            print(
                f"ctxviewer: count_tokens failed for {plural(len(failed), 'request')} "
                f"({', '.join(map(str, failed[:10]))}): {first}",
                file=sys.stderr,
            )
    if args.json:
        print_json(comparison_json(c))
    elif args.csv:
        write_csv(c, sys.stdout)
    else:
        sys.stdout.write(render_text(c, session.path))
    return 0


def _pct(p: float | None, sign: bool = True) -> str:
    return "-" if p is None else f"{100 * p:+.1f}%" if sign else f"{100 * p:.1f}%"


def render_text(c: Comparison, path: str | None) -> str:
    w = max(9, *(len(n) + 1 for n in c.estimators))
    lines = [
        f"{path}: {plural(len(c.rows), 'request')} scored"
        + "".join(f", {v} excluded ({k.replace('_', ' ')})" for k, v in c.excluded.items() if v)
    ]
    head = f"{'req':>4} {'role':<9} {'api':>8} " + "".join(
        f"{n:>{w}}{'err':>8}" for n in c.estimators
    )
    lines += ["", head]
    for r in c.rows:
        cells = "".join(
            f"{'-' if r.estimates[n] is None else r.estimates[n]:>{w}}{_pct(r.pct(n)):>8}"
            for n in c.estimators
        )
        lines.append(f"{r.index:>4} {r.role[:9]:<9} {r.api_prompt_tokens:>8} {cells}")
    lines += ["", f"{'estimator':<12}{'n':>5}{'MAPE':>9}{'bias':>9}{'worst':>9}"]
    for n, s in sorted(c.summary.items(), key=lambda kv: (kv[1].mape is None, kv[1].mape or 0)):
        lines.append(
            f"{n:<12}{s.n:>5}{_pct(s.mape, False):>9}{_pct(s.bias):>9}"
            f"{_pct(s.max_abs_pct, False):>9}"
            + (f"  ({s.missing} without estimate)" if s.missing else "")
        )
    if c.calibration:
        cal = c.calibration
        fits = ", ".join(
            f"{x['model']}/{x['role']}: {x['ratio']:.3f}x{x['offset']:+.0f}" for x in cal["fits"]
        )
        held = "  ".join(
            f"{n} {_pct(m, False)}"
            for n, m in cal["held_out_mape"].items()
            if n == "calibrated" or n in c.estimators
        )
        lines.append(f"calibrated: {cal['fit']}, base {cal['base']} ({cal['base_rule']}); {fits}")
        lines.append(
            f"  held out (each request fitted on the earlier ones only), MAPE on the "
            f"same requests: {held}"
        )
    for note in c.notes:
        lines.append(f"note: {note}")
    if c.table is not None:
        t = c.table
        cols = list(t.estimates)
        lines += [
            "",
            f"Categories of request {t.request} (API total "
            f"{'-' if t.api_prompt_tokens is None else t.api_prompt_tokens})",
            f"{'category':<26}" + "".join(f"{n:>{w}}" for n in cols),
        ]
        for cat in CATEGORIES:
            label = "messages (estimate)" if cat == "messages" else cat
            lines.append(
                f"{label:<26}" + "".join(f"{_cell(t.estimates[n].get(cat)):>{w}}" for n in cols)
            )
        lines.append(
            f"{'messages (API - overhead)':<26}"
            + "".join(f"{_cell(t.by_subtraction(n)):>{w}}" for n in cols)
        )
    return "\n".join(lines) + "\n"


def _cell(v: int | None) -> str:
    return "-" if v is None else str(v)
