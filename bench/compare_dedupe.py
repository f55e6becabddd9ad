"""Counting a trace costs time linear in its distinct content, not in its file size.

Builds a synthetic claude-trace log where every request repeats the whole
history (request k has k+1 messages), for N=100 and N=200 requests: the file
grows ~4x, the distinct content ~2x. Prints the time of ``compare(...,
["cl100k"])`` with the estimator's content cache (cleared before each run)
and the time of a cache-less count of the same requests.

    python bench/compare_dedupe.py
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from pathlib import Path

from ctxviewer.analysis.compare.scoring import compare
from ctxviewer.analysis.tokens.estimators import get_estimator
from ctxviewer.ingest import load

WORDS = [f"w{i}" for i in range(5000)] + ["the", "file", "def", "return", "{", "}", "(", ")"]


def _sse(tokens: int, i: int) -> str:
    start = {
        "type": "message_start",
        "message": {
            "id": f"msg_{i}",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [],
            "usage": {"input_tokens": tokens, "output_tokens": 1},
        },
    }
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn"},
        "usage": {"input_tokens": tokens, "output_tokens": 1},
    }
    return "".join(
        f"event: {e['type']}\ndata: {json.dumps(e)}\n\n"
        for e in (start, delta, {"type": "message_stop"})
    )


def write_trace(path: Path, n: int, seed: int = 1) -> None:
    rnd = random.Random(seed)
    messages: list[dict] = []
    with path.open("w") as f:
        for i in range(n):
            text = " ".join(rnd.choice(WORDS) for _ in range(400))
            messages.append(
                {
                    "role": "user" if i % 2 == 0 else "assistant",
                    "content": [{"type": "text", "text": text}],
                }
            )
            msgs = (
                messages
                if messages[-1]["role"] == "user"
                else messages + [{"role": "user", "content": [{"type": "text", "text": "go on"}]}]
            )
            body = {
                "model": "claude-sonnet-4-5",
                "max_tokens": 100,
                "system": [{"type": "text", "text": "You are a test agent."}],
                "messages": msgs,
            }
            rec = {
                "request": {
                    "timestamp": 1.0 + i,
                    "method": "POST",
                    "url": "https://api.anthropic.com/v1/messages",
                    "headers": {},
                    "body": body,
                },
                "response": {
                    "timestamp": 1.5 + i,
                    "status_code": 200,
                    "headers": {"content-type": "text/event-stream"},
                    "body_raw": _sse(700 * (i + 1), i),
                },
                "logged_at": "2026-01-01T00:00:00Z",
            }
            f.write(json.dumps(rec) + "\n")


def run(n: int, tmp: Path) -> dict[str, float]:
    path = tmp / f"trace{n}.jsonl"
    write_trace(path, n)
    t0 = time.perf_counter()
    session = load(str(path))
    t_load = time.perf_counter() - t0
    est = get_estimator("cl100k")
    est.count("warm up the BPE")  # loading the BPE file is not part of the measure
    est.clear_cache()
    t0 = time.perf_counter()
    c = compare(session, ["cl100k"])
    t_cached = time.perf_counter() - t0
    assert len(c.rows) == n
    t0 = time.perf_counter()
    for r in session.requests:
        sum(est.rule(b.text) for b in r.system)
        sum(est.rule(b.text) for m in r.messages for b in m.blocks if b.text)
    t_nocache = time.perf_counter() - t0
    distinct = len({b.text for r in session.requests for m in r.messages for b in m.blocks})
    total = sum(len(m.blocks) for r in session.requests for m in r.messages)
    return {
        "n": n,
        "file_mb": path.stat().st_size / 1e6,
        "distinct_blocks": distinct,
        "total_blocks": total,
        "load_s": t_load,
        "compare_s": t_cached,
        "nocache_s": t_nocache,
    }


def main() -> int:
    with tempfile.TemporaryDirectory() as d:
        a, b = run(100, Path(d)), run(200, Path(d))
    print(
        f"{'N':>5} {'file MB':>8} {'distinct':>9} {'blocks':>7} {'load s':>7} "
        f"{'compare s':>10} {'no-cache s':>11}"
    )
    for x in (a, b):
        print(
            f"{x['n']:>5} {x['file_mb']:>8.1f} {x['distinct_blocks']:>9} "
            f"{x['total_blocks']:>7} {x['load_s']:>7.2f} {x['compare_s']:>10.3f} "
            f"{x['nocache_s']:>11.3f}"
        )
    print(
        f"ratio 200/100: file {b['file_mb'] / a['file_mb']:.2f}x, distinct "
        f"{b['distinct_blocks'] / a['distinct_blocks']:.2f}x, compare (cached) "
        f"{b['compare_s'] / a['compare_s']:.2f}x, "
        f"no-cache {b['nocache_s'] / a['nocache_s']:.2f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
