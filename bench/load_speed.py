"""Load speed: ctxviewer's reader against a raw orjson parse of the same file.

    python bench/load_speed.py [FILE ...]

Prints MB/s for a raw ``orjson.loads`` of every line (the baseline, measured
in the same run), for ``ctxviewer.ingest.load``, and for load + estimating
every request's prompt (the timeline), with the ratios. Defaults to the
largest files of ../shared/corpus.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from baseline import raw_parse

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.ingest import load

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"


def best_of(n: int, fn) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def full(path: str) -> None:
    a = Analysis(load(path), "qwen")
    a.estimator.clear_cache()
    _ = a.timeline


def main(paths: list[str]) -> None:
    if not paths:
        paths = [
            str(p) for p in sorted(CORPUS.glob("*/*.jsonl"), key=lambda p: -p.stat().st_size)[:3]
        ]
    print(
        f"{'file':<44} {'MB':>6} {'raw MB/s':>9} {'load MB/s':>10} {'ratio':>6} "
        f"{'+timeline':>10} {'ratio':>6}"
    )
    for path in paths:
        mb = Path(path).stat().st_size / 1e6
        raw = best_of(3, lambda path=path: raw_parse(path))
        ld = best_of(3, lambda path=path: load(path))
        tl = best_of(3, lambda path=path: full(path))
        print(
            f"{Path(path).name[:44]:<44} {mb:6.2f} {mb / raw:9.1f} {mb / ld:10.1f} "
            f"{ld / raw:6.2f} {mb / tl:10.1f} {tl / raw:6.2f}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
