"""Damage real logs and check ctxviewer reads each one or says why it cannot.

    .venv/bin/python tools/fuzz_logs.py [--cases 3000] [--cli 60] [--seed 1]
        [--corpus DIR] [--only truncate,flip] [--keep DIR] [--timeout 60]

For each real log (the corpus of logs written by others, and the repository's
own qwen-code, Gemini and OTel samples in tests/data, compressed ones
decompressed first) it makes damaged copies with a seeded RNG (tools/fuzz_damage.py:
truncations inside a line or a UTF-8 character, byte flips, a block of NULs, a
line deleted, duplicated or lines shuffled, a field changed to another JSON type,
a compressed copy cut short or flipped, an empty file, a file of NULs, a huge
single line, another tool's file).

Each case is loaded in this process (``ingest.load``, then what ``report --json``
and ``insights --json`` compute, then the JSON encoded), bounded by ``--timeout``;
``--cli`` of them also run as ``ctxviewer report --json`` and ``ctxviewer
insights --json`` subprocesses. A failure is: an exception other than
``LoadError`` (in process), a record a reader tripped on (``load`` skips it as a
"reader error"), a case over the timeout, and for the CLI an exit code other
than 0 or 2, "Traceback" or "internal error" on stderr, more than one line of
stderr with exit 2, or output that is not JSON with exit 0. One reproducer per
kind of failure is kept in ``--keep``. Exit status 1 when anything failed.
"""

from __future__ import annotations

import argparse
import lzma
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzz_damage import DAMAGES, pick  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"  # where the test suite finds it too
OWN_SAMPLES = [
    "qwen_session.jsonl",
    "gemini_session.json",
    "gemini_updates.jsonl",
    "codex_compaction.jsonl",
    "otel/file.jsonl",
    "otel/inline.jsonl.xz",
    "otel/inline-json.jsonl.xz",
]


@dataclass
class Case:
    number: int
    source: str
    damage: str
    path: Path
    failures: list[tuple[str, str]] = field(default_factory=list)  # (kind, detail)
    seconds: float = 0.0
    outcome: str = ""  # "loaded N requests, K skipped" / "LoadError"


def sources(corpus: Path) -> list[tuple[str, bytes]]:
    """(name, decompressed bytes) of every log to damage."""
    files = sorted(p for p in corpus.glob("*/*") if p.suffix in (".json", ".jsonl"))
    files += [REPO / "tests" / "data" / name for name in OWN_SAMPLES]
    out = []
    for p in files:
        data = p.read_bytes()
        out.append((p.name, lzma.decompress(data) if p.suffix == ".xz" else data))
    return out


class Hang(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise Hang()


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if "/ctxviewer/" in f.filename] or frames
    f = own[-1] if own else None
    return f"{Path(f.filename).name}:{f.lineno} {f.name}" if f else "?"


def analyse(path: str, deep: bool = False) -> str:
    """What ``report --json`` and ``insights --json`` compute for ``path``; returns a
    one-line outcome. Raises what they raise."""
    from ctxviewer.analysis.agents.sessions import default_session, split
    from ctxviewer.analysis.analysis import Analysis
    from ctxviewer.analysis.insights import insights, load_prices
    from ctxviewer.analysis.report import breakdown_json, report_json
    from ctxviewer.analysis.tokens.estimators import DEFAULT, for_session
    from ctxviewer.ingest import load
    from ctxviewer.ingest.loader import READER_ERROR

    whole = load(path)
    tripped = [s for s in whole.skipped if s.reason.startswith(READER_ERROR)]
    if tripped:
        raise ReaderTripped(f"line {tripped[0].line}: {tripped[0].reason}")
    parts = split(whole)
    session = parts[default_session(parts)] if len(parts) > 1 else parts[0]
    orjson.dumps(report_json(Analysis(session)))
    est = for_session(session, DEFAULT)
    result = insights(session, est, load_prices(), ())
    orjson.dumps(result.to_json(top=None))
    if deep:  # what the window computes besides: every breakdown, the timeline, findings
        from ctxviewer.analysis.findings import findings, findings_json
        from ctxviewer.analysis.session_summary import summarize
        from ctxviewer.analysis.timeline_view import view as timeline_view

        a = Analysis(session)
        for i in range(len(session.requests)):
            orjson.dumps(breakdown_json(a.breakdown(i)))
        timeline_view.from_analysis(a)
        timeline_view.from_analysis(a, x_mode="time")
        orjson.dumps(findings_json(findings(a)))
        orjson.dumps(summarize(a, result.cost).as_dict())
    return f"{len(session.requests)} requests, {len(whole.skipped)} skipped"


class ReaderTripped(Exception):
    """A record a reader raised on: ``load`` skipped it, but it is a reader bug."""


def run_in_process(case: Case, timeout: float, deep: bool) -> None:
    from ctxviewer.errors import LoadError

    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    start = time.perf_counter()
    try:
        case.outcome = analyse(str(case.path), deep)
    except LoadError as e:
        case.outcome = "LoadError: " + str(e).replace(str(case.path), "FILE")
        if "\n" in str(e):
            case.failures.append(("multi-line LoadError", str(e)[:200]))
    except Hang:
        case.failures.append(("hang", f"over {timeout:.0f} s in process"))
    except ReaderTripped as e:
        case.failures.append(("reader error", str(e)[:200]))
    except Exception as e:  # noqa: BLE001 - that is what we look for
        case.failures.append((f"{type(e).__name__} at {_where(e)}", f"{e!s:.200}"))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        case.seconds = time.perf_counter() - start


CLI_EXITS: Counter[str] = Counter()  # "report exit 0" -> runs


def run_cli(case: Case, timeout: float) -> None:
    for command in ("report", "insights"):
        argv = [sys.executable, "-m", "ctxviewer", command, "--json", str(case.path)]
        start = time.perf_counter()
        try:
            done = subprocess.run(argv, capture_output=True, timeout=timeout, cwd=REPO)
        except subprocess.TimeoutExpired:
            case.failures.append((f"cli {command} hang", f"over {timeout:.0f} s"))
            continue
        case.seconds = max(case.seconds, time.perf_counter() - start)
        CLI_EXITS[f"{command} exit {done.returncode}"] += 1
        err = done.stderr.decode(errors="replace")
        where = f"cli {command}"
        if "Traceback" in err:
            case.failures.append((f"{where} traceback", err.strip().splitlines()[-1][:200]))
        elif "internal error" in err:
            case.failures.append((f"{where} internal error", err.strip()[:200]))
        elif done.returncode not in (0, 2):
            case.failures.append((f"{where} exit {done.returncode}", err.strip()[:200]))
        elif done.returncode == 2 and len(err.strip().splitlines()) != 1:
            case.failures.append((f"{where} exit 2 not one line", err.strip()[:200]))
        elif done.returncode == 0:
            try:
                orjson.loads(done.stdout)
            except orjson.JSONDecodeError as e:
                case.failures.append((f"{where} bad JSON", str(e)[:200]))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=int, default=3000, help="cases run in process")
    p.add_argument(
        "--cli",
        type=int,
        default=60,
        help="of them, how many also run as report/insights subprocesses",
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--deep",
        action="store_true",
        help="also what the window computes: every request's breakdown, the "
        "timeline's view (by index and by time), the findings, the summary",
    )
    p.add_argument("--corpus", type=Path, default=CORPUS, help="the folder of real logs")
    p.add_argument("--only", help="comma-separated damages (default all): " + ", ".join(DAMAGES))
    p.add_argument("--timeout", type=float, default=60, help="seconds per case and command")
    p.add_argument(
        "--keep",
        type=Path,
        default=Path(tempfile.gettempdir()) / "ctxviewer-fuzz",
        help="one reproducer per kind of failure goes here",
    )
    args = p.parse_args(argv)
    if not args.corpus.is_dir():
        p.error(f"no corpus at {args.corpus} (--corpus DIR)")
    only = args.only.split(",") if args.only else None
    rnd = random.Random(args.seed)
    logs = sources(args.corpus)
    cli_cases = set(rnd.sample(range(args.cases), min(args.cli, args.cases)))
    cases: list[Case] = []
    groups: dict[str, list[Case]] = {}
    damages: Counter[str] = Counter()
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ctxviewer-fuzz-") as tmp:
        for n in range(args.cases):
            name, data = rnd.choice(logs)
            damage = pick(rnd, only)
            damaged = DAMAGES[damage](rnd, data)
            if damaged is None:
                damaged = DAMAGES["truncate"](rnd, data) or b""
                damage = "truncate"
            damages[damage] += 1
            path = Path(tmp) / f"case-{n:05d}{Path(name).suffix}"
            path.write_bytes(damaged)
            case = Case(n, name, damage, path)
            run_in_process(case, args.timeout, args.deep)
            if n in cli_cases:
                run_cli(case, args.timeout)
            for kind, detail in case.failures:
                if kind not in groups:
                    args.keep.mkdir(parents=True, exist_ok=True)
                    kept = args.keep / f"{len(groups):03d}-{damage}-{name}"
                    shutil.copy(path, kept)
                    print(f"FAIL {kind}: {detail} [{damage} of {name}] -> {kept}", flush=True)
                groups.setdefault(kind, []).append(case)
            path.unlink()
            case.path = Path(f"{damage} of {name}")
            cases.append(case)
    took = time.monotonic() - start
    print(
        f"\nseed {args.seed}: {len(cases)} cases in process, {len(cli_cases)} of them also "
        f"through the CLI (report, insights), {took:.0f} s"
    )
    print("damages: " + ", ".join(f"{k} {v}" for k, v in damages.most_common()))
    loaded = sum(1 for c in cases if c.outcome and not c.outcome.startswith("LoadError"))
    refused = sum(1 for c in cases if c.outcome.startswith("LoadError"))
    print(
        f"outcomes: {loaded} read (what could be), {refused} refused with a LoadError, "
        f"{sum(1 for c in cases if c.failures)} failed"
    )
    reasons = Counter(
        c.outcome[len("LoadError: ") :][:70] for c in cases if c.outcome.startswith("LoadError")
    )
    print("LoadErrors: " + "; ".join(f"{k!r} x{v}" for k, v in reasons.most_common(8)))
    if CLI_EXITS:
        print("CLI: " + ", ".join(f"{k} x{v}" for k, v in sorted(CLI_EXITS.items())))
    print(f"failures by kind: {len(groups)}")
    for kind, hit in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        first = hit[0]
        print(
            f"  {kind} x{len(hit)}: e.g. case {first.number} ({first.path}): "
            f"{dict(first.failures).get(kind, '')[:150]}"
        )
    print("slowest cases:")
    for c in sorted(cases, key=lambda c: -c.seconds)[:8]:
        print(f"  {c.seconds:6.2f} s  case {c.number} ({c.path}): {c.outcome[:80]}")
    return 1 if groups else 0


if __name__ == "__main__":
    sys.exit(main())
