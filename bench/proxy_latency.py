"""How much latency does the recording proxy add to a small non-streamed call?

Starts a loopback fake upstream and ``ctxviewer proxy`` (each in its own
process, as in real use), then makes N small ``POST /v1/messages`` calls over
one keep-alive connection each way, alternating direct and proxied calls so
both see the same machine load. Prints median and p95 for both and the
difference (target: under 2 ms median added). Not a test: numbers depend on
the machine.

    python bench/proxy_latency.py [-n 300] [--body-kb 500]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def make_body(kb: int) -> bytes:
    """A Messages request of about ``kb`` KiB (agents send whole conversations)."""
    text = "ping " + "lorem ipsum dolor sit amet " * (kb * 1024 // 27)
    return json.dumps(
        {"model": "claude-bench", "max_tokens": 16, "messages": [{"role": "user", "content": text}]}
    ).encode()


HEADERS = {
    "content-type": "application/json",
    "x-api-key": "sk-ant-bench",
    "anthropic-version": "2023-06-01",
}
REPLY = {
    "id": "msg_bench",
    "type": "message",
    "role": "assistant",
    "model": "claude-bench",
    "content": [{"type": "text", "text": "pong"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 8, "output_tokens": 1},
}


def serve_upstream() -> None:
    """Role: the fake upstream. Prints its port, serves until killed."""
    import asyncio

    from aiohttp import web

    reply = json.dumps(REPLY).encode()

    async def messages(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(body=reply, content_type="application/json")

    async def main() -> None:
        app = web.Application()
        app.router.add_post("/v1/messages", messages)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        print(runner.addresses[0][1], flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


def _spawn(args: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, text=True, env=env)


def _read_until(proc: subprocess.Popen[str], prefix: str, limit: int = 20) -> str:
    assert proc.stdout is not None
    for _ in range(limit):
        line = proc.stdout.readline()
        if line.startswith(prefix):
            return line.strip()
    raise RuntimeError(f"no line starting with {prefix!r}")


def _call(conn: http.client.HTTPConnection, body: bytes) -> float:
    t0 = time.perf_counter()
    conn.request("POST", "/v1/messages", body=body, headers=HEADERS)
    response = conn.getresponse()
    response.read()
    elapsed = time.perf_counter() - t0
    if response.status != 200:
        raise RuntimeError(f"HTTP {response.status}")
    return elapsed * 1000


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1]


def measure(n: int, body: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        upstream = _spawn([__file__, "--serve-upstream"])
        proxy = None
        try:
            up_port = int(_read_until(upstream, ""))
            out = Path(tmp) / "bench.jsonl"
            proxy = _spawn(
                [
                    "-m",
                    "ctxviewer",
                    "proxy",
                    "--port",
                    "0",
                    "--quiet",
                    "--out",
                    str(out),
                    "--upstream",
                    f"http://127.0.0.1:{up_port}",
                ]
            )
            base = _read_until(proxy, "export ANTHROPIC_BASE_URL=").split("=", 1)[1]
            proxy_port = int(base.rsplit(":", 1)[1])
            _run(n, body, up_port, proxy_port, out)
        finally:
            for proc in (proxy, upstream):
                if proc is not None:
                    proc.terminate()
                    proc.wait(timeout=10)


def _run(n: int, body: bytes, up_port: int, proxy_port: int, out: Path) -> None:
    direct = http.client.HTTPConnection("127.0.0.1", up_port)
    proxied = http.client.HTTPConnection("127.0.0.1", proxy_port)
    for _ in range(30):  # warm up: connections, imports, caches
        _call(direct, body)
        _call(proxied, body)
    d_times, p_times = [], []
    for _ in range(n):
        d_times.append(_call(direct, body))
        p_times.append(_call(proxied, body))
    lines = sum(1 for _ in out.open("rb")) - 1
    d_med, p_med = statistics.median(d_times), statistics.median(p_times)
    d_p95, p_p95 = _p95(d_times), _p95(p_times)
    print(
        f"{n} calls each way, {len(body) / 1024:.1f} KiB requests, keep-alive, "
        f"{lines} exchanges recorded"
    )
    print(f"direct   median {d_med:6.2f} ms   p95 {d_p95:6.2f} ms")
    print(f"proxied  median {p_med:6.2f} ms   p95 {p_p95:6.2f} ms")
    print(
        f"added    median {p_med - d_med:6.2f} ms   p95 {p_p95 - d_p95:6.2f} ms"
        f"   (target: median under 2 ms)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=300, help="calls each way (default 300)")
    parser.add_argument(
        "--body-kb",
        type=int,
        default=0,
        help="pad each request to about this many KiB (default: tiny)",
    )
    parser.add_argument("--serve-upstream", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_upstream:
        serve_upstream()
    else:
        measure(args.n, make_body(args.body_kb))


if __name__ == "__main__":
    main()
