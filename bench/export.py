"""``export --parquet`` against ``report --json`` on the same files, in the same run.

    python bench/export.py [FILE ...] [--big] [--repeat 3]

Without FILE: the bundled demo and the biggest transcripts and trace of the shared
corpus (../shared/corpus, skipped when absent). ``--big`` adds the 223 MB trace
(/tmp/ctxviewer-big-trace-600.jsonl, generated with ``tools/make_big_trace.py`` when
it is not there yet). Each command runs ``--repeat`` times as a fresh process (imports
and loading included, as a user runs it), in turn; the best time of each is kept.

``report --json`` computes the breakdown of one request; ``export`` computes it for
every request (and the costs, the summary, and writes four Parquet files), so the
ratio is the price of a breakdown per request. The target: export at most 3x
``report --json`` on the big trace, where start-up no longer hides it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CORPUS = REPO.parent / "shared" / "corpus"
BIG = Path("/tmp/ctxviewer-big-trace-600.jsonl")
TARGET = 3.0
CORPUS_FILES = (  # the largest of each kind
    "claude-code/marot__spotter__test_fixtures_transcripts_fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl",
    "claude-code/handgemacht-ai__claude-code-log__test_test_data_real_projects_-src-deep-manifest_"
    "a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl",
    "claude-code/d-kimuson__claude-code-viewer__mock-global-claude-dir_projects_sample-project_"
    "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
    "claude-trace/badlogic__lemmy__apps_claude-trace_test_test-traffic.jsonl",
)


def _time(args: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "ctxviewer.cli", *args], check=True, capture_output=True, text=True
    )
    return time.perf_counter() - start, done.stdout


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="*")
    p.add_argument("--big", action="store_true", help=f"add the 223 MB trace ({BIG})")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    files = [Path(f) for f in args.files]
    if not files:
        files = [REPO / "resources" / "demo-session.jsonl.xz"]
        files += [CORPUS / f for f in CORPUS_FILES if (CORPUS / f).exists()]
    if args.big:
        if not BIG.exists():
            print(f"generating {BIG} ...", flush=True)
            subprocess.run(
                [
                    sys.executable,
                    str(REPO / "tools" / "make_big_trace.py"),
                    str(BIG),
                    "--requests",
                    "600",
                ],
                check=True,
            )
        files.append(BIG)
    print(f"{'file':<44} {'MB':>6} {'report --json':>14} {'export':>8} {'ratio':>6}  rows")
    worst = 0.0
    with tempfile.TemporaryDirectory(prefix="ctxviewer-bench-export-") as out:
        for path in files:
            report, export, summary = [], [], ""
            for _ in range(args.repeat):
                report.append(_time(["report", str(path), "--json"])[0])
                took, summary = _time(["export", str(path), "--parquet", out])
                export.append(took)
            ratio = min(export) / min(report)
            if path == files[-1] or path == BIG:
                worst = ratio
            rows = summary.split(": ", 1)[-1].split(" (")[0]
            print(
                f"{path.name[:44]:<44} {path.stat().st_size / 1e6:>6.1f} "
                f"{min(report):>12.3f} s {min(export):>6.3f} s {ratio:>5.2f}x  {rows}"
            )
    print(
        f"best of {args.repeat} runs each; last file's ratio {worst:.2f} (target <= {TARGET} "
        "on the big trace)"
    )
    return 0 if not args.big or worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
