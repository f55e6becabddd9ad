"""Large-session targets: report time vs a raw parse, peak memory vs file size.

    python bench/big_session.py [FILE] [--requests N] [--repeat 3]

Without FILE a trace is generated with ``tools/make_big_trace.py`` into
/tmp/ctxviewer-big-trace-N.jsonl (or at FILE when it does not exist). Each
measurement runs in its own subprocess so peak memory (VmHWM) and imports do
not pollute each other:

- ``import``: a process that only imports ctxviewer's core (baseline);
- ``raw``: ``orjson.loads`` of every line, results dropped (the baseline);
- ``raw8k``: the same through Python's default 8 KiB read buffer (the
  baseline of earlier measurements, slower on long lines: shown for reference);
- ``report``: ``ctxviewer report FILE --json`` in-process, output discarded;
- ``timeline``: ``Analysis(load(FILE)).timeline`` + breakdown of the last request;
- ``gui``: the window opening FILE (``gui_first_paint.py``, Breakdown tab in
  front, 1400x900): time to the first requests shown, to all of it, the
  longest event-loop stall; its peak memory includes Qt and both BPE tables.

Targets: report within 0.5x the raw parse (the baseline reads lines through a
4 MiB buffer, as ctxviewer does); peak memory below the file size. The
package is byte-compiled first, as pip does on install, so import times are
those of an installed ctxviewer even where PYTHONDONTWRITEBYTECODE is set.
Times are the best of ``--repeat`` runs; memory is the peak of those runs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _hwm_kb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _child(mode: str, path: str) -> None:
    """Run one measurement in this (child) process and print JSON."""
    t0 = time.perf_counter()
    if mode == "import":
        import ctxviewer.analysis.report  # noqa: F401
        import ctxviewer.ingest  # noqa: F401
    elif mode == "raw8k":
        from baseline import raw_parse

        raw_parse(path, buffering=-1)
    elif mode == "raw":
        from baseline import raw_parse  # bench/ is on sys.path: this script runs from it

        raw_parse(path)
    elif mode == "report":
        import contextlib
        import io

        from ctxviewer.cli import main

        sink = io.StringIO()
        with contextlib.redirect_stdout(sink):
            rc = main(["report", path, "--json"])
        if rc != 0:
            raise SystemExit(f"report exited {rc}")
    elif mode == "timeline":
        from ctxviewer.analysis.analysis import Analysis
        from ctxviewer.ingest import load

        a = Analysis(load(path))
        _ = a.timeline
        a.breakdown(a.resolve_index("last"))
    else:
        raise SystemExit(f"unknown mode {mode}")
    seconds = time.perf_counter() - t0
    print(json.dumps({"seconds": seconds, "hwm_kb": _hwm_kb()}))


def measure(mode: str, path: str, repeat: int) -> tuple[float, int]:
    best, peak = float("inf"), 0
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, __file__, "--child", mode, path],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        data = json.loads(out.strip().splitlines()[-1])
        best = min(best, data["seconds"])
        peak = max(peak, data["hwm_kb"])
    return best, peak * 1024


def gui_probe(path: str) -> dict:
    """One run of bench/gui_first_paint.py's probe, Breakdown tab in front."""
    sys.path.insert(0, str(HERE))
    from gui_first_paint import probe

    return probe(Path(path), 0, (1400, 900))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("file", nargs="?")
    p.add_argument("--requests", type=int, default=600, help="when generating")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.file is None:  # the same file bench/gui_first_paint.py generates
        args.file = f"/tmp/ctxviewer-big-trace-{args.requests}.jsonl"
    if args.child:
        _child(args.child, args.file)
        return 0
    if not os.path.exists(args.file):
        sys.path.insert(0, str(HERE.parent / "tools"))
        from make_big_trace import generate

        t = time.perf_counter()
        generate(args.file, args.requests)
        print(f"generated {args.file} in {time.perf_counter() - t:.1f} s")
    import compileall

    compileall.compile_dir(str(HERE.parent / "ctxviewer"), quiet=1)
    size = os.path.getsize(args.file)
    mb = size / 1e6
    print(f"file: {args.file}  {mb:.1f} MB")
    results = {
        m: measure(m, args.file, args.repeat)
        for m in ("import", "raw8k", "raw", "report", "timeline")
    }
    raw_s = results["raw"][0]
    print(f"{'step':<10} {'seconds':>8} {'MB/s':>7} {'x raw':>6} {'peak MB':>8} {'x file':>7}")
    for mode, (secs, peak) in results.items():
        rate = f"{mb / secs:7.1f}" if mode != "import" else f"{'-':>7}"
        print(
            f"{mode:<10} {secs:8.2f} {rate} {secs / raw_s:6.2f} {peak / 1e6:8.1f} "
            f"{peak / size:7.2f}"
        )
    rep_s, rep_peak = results["report"]
    ok_time = rep_s <= 0.5 * raw_s
    ok_mem = rep_peak < size
    gui = [gui_probe(args.file) for _ in range(args.repeat)]
    first = min(g["first_paint_s"] for g in gui)
    whole = min(g["load_s"] for g in gui)
    stall = max(g["max_gap_ms"] for g in gui)
    gui_peak = max(g["hwm_kb"] for g in gui) * 1024
    print(
        f"{'gui first':<10} {first:8.2f} {'':>7} {first / raw_s:6.2f} "
        f"{gui_peak / 1e6:8.1f} {gui_peak / size:7.2f}"
    )
    print(
        f"{'gui all':<10} {whole:8.2f} {mb / whole:7.1f} {whole / raw_s:6.2f}   "
        f"(longest event-loop stall {stall:.0f} ms; bench/gui_first_paint.py: every tab)"
    )
    print(f"target report <= 0.5x raw: {rep_s / raw_s:.2f}x  {'OK' if ok_time else 'MISSED'}")
    print(
        f"target peak memory < file size: {rep_peak / 1e6:.0f} MB vs {mb:.0f} MB  "
        f"{'OK' if ok_mem else 'MISSED'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
