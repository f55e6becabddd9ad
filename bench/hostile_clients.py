"""The proxy and the OTLP receiver against a hostile local client (issue #33), measured.

Starts the tests' fake upstream, ``ctxviewer proxy`` and ``ctxviewer otel`` as
their own processes (as in real use, all on 127.0.0.1) and attacks them:

- compressed-body bombs (gzip 128 MiB and 2 GiB of NULs, nested gzip, deflate,
  br and zstd when installed, a gzip bomb of valid JSON, of ``{},`` and of packed
  protobuf zeros, which parse into millions of objects): each process's peak
  memory while the bomb is handled (VmRSS sampled every 5 ms) and the longest
  line written, against the peak of a normal call (the baseline, same run);
- how long a small export waits while a 1 GiB bomb is posted (vs. alone);
- request targets that try to lead off the upstream, counted by a decoy
  listener where they point;
- 3,000 half-sent connections (closed by the server?), and 1,100 of them
  against a server limited to 1,024 descriptors while a real client calls;
- clients hanging up mid-body, junk shaped like an export, invalid gzip;
- secrets by name and by shape: searched for in the files, the consoles and the
  answers.

Every real call made between the attacks must be recorded ("nothing lost").

    python bench/hostile_clients.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp

REPO = Path(__file__).resolve().parents[1]
FAKES = REPO / "tests" / "proxy"
UPSTREAM = (
    "import sys; sys.path.insert(0, sys.argv[1]); from proxy_fakes import FakeUpstream;"
    "f = FakeUpstream(); f.server.start(); print(f.server.port, flush=True);"
    "sys.stdin.read()"
)
KEY = "sk-ant-api03-" + "Bench7" * 15
HEADERS = {"x-api-key": KEY, "anthropic-version": "2023-06-01", "content-type": "application/json"}
BODY = json.dumps(
    {
        "model": "claude-bench",
        "max_tokens": 16,
        "messages": [{"role": "user", "content": "hello " * 2000}],
    }
).encode()
EXPORT = json.dumps(
    {
        "resourceLogs": [
            {
                "scopeLogs": [
                    {
                        "logRecords": [
                            {
                                "attributes": [
                                    {"key": "event.name", "value": {"stringValue": "api_request"}},
                                    {"key": "input_tokens", "value": {"intValue": 42}},
                                ]
                            }
                        ]
                    }
                ]
            }
        ]
    }
).encode()
SECRETS = {
    "x-jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJiZW5jaCJ9.YmVuY2gtc2lnbmF0dXJl",
    "x-pwd": "bench-pwd-value",
    "x-pass": "bench-pass-value",
    "x-access": "bench-access-value",
    "x-gateway-creds": "bench-creds-value",
    "x-custom": "Bearer " + KEY,
}
QUERY = "%6Bey=bench-q1&k%65y=bench-q2&sig=bench-q3&code=bench-q4&pwd=bench-q5&pass=bench-q6"


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


class Peak:
    """The highest VmRSS of ``pid`` while the ``with`` block runs (sampled every 5 ms)."""

    def __init__(self, pid: int) -> None:
        self.pid, self.mb, self._stop = pid, 0.0, threading.Event()

    def __enter__(self) -> Peak:  # noqa: PYI034 - not subclassed
        self.mb = rss_mb(self.pid)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(0.005):
            self.mb = max(self.mb, rss_mb(self.pid))

    def __exit__(self, *exc: object) -> None:
        time.sleep(0.3)  # the writer thread's line, after the answer
        self._stop.set()
        self._thread.join()


def longest_line(path: Path, since: int) -> int:
    with open(path, "rb") as f:
        f.seek(since)
        longest = 0
        for line in f:
            longest = max(longest, len(line))
    return longest


def zeros_gzip(size: int, layers: int = 1) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(64 << 20)
    out = [c.compress(block) for _ in range(size // len(block))]
    data = b"".join(out) + c.flush()
    for _ in range(layers - 1):
        data = gzip.compress(data, 9)
    return data


def _field(number: int, payload: bytes) -> bytes:
    def varint(n: int) -> bytes:
        out = bytearray()
        while True:
            byte, n = n & 0x7F, n >> 7
            out.append(byte | (0x80 if n else 0))
            if not n:
                return bytes(out)

    return varint(number << 3 | 2) + varint(len(payload)) + payload


def packed_protobuf(size: int) -> bytes:
    """An ExportMetricsServiceRequest whose one exponential histogram has ``size``
    packed bucket counts of 0 (a byte each)."""
    buckets = _field(2, bytes(size))
    return _field(1, _field(2, _field(2, _field(10, _field(1, _field(8, buckets))))))


class Server:
    """``python -m ctxviewer COMMAND`` on a free port; its console collected."""

    def __init__(self, command: str, args: list[str], cwd: str, limit: int | None = None) -> None:
        env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}

        def preexec() -> None:
            if limit:
                resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ctxviewer", command, "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=cwd,
            preexec_fn=preexec,
        )  # noqa: PLW1509 - a resource limit, set before exec
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline()
        self.url = first.split(" listening on ")[1].split()[0]
        self.port = int(self.url.rsplit(":", 1)[1])
        self.console: list[str] = [first]
        self._threads = [
            threading.Thread(target=self._pump, args=(s,), daemon=True)
            for s in (self.proc.stdout, self.proc.stderr)
        ]
        for t in self._threads:
            t.start()

    def _pump(self, stream: Any) -> None:
        for line in stream:
            self.console.append(line)

    def stop(self) -> str:
        self.proc.send_signal(2)
        self.proc.wait(timeout=60)
        for t in self._threads:
            t.join(timeout=10)
        return "".join(self.console)


async def post(
    url: str, data: bytes, headers: dict[str, str], timeout: float = 120
) -> tuple[int, bytes]:
    async with (
        aiohttp.ClientSession(auto_decompress=False) as s,
        s.post(
            url, data=data, headers=headers, timeout=aiohttp.ClientTimeout(total=timeout)
        ) as resp,
    ):
        return resp.status, await resp.read()


def raw(port: int, data: bytes, timeout: float = 20) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except TimeoutError:
            pass
    return answer


def half_sent(port: int, n: int, path: str = "/v1/messages") -> list[socket.socket]:
    head = (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Content-Length: 1000\r\n\r\n"
    ).encode() + b"{" * 400
    socks = []
    for i in range(n):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=30)
            s.sendall(head[:25] if i % 2 else head)
            socks.append(s)
        except OSError:
            break
    return socks


def closed_within(socks: list[socket.socket], seconds: float) -> int:
    """How many of ``socks`` the server closed within ``seconds``."""
    deadline, closed = time.monotonic() + seconds, 0
    for s in socks:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            while s.recv(65536):
                pass
            closed += 1
        except (TimeoutError, OSError):
            pass
        s.close()
    return closed


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="smaller bombs (no 2 GiB / 1 GiB)")
    args = p.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
    tmp = tempfile.mkdtemp(prefix="ctxviewer-hostile-")
    up = subprocess.Popen(
        [sys.executable, "-c", UPSTREAM, str(FAKES)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert up.stdout is not None
    upstream = f"http://127.0.0.1:{up.stdout.readline().strip()}"
    rec, otel_out = Path(tmp) / "rec.jsonl", Path(tmp) / "otel.jsonl"
    proxy = Server(
        "proxy",
        [
            "--out",
            str(rec),
            "--upstream",
            upstream,
            "--openai-upstream",
            upstream,
            "--client-timeout",
            "2",
        ],
        tmp,
    )
    otel = Server("otel", ["--out", str(otel_out), "--client-timeout", "2"], tmp)
    answers: list[bytes] = []
    counts = {"real calls": 0, "real exports": 0, "bad inputs": 0, "faults": 0}
    try:
        run(proxy, otel, rec, otel_out, upstream, tmp, args.quick, answers, counts)
    finally:
        console = proxy.stop() + otel.stop()
        up.stdin.close()  # type: ignore[union-attr]
        up.wait(timeout=10)
    text = rec.read_text(errors="replace") + otel_out.read_text(errors="replace")
    found = [
        s
        for s in [KEY, *SECRETS.values(), *[q.split("=")[1] for q in QUERY.split("&")]]
        if s in text or s in console or any(s.encode() in a for a in answers)
    ]
    recorded = sum(
        1
        for line in rec.read_text().splitlines()
        if '"api":"anthropic"' in line and '"status":200' in line
    )
    written = sum(1 for line in otel_out.read_text().splitlines() if '"input_tokens"' in line)
    print(f"\nbad inputs tried: {counts['bad inputs']}, faults survived: {counts['faults']}")
    print(f"tracebacks on the consoles: {console.count('Traceback')}")
    print(f"secrets found in files, consoles, answers: {len(found)} {found}")
    print(
        f"nothing lost: {recorded} of {counts['real calls']} real calls recorded, "
        f"{written} of {counts['real exports']} real exports written"
    )
    return 0


def run(
    proxy: Server,
    otel: Server,
    rec: Path,
    otel_out: Path,
    upstream: str,
    tmp: str,
    quick: bool,
    answers: list[bytes],
    counts: dict[str, int],
) -> None:
    def real_call() -> None:
        status, _ = asyncio.run(post(f"{proxy.url}/v1/messages", BODY, HEADERS))
        assert status == 200, status
        counts["real calls"] += 1

    def real_export() -> float:
        t = time.perf_counter()
        status, _ = asyncio.run(
            post(f"{otel.url}/v1/logs", EXPORT, {"content-type": "application/json"})
        )
        assert status == 200, status
        counts["real exports"] += 1
        return time.perf_counter() - t

    with Peak(proxy.proc.pid) as p_base:
        real_call()
    with Peak(otel.proc.pid) as o_base:
        export_alone = min(real_export() for _ in range(5))
    print(
        f"baseline: proxy {p_base.mb:.0f} MB after a normal call, receiver {o_base.mb:.0f} "
        f"MB after a normal export; a small export answered in {export_alone * 1000:.1f} ms"
    )

    print("\ncompressed-body bombs           sent     peak MB  x baseline  longest line")
    bombs: list[tuple[str, str, Callable[[], bytes], Server]] = [
        ("proxy gzip 128 MiB NULs", "gzip", lambda: zeros_gzip(128 << 20), proxy),
        ("proxy gzip 2 GiB NULs", "gzip", lambda: zeros_gzip(2 << 30), proxy),
        ("proxy gzip,gzip 2 GiB NULs", "gzip, gzip", lambda: zeros_gzip(2 << 30, 2), proxy),
        ("proxy deflate 512 MiB", "deflate", lambda: zlib.compress(bytes(512 << 20), 9), proxy),
        ("otel gzip 1 GiB NULs", "gzip", lambda: zeros_gzip(1 << 30), otel),
        (
            "otel gzip 64 MiB JSON",
            "gzip",
            lambda: gzip.compress(b'{"resourceLogs":[{"x":"' + b"a" * (64 << 20) + b'"}]}', 9),
            otel,
        ),
        (
            "otel gzip 8 MiB of {},",
            "gzip",
            lambda: gzip.compress(b'{"resourceLogs":[' + b"{}," * 2_700_000 + b"{}]}", 9),
            otel,
        ),
        (
            "otel gzip protobuf 8 MiB packed",
            "gzip",
            lambda: gzip.compress(packed_protobuf(8 << 20), 9),
            otel,
        ),
        (
            "proxy gzip 8 MiB of {},",
            "gzip",
            lambda: gzip.compress(b'{"messages":[' + b"{}," * 2_700_000 + b"{}]}", 9),
            proxy,
        ),
    ]
    try:
        import brotli

        bombs.append(
            (
                "proxy br 512 MiB NULs",
                "br",
                lambda: bytes(brotli.compress(bytes(512 << 20), quality=5)),
                proxy,
            )
        )
    except ImportError:
        print("(br: brotli not installed)")
    try:
        from backports import zstd  # type: ignore[import-not-found]

        bombs.append(
            (
                "proxy zstd 512 MiB NULs",
                "zstd",
                lambda: bytes(zstd.compress(bytes(512 << 20))),
                proxy,
            )
        )
    except ImportError:
        print("(zstd: backports.zstd not installed)")
    for name, coding, make, server in bombs:
        if quick and ("2 GiB" in name or "1 GiB" in name):
            continue
        data = make()
        out = rec if server is proxy else otel_out
        since = out.stat().st_size
        path = "/v1/messages/batches" if server is proxy else "/v1/logs"
        base = p_base.mb if server is proxy else o_base.mb
        waited = None
        with Peak(server.proc.pid) as peak:
            if server is otel:  # how long a small export waits meanwhile

                async def both(
                    data: bytes = data, coding: str = coding, path: str = path
                ) -> tuple[tuple[int, bytes], float]:
                    bomb = asyncio.create_task(
                        post(
                            f"{otel.url}{path}",
                            data,
                            {"content-type": "application/json", "content-encoding": coding},
                        )
                    )
                    await asyncio.sleep(0.05)
                    t = time.perf_counter()
                    status, _ = await post(
                        f"{otel.url}/v1/logs", EXPORT, {"content-type": "application/json"}
                    )
                    assert status == 200
                    counts["real exports"] += 1
                    return await bomb, time.perf_counter() - t

                (status, answer), waited = asyncio.run(both())
            else:
                status, answer = asyncio.run(
                    post(f"{proxy.url}{path}", data, {**HEADERS, "content-encoding": coding})
                )
                deadline = time.monotonic() + 30  # its line comes after the answer
                while out.stat().st_size == since and time.monotonic() < deadline:
                    time.sleep(0.05)
        answers.append(answer)
        counts["bad inputs"] += 1
        print(
            f"{name:30} {len(data) / 1024:7.0f} KB {peak.mb:7.0f}  {peak.mb / base:8.2f}"
            f"  {longest_line(out, since) / 1024:8.1f} KB  (answer {status})"
            + (f"; a small export meanwhile: {waited * 1000:.0f} ms" if waited else "")
        )
        real_call() if server is proxy else real_export()

    print("\nrequest targets")
    decoy = socket.socket()
    decoy.bind(("127.0.0.1", 0))
    decoy.listen(64)
    decoy.setblocking(False)
    dport = decoy.getsockname()[1]
    targets = [
        "host://x/v1/messages",
        "munity://x/v1/messages",
        f"http://127.0.0.1:{dport}x/v1",
        f"host://127.0.0.1:{dport}/v1/messages",
        "http://[::1/v1/messages",
        f"http://[::1]:{dport}/v1/messages",
        "*",
        f"127.0.0.1:{dport}",
        "/v1/chat/completions/../../messages",
        "/v1/chat/completions/%2e%2e/messages",
        "/v1/messages%2f..%2f..",
        "/v1\\..\\messages",
        f"http://u:p@127.0.0.1:{dport}/v1/messages",
    ]
    statuses = []
    for target in targets:
        for method in ("POST", "CONNECT"):
            answer = raw(
                proxy.port,
                (
                    f"{method} {target} HTTP/1.1\r\nHost: x\r\n"
                    f"x-api-key: {KEY}\r\ncontent-length: 2\r\n"
                    "connection: close\r\n\r\n{}"
                ).encode(),
            )
            answers.append(answer)
            statuses.append(answer[9:12].decode())
            counts["bad inputs"] += 1
            counts["real calls"] += answer[9:12] == b"200"  # an absolute URL: its path used
    reached = 0
    while True:
        try:
            decoy.accept()[0].close()
            reached += 1
        except BlockingIOError:
            break
    print(
        f"{len(statuses)} targets sent; answers "
        f"{ {s: statuses.count(s) for s in sorted(set(statuses))} }; "
        f"connections to the decoy they named: {reached}"
    )
    real_call()

    print("\nsecrets")
    answers.append(
        raw(
            proxy.port,
            (
                f"POST /v1/messages?{QUERY} HTTP/1.1\r\nHost: x\r\n"
                + "".join(f"{k}: {v}\r\n" for k, v in SECRETS.items())
                + f"x-api-key: {KEY}\r\ncontent-length: {len(BODY)}\r\n"
                "connection: close\r\n\r\n"
            ).encode()
            + BODY,
        )
    )
    counts["real calls"] += 1
    answers.append(
        raw(
            proxy.port,
            (
                f"POST host://x/v1/messages?{QUERY} HTTP/1.1\r\nHost: x\r\n"
                "content-length: 0\r\nconnection: close\r\n\r\n"
            ).encode(),
        )
    )
    secret_export = json.dumps(
        {
            "resourceLogs": [
                {
                    "scopeLogs": [
                        {
                            "logRecords": [
                                {
                                    "body": {"stringValue": f"key {KEY}"},
                                    "attributes": [
                                        {"key": k, "value": {"stringValue": v}}
                                        for k, v in [
                                            ("api_key", SECRETS["x-pwd"]),
                                            ("authorization", SECRETS["x-custom"]),
                                            ("http.request.header.x-api-key", SECRETS["x-access"]),
                                        ]
                                    ],
                                }
                            ]
                        }
                    ]
                }
            ]
        }
    ).encode()
    answers.append(
        asyncio.run(
            post(f"{otel.url}/v1/logs", secret_export, {"content-type": "application/json"})
        )[1]
    )
    print(
        "sent: headers and query names by name and by shape, an export with secret "
        "attributes and a key in its body"
    )

    print("\nconnections")
    for server, path in ((proxy, "/v1/messages"), (otel, "/v1/logs")):
        socks = half_sent(server.port, 3000, path)
        t = time.perf_counter()
        real_call() if server is proxy else real_export()
        during = time.perf_counter() - t
        closed = closed_within(socks, 20)
        counts["faults"] += len(socks)
        print(
            f"{'proxy' if server is proxy else 'otel':6} {len(socks)} half-sent connections "
            f"held: {closed} closed by the server within 20 s; a real call meanwhile took "
            f"{during * 1000:.0f} ms"
        )
    for _ in range(200):  # hang up mid-body
        for server in (proxy, otel):
            with socket.create_connection(("127.0.0.1", server.port)) as s:
                s.sendall(
                    b"POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                    b"\r\nContent-Length: 1000\r\n\r\n" + b"{" * 300
                )
            counts["faults"] += 1
    junk = [
        b'{"resourceLogs": 5}',
        b'{"resourceLogs": [5]}',
        b"[1]",
        b"{not json",
        b'{"resourceSpans": [{"scopeSpans": {}}]}',
    ]
    for j in junk:
        status, answer = asyncio.run(
            post(f"{otel.url}/v1/logs", j, {"content-type": "application/json"})
        )
        answers.append(answer)
        counts["bad inputs"] += 1
    status, answer = asyncio.run(
        post(
            f"{otel.url}/v1/logs",
            b"not gzip",
            {"content-type": "application/json", "content-encoding": "gzip"},
        )
    )
    counts["bad inputs"] += 1
    real_call()
    real_export()

    for command, out, path in (
        ("proxy", Path(tmp) / "limited.jsonl", "/v1/messages"),
        ("otel", Path(tmp) / "limited-otel.jsonl", "/v1/logs"),
    ):
        extra = (
            ["--upstream", upstream, "--openai-upstream", upstream] if command == "proxy" else []
        )
        limited = Server(command, ["--out", str(out), "--quiet", *extra], tmp, limit=1024)
        socks = half_sent(limited.port, 1100, path)
        t = time.perf_counter()
        try:
            if command == "proxy":
                status, _ = asyncio.run(post(f"{limited.url}/v1/messages", BODY, HEADERS, 10))
            else:
                status, _ = asyncio.run(
                    post(f"{limited.url}/v1/logs", EXPORT, {"content-type": "application/json"}, 10)
                )
        except (TimeoutError, aiohttp.ClientError) as e:
            status = type(e).__name__
        took = time.perf_counter() - t
        for s in socks:
            s.close()
        console = limited.stop()
        counts["faults"] += len(socks)
        print(
            f"{command:6} limited to 1024 descriptors, {len(socks)} half-sent connections: "
            f"a real {'call' if command == 'proxy' else 'export'} answered {status} in "
            f"{took * 1000:.0f} ms; tracebacks {console.count('Traceback')}"
        )


if __name__ == "__main__":
    sys.exit(main())
