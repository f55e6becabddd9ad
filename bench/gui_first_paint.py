"""GUI first paint: how soon a big file shows, and how long the event loop stalls.

    python bench/gui_first_paint.py [FILE] [--requests N]

Opens FILE in a fresh app (a subprocess, offscreen) the way a user does and
prints the time to first paint (the first requests shown while the rest
loads), the total load time, the longest gap between 5 ms timer ticks on the
GUI thread and the number of gaps over 100 ms, next to a raw ``orjson.loads``
of every line of the same file (the baseline, measured in the same run).
Without FILE, a trace is generated with ``bench/make_big_trace.py`` into
/tmp (``--requests``, default 600: about 200 MB).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import json, os, sys, time
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtCore import QTimer
from ctxviewer.gui.app import build_main_window, create_app
app = create_app([])
window = build_main_window()
window.show()
ticks, painted, loaded, partials = [], [], [], []
timer = QTimer()
timer.setInterval(5)
timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
window.state.session_loaded.connect(lambda _a: painted.append(time.perf_counter() - start))
window.loader.partial.connect(lambda a: partials.append(len(a.session.requests)))
def report():
    timer.stop()
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    print(json.dumps(dict(
        first_paint_s=painted[0] if painted else None, load_s=loaded[0] if loaded else None,
        max_gap_ms=1000 * max(gaps, default=0.0), stalls_over_100ms=sum(g > 0.1 for g in gaps),
        partials=partials, requests=len(window.state.session.requests) if loaded else None)))
    app.quit()
def done(_a):
    loaded.append(time.perf_counter() - start)
    QTimer.singleShot(200, report)  # the final paint comes after loaded: count it
window.loader.loaded.connect(done)
window.loader.failed.connect(lambda _p, why: (print(why, file=sys.stderr), app.exit(1)))
start = time.perf_counter()
timer.start()
window.open_file(sys.argv[1])
app.exec()
"""


def orjson_seconds(path: Path) -> float:
    t = time.perf_counter()
    with open(path, "rb") as f:
        for line in f:
            if line.strip():
                orjson.loads(line)
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("file", nargs="?")
    p.add_argument("--requests", type=int, default=600, help="for a generated trace")
    args = p.parse_args(argv)
    path = Path(args.file) if args.file else Path(f"/tmp/ctxviewer-big-trace-{args.requests}.jsonl")
    if not path.exists():
        print(f"generating {path} ({args.requests} requests)…", flush=True)
        subprocess.run([sys.executable, str(ROOT / "bench" / "make_big_trace.py"), str(path),
                        "--requests", str(args.requests)], check=True)
    mb = path.stat().st_size / 1e6
    raw = orjson_seconds(path)
    proc = subprocess.run([sys.executable, "-c", PROBE, str(path)], check=False,
                          capture_output=True,
                          text=True)
    if proc.returncode != 0:
        print(proc.stderr[-2000:], file=sys.stderr)
        return 1
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    parts = r["partials"]
    print(f"{path.name}: {mb:.0f} MB, {r['requests']} requests")
    print(f"  raw orjson parse      {raw:7.2f} s   (baseline)")
    print(f"  time to first paint   {r['first_paint_s']:7.2f} s   "
          f"({len(parts)} partial views, first with {parts[0] if parts else 0} requests)")
    print(f"  total load            {r['load_s']:7.2f} s   ({r['load_s'] / raw:.1f}x orjson)")
    print(f"  longest stall         {r['max_gap_ms']:7.0f} ms")
    print(f"  stalls over 100 ms    {r['stalls_over_100ms']:7d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
