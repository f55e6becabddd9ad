"""Does recording a huge streamed answer hold up the other streams going through the proxy?

Starts the tests' fake upstream and ``ctxviewer proxy`` (each in its own
process, as in real use). A slow "drip" stream (an event every 20 ms) is read
through the proxy twice: alone (the baseline), and while a ``--mb`` MB streamed
answer goes through and is recorded. Prints the longest gap between two
chunks of the drip stream in both runs and their ratio (target: recording
never blocks forwarding, so the gap stays near the baseline), and the proxy
process's peak memory (VmHWM) before and after the big answer.

    python bench/proxy_recording.py [--mb 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

REPO = Path(__file__).resolve().parents[1]
FAKES = REPO / "tests" / "proxy"
UPSTREAM = (
    "import sys; sys.path.insert(0, sys.argv[1]); from proxy_fakes import FakeUpstream;"
    "f = FakeUpstream(); f.server.start(); print(f.server.port, flush=True);"
    "sys.stdin.read()"
)
HEADERS = {
    "x-api-key": "sk-ant-bench",
    "anthropic-version": "2023-06-01",
    "content-type": "application/json",
}


def _body(text: str) -> bytes:
    return json.dumps(
        {
            "model": "claude-bench",
            "max_tokens": 16,
            "stream": True,
            "messages": [{"role": "user", "content": text}],
        }
    ).encode()


def _hwm_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


async def drip(base: str, s: aiohttp.ClientSession) -> float:
    """Read a drip stream; the longest gap between two chunks, in seconds."""
    gaps, last = [], None
    async with s.post(
        f"{base}/v1/messages", data=_body("drip " * 300), headers={**HEADERS, "x-fake-mode": "drip"}
    ) as resp:
        async for _chunk in resp.content.iter_any():
            now = time.perf_counter()
            if last is not None:
                gaps.append(now - last)
            last = now
    return max(gaps)


async def huge(base: str, s: aiohttp.ClientSession, size: int) -> None:
    async with s.post(
        f"{base}/v1/messages",
        data=_body("huge"),
        headers={**HEADERS, "x-fake-mode": "huge", "x-fake-size": str(size)},
    ) as r:
        async for _chunk in r.content.iter_any():
            pass


async def run(base: str, size: int) -> tuple[float, float]:
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(timeout=timeout) as s:
        alone = await drip(base, s)
        big = asyncio.create_task(huge(base, s, size))
        await asyncio.sleep(0.05)
        during = await drip(base, s)
        await big
    return alone, during


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mb", type=int, default=30)
    args = p.parse_args(argv)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with (
        tempfile.TemporaryDirectory() as folder,
        subprocess.Popen(
            [sys.executable, "-c", UPSTREAM, str(FAKES)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        ) as upstream,
    ):
        assert upstream.stdout is not None
        port = int(upstream.stdout.readline())
        out = Path(folder) / "rec.jsonl"
        proxy = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ctxviewer",
                "proxy",
                "--port",
                "0",
                "--quiet",
                "--out",
                str(out),
                "--upstream",
                f"http://127.0.0.1:{port}",
            ],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        try:
            assert proxy.stdout is not None
            base = ""
            while not base:
                line = proxy.stdout.readline()
                if line.startswith("export ANTHROPIC_BASE_URL="):
                    base = line.strip().split("=", 1)[1]
            t = time.perf_counter()
            alone, during = asyncio.run(run(base, args.mb * 1024 * 1024))
            while out.read_bytes().count(b"\n") < 4:  # meta + 3 exchanges written
                time.sleep(0.05)
            elapsed = time.perf_counter() - t
            peak = _hwm_mb(proxy.pid)
        finally:
            proxy.terminate()
            proxy.wait(timeout=20)
            upstream.kill()
        size_mb = out.stat().st_size / 1e6
    print(f"{args.mb} MB streamed answer, recording {size_mb:.1f} MB, all done in {elapsed:.1f} s")
    print(
        f"longest gap in a 20 ms drip stream: alone {alone * 1000:.0f} ms, "
        f"while the big answer is recorded {during * 1000:.0f} ms "
        f"({during / alone:.1f}x)"
    )
    print(f"proxy peak memory: {peak:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
