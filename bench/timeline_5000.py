"""How fast the timeline draws 5,000 requests, against a 500-request baseline.

Run: ``QT_QPA_PLATFORM=offscreen python bench/timeline_5000.py``

Prints, per size, the median time of ``set_timeline`` (data + items), of one
full render (``grab()``), of ``set_thresholds`` (a policy switch: lines,
tier colours, what-if replay) and of one render after a zoom, plus the ratio
5,000 / 500. The target is "stays smooth": the 5,000 render should be a
small multiple of the baseline, not ten times it (downsampling, clip to view).
"""

from __future__ import annotations

import ctypes
import os
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QApplication

from ctxviewer.analysis.thresholds import thresholds, tier
from ctxviewer.analysis.timeline import Point
from ctxviewer.gui.timeline.plot import TimelinePlot

REPEAT = 9
T0 = datetime(2026, 1, 1, tzinfo=UTC)
POLICIES = [thresholds(200_000, p) for p in ("qwen", "claude-code", "shannon", "qwen-legacy")]


def pin_singletons() -> None:
    """PySide6 6.12.0 on CPython < 3.12 drops references to None/True/False on
    void Qt calls; without this a long run aborts (see the timeline tests)."""
    if sys.version_info < (3, 12):
        for obj in (None, True, False):
            ref = ctypes.c_ssize_t.from_address(id(obj))
            ref.value = max(ref.value, 1 << 48)


def synthetic(n: int) -> list[Point]:
    """A session of ``n`` requests: main turns climbing to auto-compaction and
    dropping back, every 20th a sub-agent call, every 25th a side call."""
    t = thresholds(200_000)
    out, size = [], 20_000
    for i in range(n):
        ts = (T0 + timedelta(seconds=7 * i)).isoformat()
        if i % 25 == 3:
            out.append(
                Point(i, ts, "haiku", "auxiliary", False, 300, 280, 5, 0, 0, 300, "safe", ())
            )
            continue
        if i % 20 == 7:
            out.append(
                Point(
                    i,
                    ts,
                    "m",
                    "subagent",
                    True,
                    9_000 + i % 7 * 500,
                    8_500,
                    50,
                    8_000,
                    500,
                    500,
                    "safe",
                    (),
                )
            )
            continue
        events: tuple[str, ...] = ()
        size += 150 + (i * 7919) % 900
        if size >= 170_000:
            size, events = 30_000, ("compact_boundary",)
        api = None if i % 97 == 0 else size
        out.append(
            Point(
                i,
                ts,
                "m",
                "main",
                False,
                api,
                int(size * 0.92),
                40 + i % 300,
                size - 800,
                600,
                200,
                tier(size, t),
                events,
            )
        )
    return out


def median_ms(fn, repeat: int = REPEAT) -> float:
    times = []
    for k in range(repeat):
        start = time.perf_counter()
        fn(k)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def measure(plot: TimelinePlot, points: list[Point]) -> dict[str, float]:
    vb = plot.getPlotItem().vb
    out = {}
    out["set_timeline"] = median_ms(lambda k: plot.set_timeline(points, POLICIES[0]))
    out["render"] = median_ms(lambda k: plot.grab())
    out["set_thresholds"] = median_ms(lambda k: plot.set_thresholds(POLICIES[k % 4]), 8)
    out["thresholds+render"] = median_ms(
        lambda k: (plot.set_thresholds(POLICIES[k % 4]), plot.grab()), 8
    )
    n = len(points)
    out["zoom+render"] = median_ms(
        lambda k: (vb.setXRange(n * 0.4, n * 0.4 + n / (4 + k), padding=0), plot.grab())
    )
    plot.reset_view()
    center = vb.mapViewToScene(QPointF(n / 2, 100_000))
    out["hover pick"] = median_ms(lambda k: plot._on_scene_mouse_moved(center), 20)
    return out


def main() -> int:
    pin_singletons()
    app = QApplication.instance() or QApplication([])
    plot = TimelinePlot(dark=False)
    plot.resize(1400, 600)
    plot.show()
    app.processEvents()
    plot.set_timeline(synthetic(50), POLICIES[0])  # warm up imports and caches
    plot.grab()
    base, big = synthetic(500), synthetic(5_000)
    results = {500: measure(plot, base), 5_000: measure(plot, big)}
    print(f"timeline bench, PySide6 window 1400x600, median of {REPEAT}+ runs (ms)")
    print(f"{'':20s}{'500 (baseline)':>16s}{'5,000':>12s}{'ratio':>8s}")
    for key in results[500]:
        a, b = results[500][key], results[5_000][key]
        print(f"{key:20s}{a:16.1f}{b:12.1f}{b / a if a else float('nan'):8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
