"""The proxy against a hostile local client (issue #33): compressed-body bombs, request
targets that try to lead off the upstream, secrets by name and by shape, half-sent
requests. Real proxies (in a thread, or the ``ctxviewer proxy`` command) in front of the
fake upstream, real clients, all on 127.0.0.1."""

from __future__ import annotations

import asyncio
import gzip
import socket
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import aiohttp
import anthropic
import orjson
import pytest
from cli_server import CliServer
from proxy_fakes import API_KEY, FakeUpstream, read_lines

from ctxviewer.cli import main
from ctxviewer.proxy import ProxyThread

BODY = {
    "model": "claude-test",
    "max_tokens": 16,
    "messages": [{"role": "user", "content": "hello"}],
}
BOMB = bytes(64 << 20)  # 64 MiB of NULs
LINE_LIMIT = 10 << 20  # no recording line of a bomb may pass this


def _post(url: str, data: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    async def run() -> tuple[int, bytes]:
        async with (
            aiohttp.ClientSession(auto_decompress=False) as s,
            s.post(url, data=data, headers=headers) as resp,
        ):
            return resp.status, await resp.read()

    return asyncio.run(asyncio.wait_for(run(), 30))


def _raw(port: int, data: bytes, timeout: float = 20) -> bytes:
    """Send ``data`` on a fresh connection and read until the proxy closes it."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def _request(target: str, body: bytes = b"{}", extra: str = "") -> bytes:
    return (
        f"POST {target} HTTP/1.1\r\nHost: x\r\nx-api-key: {API_KEY}\r\n"
        f"content-type: application/json\r\ncontent-length: {len(body)}\r\n{extra}"
        "connection: close\r\n\r\n"
    ).encode() + body


def _exchanges(proxy: ProxyThread, count: int) -> list[dict]:
    assert proxy.wait_for_records(count, 20)
    return [r for r in read_lines(proxy.out) if r["type"] == "exchange"]


# -- compressed bodies ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("coding", "packed"),
    [
        ("gzip", lambda: gzip.compress(BOMB, 9)),
        ("deflate", lambda: zlib.compress(BOMB, 9)),
        ("gzip, gzip", lambda: gzip.compress(gzip.compress(BOMB, 9), 9)),
    ],
)
def test_a_compressed_bomb_is_forwarded_as_sent_and_recorded_as_a_note(
    proxy: ProxyThread, upstream: FakeUpstream, coding: str, packed: Callable[[], bytes]
) -> None:
    data = packed()
    status, _ = _post(
        proxy.url + "/v1/messages/batches", data, {"Content-Encoding": coding, "x-api-key": API_KEY}
    )
    assert status == 200
    assert upstream.received[0]["raw"] == data  # the upstream judges it, byte for byte
    (ex,) = _exchanges(proxy, 1)
    assert ex["request"]["body"]["_raw"].startswith(
        f"[{len(data)} bytes, content-encoding {coding}, not decoded: inflates past"
    )
    assert max(len(line) for line in Path(proxy.out).read_bytes().splitlines()) < 64 << 10


def test_an_invalid_gzip_body_is_recorded_with_why(
    proxy: ProxyThread, upstream: FakeUpstream
) -> None:
    _post(
        proxy.url + "/v1/messages/batches",
        b"this is not gzip",
        {"Content-Encoding": "gzip", "x-api-key": API_KEY},
    )
    (ex,) = _exchanges(proxy, 1)
    assert ex["request"]["body"]["_raw"] == (
        "[16 bytes, content-encoding gzip, not decoded: not a valid gzip stream (Error -3 "
        "while decompressing data: incorrect header check)]"
    )


def test_a_body_that_is_not_json_is_kept_to_its_first_mib(proxy: ProxyThread) -> None:
    _post(
        proxy.url + "/v1/messages/batches",
        gzip.compress(bytes(4 << 20)),
        {"Content-Encoding": "gzip", "x-api-key": API_KEY},
    )  # 4 MiB of NULs, 4 KB sent
    (ex,) = _exchanges(proxy, 1)
    raw = ex["request"]["body"]["_raw"]
    assert raw.endswith("[... cut: 4194304 bytes in all]") and len(raw) < (1 << 20) + 64
    assert max(len(line) for line in Path(proxy.out).read_bytes().splitlines()) < LINE_LIMIT


# -- request targets --------------------------------------------------------------------


@pytest.mark.parametrize(
    "target",
    [
        "host://x/v1/messages",
        "munity://x/v1/messages",
        "hTTp://[::1/v1/messages",
        "http://127.0.0.1:99999/v1/messages",
        "/v1/chat/completions/../../messages",
        "/v1/chat/completions/%2e%2E/%2e./messages",
        "/v1/chat/completions/..%2f..%2fmessages",
        "/v1/messages/.",
        "/v1\\..\\chat/completions",
        "/v1/messages%00",
    ],
)
def test_a_target_that_could_lead_off_the_upstream_is_refused(
    make_proxy: Callable[..., ProxyThread], target: str
) -> None:
    anthropic_side, openai_side = FakeUpstream(), FakeUpstream()
    anthropic_side.server.start()
    openai_side.server.start()
    try:
        proxy = make_proxy(upstream=anthropic_side.url, openai_upstream=openai_side.url)
        answer = _raw(proxy.port, _request(target))
        assert answer.startswith((b"HTTP/1.1 400", b"HTTP/1.0 400"))
        assert anthropic_side.received == [] and openai_side.received == []
    finally:
        anthropic_side.server.stop()
        openai_side.server.stop()


@pytest.mark.parametrize(
    "target",
    [
        "http://[::1]:9/v1/messages?beta=true",
        "http://user:pw@127.0.0.1:9/v1/messages?beta=true",
        "HTTPS://elsewhere.invalid/v1/messages?beta=true",
    ],
)
def test_an_absolute_target_goes_only_to_the_upstream(
    proxy: ProxyThread, upstream: FakeUpstream, target: str
) -> None:
    """IPv6 literals, userinfo, another scheme: the host named is never contacted."""
    with socket.socket() as decoy:  # a listener where the target points, if it could
        decoy.bind(("127.0.0.1", 0))
        decoy.listen()
        decoy.settimeout(0.2)
        port = decoy.getsockname()[1]
        answer = _raw(proxy.port, _request(target.replace(":9/", f":{port}/"), orjson.dumps(BODY)))
        assert answer.startswith(b"HTTP/1.1 200")
        with pytest.raises(TimeoutError):
            decoy.accept()
    (got,) = upstream.received
    assert (got["path"], got["query"]) == ("/v1/messages", "beta=true")


def test_bad_targets_print_no_traceback_and_everything_else_goes_on(
    tmp_path: Path, upstream: FakeUpstream
) -> None:
    server = CliServer(
        "proxy",
        [
            "--out",
            str(tmp_path / "rec.jsonl"),
            "--quiet",
            "--upstream",
            upstream.url,
            "--openai-upstream",
            upstream.url,
        ],
        tmp_path,
    )
    port = int(server.url.rsplit(":", 1)[1])
    try:
        for target in (
            "host://x/v1/messages",
            "http://[::1/v1/messages",
            "*",
            "example.com:443",
            "/v1/../v1/messages",
            "http://h:1x/v1/messages",
        ):
            assert b" 400 " in _raw(port, _request(target)).split(b"\r\n")[0]
        with anthropic.Anthropic(base_url=server.url, api_key=API_KEY, max_retries=0) as client:
            assert client.messages.create(**BODY).content
    finally:
        code, err = server.stop()
    assert code == 0 and "Traceback" not in err
    assert all(line.startswith("ctxviewer proxy: ") for line in err.splitlines())
    assert [r["api"] for r in read_lines(tmp_path / "rec.jsonl")[1:]].count("anthropic") == 1


# -- secrets ----------------------------------------------------------------------------

SECRETS = {
    "x-jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTQyIn0.c2lnbmF0dXJlLXZhbHVl",
    "x-pwd": "hunter2-pwd-value",
    "x-pass": "hunter2-pass-value",
    "x-access": "access-value-123",
    "x-gateway-creds": "gateway-creds-value",
    "x-custom": "Bearer sk-ant-api03-" + "A1b2C3d4" * 12,
    "x-other": "AIzaSyD-" + "k" * 31,
    "x-gh": "ghp_" + "Z9" * 18,
    "x-aws": "AKIA" + "ABCDEFGH23456789",
}
QUERY = {
    "%6Bey": "pct-key-value",
    "k%65y": "pct-key-value-2",
    "sig": "sig-value",
    "code": "code-value",
    "pwd": "pwd-value",
    "pass": "pass-value",
    "token[x]": "bracket-value",
    "t": "sk-proj-" + "Q" * 40,
}


def test_no_secret_reaches_the_recording_the_console_or_an_answer(
    tmp_path: Path, upstream: FakeUpstream
) -> None:
    out = tmp_path / "rec.jsonl"
    server = CliServer(
        "proxy",
        ["--out", str(out), "--upstream", upstream.url, "--openai-upstream", upstream.url],
        tmp_path,
    )
    query = "&".join(f"{k}={v}" for k, v in QUERY.items())
    answers = b""
    try:
        with anthropic.Anthropic(base_url=server.url, api_key=API_KEY, max_retries=0) as client:
            client.messages.create(
                **BODY,
                extra_headers=SECRETS,
                extra_query=dict(q.split("=") for q in query.split("&")),
            )
        port = int(server.url.rsplit(":", 1)[1])
        for target in (
            f"/v1/messages/batches?{query}",
            f"host://x/v1/messages?{query}",
            f"/nowhere?{query}",
            f"/v1/../x?{query}",
        ):
            answers += _raw(
                port, _request(target, extra="".join(f"{k}: {v}\r\n" for k, v in SECRETS.items()))
            )
    finally:
        code, err = server.stop()
    console = "\n".join(server.printed()) + err
    assert code == 0
    recording = out.read_text()
    assert "[redacted]" in recording
    for secret in [API_KEY, *SECRETS.values(), *QUERY.values()]:
        for where, text in (
            ("recording", recording),
            ("console", console),
            ("answers", answers.decode()),
        ):
            assert secret not in text, f"{secret} in the {where}"
            assert secret.split()[-1] not in text, f"{secret} in the {where}"


def test_an_upstream_url_with_a_query_is_refused_without_echoing_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A malformed upstream once had its ``?key=`` echoed in the proxy's 502 body."""
    with pytest.raises(ValueError, match="no query") as refused:
        ProxyThread(upstream="http://127.0.0.1:1/?key=upstream-SECRET")
    assert "upstream-SECRET" not in str(refused.value)
    assert main(["proxy", "--port", "0", "--upstream", "http://:80/?key=upstream-SECRET"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "upstream-SECRET" not in err and "[redacted]" in err


# -- half-sent requests -----------------------------------------------------------------


def test_half_sent_requests_are_closed_and_real_calls_go_on(
    make_proxy: Callable[..., ProxyThread], upstream: FakeUpstream
) -> None:
    proxy = make_proxy(client_timeout=1.0)
    body = orjson.dumps(BODY)
    socks = []
    for i in range(60):
        sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=20)
        head = _request("/v1/messages", body)
        sock.sendall(head[:30] if i % 2 else head[:-10])  # half a head; all but the body's end
        socks.append(sock)
    with anthropic.Anthropic(base_url=proxy.url, api_key=API_KEY, max_retries=0) as client:
        assert client.messages.create(**BODY).content  # served meanwhile
    deadline = time.monotonic() + 15
    closed = 0
    for sock in socks:
        sock.settimeout(max(0.1, deadline - time.monotonic()))
        answer = b""
        while chunk := sock.recv(65536):  # until the proxy closes it
            answer += chunk
        closed += 1
        sock.close()
        assert answer == b"" or answer.startswith(b"HTTP/1.1 408")
    assert closed == 60
    stalled = [r for r in _exchanges(proxy, 31) if r["error"]]
    assert len(stalled) == 30
    assert {r["error"]["kind"] for r in stalled} == {"client_timeout"}
    assert proxy.server.guard.counts["timed_out"] >= 30
