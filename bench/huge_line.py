"""Peak memory of ``report`` on a trace whose one record is a single huge line.

A tool result holding a whole file (or a base64 image) can make one line of
a trace tens of megabytes long. Writes such a claude-trace line (``--mb`` MB
of text in one tool result), then runs ``ctxviewer report`` on it in a fresh
process and prints its peak memory (VmHWM) next to that of a process that
only reads the line and parses it with orjson (the baseline), and the time.

    python bench/huge_line.py [--mb 60]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[1]
PEAK = (
    "import resource, sys, runpy; sys.argv = sys.argv[1:]; t = __import__('time')"
    ".perf_counter()\ntry:\n    runpy.run_module(sys.argv[0], run_name='__main__')\n"
    "except SystemExit:\n    pass\nprint(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,"
    " __import__('time').perf_counter() - t, file=sys.stderr)"
)
RAW = (
    "import orjson, resource, sys, time; t = time.perf_counter(); "
    "orjson.loads(open(sys.argv[1], 'rb').read()); "
    "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.perf_counter() - t, "
    "file=sys.stderr)"
)


def write_trace(path: Path, mb: int) -> None:
    text = "lorem ipsum dolor sit amet, consectetur adipiscing elit. " * (mb * 20000)
    text = text[: mb * 1_000_000]
    record = {
        "request": {
            "timestamp": 1700000000,
            "method": "POST",
            "url": "https://api.anthropic.com/v1/messages",
            "headers": {},
            "body": {
                "model": "claude-sonnet-4",
                "max_tokens": 10,
                "messages": [
                    {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": "t", "content": text}],
                    }
                ],
            },
        },
        "response": {
            "status_code": 200,
            "body": {
                "id": "m",
                "type": "message",
                "role": "assistant",
                "content": [{"type": "text", "text": "ok"}],
                "usage": {"input_tokens": mb * 250_000, "output_tokens": 1},
            },
        },
        "logged_at": "2025-01-01T00:00:00Z",
    }
    path.write_bytes(orjson.dumps(record) + b"\n")


def run(args: list[str]) -> tuple[float, float]:
    err = (
        subprocess.run(
            [sys.executable, "-c", *args], check=True, capture_output=True, text=True, cwd=REPO
        )
        .stderr.strip()
        .splitlines()[-1]
    )
    kb, seconds = err.split()
    return int(kb) / 1024, float(seconds)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mb", type=int, default=60)
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "huge.jsonl"
        write_trace(path, a.mb)
        size = path.stat().st_size / 1e6
        t = time.perf_counter()
        raw_mb, raw_s = run([RAW, str(path)])
        rep_mb, rep_s = run([PEAK, "ctxviewer", "report", str(path), "--json"])
        del t
    print(f"one line of {size:.0f} MB")
    print(f"raw orjson parse   peak {raw_mb:6.0f} MB  {raw_s:5.2f} s")
    print(
        f"ctxviewer report   peak {rep_mb:6.0f} MB  {rep_s:5.2f} s  "
        f"({rep_mb / raw_mb:.2f}x the raw parse's memory, {rep_mb / size:.1f}x the line)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
