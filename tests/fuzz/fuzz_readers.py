"""Random fuzzing campaign over every reader: no input may crash ``load``.

    python tests/fuzz/fuzz_readers.py [--seconds 60] [--seed N] [--analysis] [--keep DIR]

Each case is a file built from real records (tests/data and ../shared/corpus)
that are mutated (keys deleted, types changed, strings truncated, values
wrapped in lists or nulled), replaced by random JSON, truncated at a random
byte, interleaved with another format's records, or duplicated. The file is
loaded with format detection and with every reader forced; anything raised
other than ``LoadError`` is a finding. ``--analysis`` also runs the timeline,
the last request's breakdown and the JSON report on what loaded. Findings are
grouped by exception and location; one reproducer per group is kept in DIR.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mutations import make_case  # noqa: E402

from ctxviewer.ingest import READERS, LoadError, load  # noqa: E402
from ctxviewer.ingest.loader import READER_ERROR  # noqa: E402


class ReaderError(Exception):
    """A record a reader raised on (load skipped it): grouped by its message."""


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if "ctxviewer" in f.filename] or frames
    f = own[-1]
    return f"{Path(f.filename).name}:{f.lineno} {f.name}"


def check(path: Path, analysis: bool) -> list[tuple[str, BaseException]]:
    """Load ``path`` every way; returns (how, exception) for each crash."""
    found: list[tuple[str, BaseException]] = []
    for fmt in [None, *(r.name for r in READERS)]:
        try:
            session = load(str(path), format=fmt)
        except LoadError:
            continue
        except Exception as e:  # noqa: BLE001 - that is what we look for
            found.append((f"load(format={fmt})", e))
            continue
        for skip in session.skipped:  # caught by load's safety net: still a reader bug
            if skip.reason.startswith(READER_ERROR):
                found.append((f"load(format={fmt}) line {skip.line}", ReaderError(skip.reason)))
        if analysis:
            try:
                from ctxviewer.analysis.analysis import Analysis
                from ctxviewer.analysis.report import report_json

                report_json(Analysis(session))
            except Exception as e:  # noqa: BLE001
                found.append((f"report_json(format={fmt})", e))
    return found


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--analysis", action="store_true")
    p.add_argument("--keep", default="/tmp/ctxviewer-fuzz", help="reproducers go here")
    args = p.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rnd = random.Random(seed)
    keep = Path(args.keep)
    groups: dict[str, tuple[int, str, str]] = {}
    cases = 0
    deadline = time.monotonic() + args.seconds
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "case.jsonl"
        while time.monotonic() < deadline:
            what = make_case(rnd, path)
            cases += 1
            for how, exc in check(path, args.analysis):
                key = (
                    str(exc)[len(READER_ERROR) + 2 :][:70]
                    if isinstance(exc, ReaderError)
                    else f"{type(exc).__name__} at {_where(exc)}"
                )
                if key not in groups:
                    keep.mkdir(parents=True, exist_ok=True)
                    repro = keep / f"crash-{len(groups):03d}{path.suffix}"
                    shutil.copy(path, repro)
                    groups[key] = (0, f"{how}: {exc!s:.200} [{what}]", str(repro))
                n, detail, repro = groups[key]
                groups[key] = (n + 1, detail, repro)
    print(f"seed {seed}: {cases} cases in {args.seconds:.0f} s, {len(groups)} distinct crashes")
    for key, (n, detail, repro) in sorted(groups.items(), key=lambda kv: -kv[1][0]):
        print(f"- {key} (x{n}): {detail}\n  reproducer: {repro}")
    return 1 if groups else 0


if __name__ == "__main__":
    sys.exit(main())
