"""How much of each request of Claude Code transcripts no recorded text explains.

    python tools/attribution_report.py [--all] [--with-subagents] [--json] PATH ...

Each PATH is a transcript or a folder searched for ``*.jsonl``. Of the Claude Code
transcripts among them, those with parallel tool calls (an assistant message with
two or more ``tool_use`` blocks; ``--all``: every one) are read, each file on its own
(its sub-agent files are not joined to it unless ``--with-subagents``: a folder holding
a session and its sub-agents then counts every request once; a sub-agent file gets
what its session recorded for it, ``Request.unrecorded``). Per file it prints:

- the requests with an API count, and how their unattributed share of the prompt
  (``analysis.attribution``) is distributed: none, up to 5%, 10%, 15%, over 15%;
  the largest share and the request that has it;
- the named causes summed over the file's last request of each conversation;
- ``compare``'s best estimator and its MAPE (transcripts are scored on their exact
  growth), and how many steps it scored.

The last lines add the files up: the share of requests at most 10% unattributed,
those over 15%, the worst, the files whose best MAPE is 30% or more (of all, and
of those scored on 20 steps or more), and the best estimator's MAPE over every
scored step of every file pooled.
``--json`` prints one object a file and a total instead.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.compare.scoring import compare
from ctxviewer.errors import LoadError
from ctxviewer.ingest.claude.subagents import session_of
from ctxviewer.ingest.loader import load
from ctxviewer.model import TOOL_USE, Session

BINS = ((0.0, "0%"), (5.0, "<=5%"), (10.0, "<=10%"), (15.0, "<=15%"))


@dataclass
class FileReport:
    """One transcript's unattributed shares and its best estimator."""

    path: str
    requests: int = 0  # with an API count
    shares: list[float] = field(default_factory=list)  # unattributed % of each
    worst_request: int | None = None
    causes: dict[str, int] = field(default_factory=dict)
    best: str | None = None
    mape: float | None = None  # percent
    scored: int = 0
    # each estimator's absolute error over every scored step, percent (pooled over files)
    errors: dict[str, list[float]] = field(default_factory=dict)
    steps_20: bool = False  # scored on 20 steps or more

    def count(self, upto: float) -> int:
        return sum(1 for s in self.shares if s <= upto)

    @property
    def over15(self) -> int:
        return sum(1 for s in self.shares if s > 15.0)

    @property
    def worst(self) -> float:
        return max(self.shares, default=0.0)


def has_parallel_calls(session: Session) -> bool:
    return any(
        sum(1 for b in m.blocks if b.kind == TOOL_USE) >= 2
        for r in session.requests
        for m in (*r.messages, *((r.response,) if r.response else ()))
        if m.role == "assistant"
    )


def files(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        out.extend(sorted(p.rglob("*.jsonl")) if p.is_dir() else [p])
    return out


def report(session: Session, path: str) -> FileReport:
    a = Analysis(session)
    rep = FileReport(path)
    last: dict[tuple[str, str | None], int] = {}
    for r, at in zip(session.requests, a.attribution, strict=True):
        if r.usage is None or not r.usage.prompt_tokens:
            continue
        share = 100.0 * at.unattributed / r.usage.prompt_tokens
        if share > rep.worst or rep.worst_request is None:
            rep.worst_request = r.index
        rep.shares.append(share)
        last[(r.role, r.agent)] = r.index
    for i in last.values():
        for cause, tokens in a.attribution[i].causes.items():
            rep.causes[cause] = rep.causes.get(cause, 0) + tokens
    rep.requests = len(rep.shares)
    c = compare(session)
    best = min(((s.mape, n) for n, s in c.summary.items() if s.mape is not None), default=None)
    if best is not None:
        rep.mape, rep.best = round(100 * best[0], 1), best[1]
    rep.scored = len(c.rows)
    rep.steps_20 = rep.scored >= 20
    for name in c.estimators:
        rep.errors[name] = [100 * abs(p) for row in c.rows if (p := row.pct(name)) is not None]
    return rep


def line(rep: FileReport) -> str:
    n = rep.requests
    bins = []
    below = 0
    for upto, label in BINS:
        k = rep.count(upto) - below
        below += k
        bins.append(f"{label} {k}")
    mape = "-" if rep.mape is None else f"{rep.best} {rep.mape:.1f}%"
    return (
        f"{Path(rep.path).name[:44]:44} {n:4d} req | {' '.join(bins)} >15% {rep.over15}"
        f" | worst {rep.worst:.1f}% (#{rep.worst_request}) | MAPE {mape} on {rep.scored}"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("paths", nargs="+", help="transcripts, or folders of them")
    p.add_argument("--all", action="store_true", help="also transcripts without parallel calls")
    p.add_argument(
        "--with-subagents", action="store_true", help="join each session's sub-agent files"
    )
    p.add_argument("--causes", action="store_true", help="print each file's named causes")
    p.add_argument("--json", action="store_true", help="one JSON object a file, then a total")
    args = p.parse_args(argv)

    reps: list[FileReport] = []
    for path in files(args.paths):
        try:
            # a sub-agent file alone still reads what its session recorded for it
            alone = session_of(path) is not None
            session = load(str(path), subagents=args.with_subagents or alone)
        except LoadError as e:
            print(f"{path}: skipped: {e}", file=sys.stderr)
            continue
        if session.format != "claude-code" or not session.requests:
            continue
        if not args.all and not has_parallel_calls(session):
            continue
        rep = report(session, str(path))
        reps.append(rep)
        if args.json:
            shown = asdict(rep) | {"shares": [round(s, 2) for s in rep.shares]}
            print(json.dumps({k: v for k, v in shown.items() if k != "errors"}))
        else:
            print(line(rep))
            if args.causes:
                for cause, tokens in sorted(rep.causes.items(), key=lambda x: -x[1]):
                    print(f"    {tokens:8,d}  {cause}")

    shares = [s for r in reps for s in r.shares]
    n = len(shares)
    le10 = sum(1 for s in shares if s <= 10.0)
    over = [r for r in reps if r.over15]
    high = [r for r in reps if r.mape is not None and r.mape >= 30.0]
    total: dict[str, object] = {
        "files": len(reps),
        "requests": n,
        "le10": le10,
        "le10_pct": round(100 * le10 / n, 1) if n else None,
        "over15": sum(r.over15 for r in reps),
        "files_over15": len(over),
        "worst": round(max(shares, default=0.0), 1),
        "mape_ge30": len(high),
        "mape_scored_files": sum(1 for r in reps if r.mape is not None),
        "mape_ge30_of_20_steps": sum(1 for r in high if r.steps_20),
        "files_of_20_steps": sum(1 for r in reps if r.steps_20),
    }
    pooled: dict[str, list[float]] = {}
    for r in reps:
        for name, errs in r.errors.items():
            pooled.setdefault(name, []).extend(errs)
    mapes = sorted((sum(e) / len(e), name, len(e)) for name, e in pooled.items() if e)
    if mapes:
        total["pooled_best"], total["pooled_mape"] = mapes[0][1], round(mapes[0][0], 1)
        total["pooled_steps"] = mapes[0][2]
    if args.json:
        print(json.dumps({"total": total}))
        return 0
    print(
        f"\n{total['files']} files, {n} requests: <=10% unattributed {le10} "
        f"({total['le10_pct']}%), >15% {total['over15']} (in {total['files_over15']} files), "
        f"worst {total['worst']}%"
    )
    print(
        f"best MAPE >= 30%: {len(high)} of {total['mape_scored_files']} scored files"
        + (": " + ", ".join(f"{Path(r.path).name[:20]} {r.mape}%" for r in high) if high else "")
    )
    print(
        f"files scored on 20 steps or more: {total['mape_ge30_of_20_steps']} of "
        f"{total['files_of_20_steps']} with best MAPE >= 30%"
    )
    if mapes:
        print(
            f"every scored step pooled: best {total['pooled_best']} "
            f"{total['pooled_mape']}% MAPE on {total['pooled_steps']} steps"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
