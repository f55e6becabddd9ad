"""``report`` and ``insights`` against a baseline commit, in the same run.

    python bench/cost_speed.py [--baseline REF] [--small FILE] [--big FILE] [--repeat 5]

The baseline is the code of REF (default: where this branch left main, ``git
merge-base HEAD main``), unpacked with ``git archive`` into a temporary folder and
run from there with the same interpreter and packages (``PYTHONPATH`` puts it
before the installed ctxviewer). Each command runs as a fresh process, as a user
starts it, ``--json`` to /dev/null, in turns (one of each per round) so that the
machine's load meets both alike; the best of ``--repeat`` is kept, of the CPU
time (user + system: what the code costs on a machine others share) and of the
wall time. One untimed
run of each warms the page cache and ctxviewer's price snapshot (what a user's
second run finds). Files: a small Claude Code transcript of the corpus and the 223
MB trace of ``tools/make_big_trace.py`` (made when missing). Target: every command
within 10% of the baseline's CPU time.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SMALL = (
    ROOT.parent
    / "shared"
    / "corpus"
    / "claude-code"
    / "lanegrid__agtrace__samples-tmp_.claude_projects_-Users-zawakin-agent-sample_"
    "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9.jsonl"
)
BIG = Path("/tmp/ctxviewer-big-trace-600.jsonl")
TARGET = 1.10


def unpack(ref: str, folder: Path) -> None:
    """The tree of ``ref`` in ``folder`` (a tar of ``git archive``; links kept)."""
    tar = folder / "tree.tar"
    with tar.open("wb") as out:
        subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True, stdout=out)
    with tarfile.open(tar) as t:
        t.extractall(folder / "tree", filter="tar")


def run(code: Path, args: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run: on a machine others share, the CPU time (user +
    system of the process) is what the code costs, the wall time what the load left."""
    # run from the code's folder: ``-m`` puts the working folder first on sys.path
    env = dict(os.environ, PYTHONPATH=str(code))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "ctxviewer", *args],
        check=True,
        env=env,
        cwd=code,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--baseline", help="the commit to compare with (default: merge-base with main)")
    p.add_argument("--small", default=str(SMALL))
    p.add_argument("--big", default=str(BIG))
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args(argv)
    ref = (
        args.baseline
        or subprocess.run(
            ["git", "-C", str(ROOT), "merge-base", "HEAD", "main"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    if not Path(args.big).is_file():
        subprocess.run(
            [sys.executable, str(ROOT / "tools" / "make_big_trace.py"), args.big], check=True
        )
    with tempfile.TemporaryDirectory(prefix="ctxviewer-cost-bench-") as tmp:
        unpack(ref, Path(tmp))
        sides = {"baseline": Path(tmp) / "tree", "this": ROOT}
        for side, code in sides.items():  # each side runs its own code
            where = subprocess.run(
                [sys.executable, "-c", "import ctxviewer; print(ctxviewer.__file__)"],
                check=True,
                capture_output=True,
                text=True,
                cwd=code,
                env=dict(os.environ, PYTHONPATH=str(code)),
            ).stdout
            assert where.startswith(str(code)), (side, where)
        cases = [
            (f"{cmd} {label}", [cmd, path, "--json"])
            for label, path in (("small", args.small), ("big", args.big))
            for cmd in ("report", "insights")
        ]
        for _, cmd in cases:  # warm-up: page cache, price snapshot
            for code in sides.values():
                run(code, cmd)
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for _ in range(args.repeat):
            for name, cmd in cases:
                for side, code in sides.items():
                    times.setdefault((name, side), []).append(run(code, cmd))
    print(f"baseline {ref[:10]}, best of {args.repeat}; small: {Path(args.small).name[:60]}")
    worst = 0.0
    print(f"{'':16} {'CPU (user+sys)':>34}   {'wall':>32}")
    for name, _ in cases:
        cpu = [min(t[1] for t in times[(name, side)]) for side in ("baseline", "this")]
        wall = [min(t[0] for t in times[(name, side)]) for side in ("baseline", "this")]
        worst = max(worst, cpu[1] / cpu[0])
        print(
            f"{name:16} {cpu[0]:6.3f} s -> {cpu[1]:6.3f} s {cpu[1] / cpu[0]:5.2f}x   "
            f"{wall[0]:6.3f} s -> {wall[1]:6.3f} s {wall[1] / wall[0]:5.2f}x"
        )
    print(
        f"target CPU <= {TARGET:.2f}x the baseline: {'OK' if worst <= TARGET else 'MISSED'} "
        f"(worst {worst:.2f}x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
