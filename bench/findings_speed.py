"""``findings --json`` against ``report`` on the same big trace, in the same run.

    python bench/findings_speed.py [FILE] [--requests N] [--repeat 3]

Without FILE the trace is /tmp/ctxviewer-big-trace-N.jsonl, generated with
``tools/make_big_trace.py`` only when it is not there yet (N = 600 by default: the
223 MB trace). Each command (``report``,
``report --json``, ``findings --json``) runs ``--repeat`` times as a fresh
process (imports and loading included, as a user runs it), in turn; the best
time of each is kept. Prints the times and the ratios; the target is findings
--json at most 1.5x report.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET = 1.5


def _time(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "ctxviewer.cli", *args], check=True, stdout=subprocess.DEVNULL
    )
    return time.perf_counter() - start


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("file", nargs="?")
    p.add_argument("--requests", type=int, default=600)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    path = Path(args.file or f"/tmp/ctxviewer-big-trace-{args.requests}.jsonl")
    if not path.exists():
        print(f"generating {path} ...", flush=True)
        subprocess.run(
            [
                sys.executable,
                str(HERE.parent / "tools" / "make_big_trace.py"),
                str(path),
                "--requests",
                str(args.requests),
            ],
            check=True,
        )
    print(f"{path}: {path.stat().st_size / 1e6:.0f} MB")
    runs: dict[str, list[float]] = {"report": [], "report --json": [], "findings --json": []}
    for _ in range(args.repeat):
        for name, times in runs.items():
            command, *flags = name.split()
            times.append(_time([command, str(path), *flags]))
    best = {name: min(times) for name, times in runs.items()}
    for name, times in runs.items():
        print(
            f"{name:<16} {best[name]:.3f} s (best of {args.repeat}: "
            f"{', '.join(f'{x:.3f}' for x in times)})"
        )
    ratio = best["findings --json"] / best["report"]
    print(
        f"ratio findings --json / report {ratio:.2f} (target <= {TARGET}); "
        f"/ report --json {best['findings --json'] / best['report --json']:.2f}"
    )
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
