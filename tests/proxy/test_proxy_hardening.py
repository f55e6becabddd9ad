"""The proxy against odd clients and broken disks: routing by API shape, encoded
request bodies, absolute-form request lines, hang-ups, a killed proxy, a full
file system, and files that are not recordings."""

from __future__ import annotations

import asyncio
import gzip
import os
import resource
import signal
import socket
import time
from collections.abc import Callable
from pathlib import Path

import aiohttp
import anthropic
import orjson
import pytest
from cli_server import CliServer
from proxy_fakes import API_KEY, FakeUpstream, read_lines

from ctxviewer.cli import main
from ctxviewer.ingest.loader import load
from ctxviewer.proxy import ProxyThread
from ctxviewer.proxy.recorder import NotARecording, Recorder

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "corpus"
BODY = {
    "model": "claude-test",
    "max_tokens": 16,
    "messages": [{"role": "user", "content": "hello through an encoded body"}],
}


def _post(
    url: str, data: bytes, headers: dict[str, str], method: str = "POST"
) -> tuple[int, bytes]:
    async def run() -> tuple[int, bytes]:
        async with (
            aiohttp.ClientSession(auto_decompress=False) as s,
            s.request(method, url, data=data, headers=headers) as resp,
        ):
            return resp.status, await resp.read()

    return asyncio.run(asyncio.wait_for(run(), 20))


def _exchange(proxy: ProxyThread) -> dict:
    assert proxy.wait_for_records(1, 10)
    (ex,) = [r for r in read_lines(proxy.out) if r["type"] == "exchange"]
    return ex


# -- routing by API shape -------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/"),
        ("POST", "/v2/things:generateContent"),
        ("GET", "/admin/settings"),
        ("POST", "/v1/messagesX"),
    ],
)
def test_a_call_of_neither_api_gets_a_404_and_is_never_forwarded(
    proxy: ProxyThread, upstream: FakeUpstream, method: str, path: str
) -> None:
    status, body = _post(
        proxy.url + path, b"{}", {"Authorization": "Bearer sk-openai-SECRET"}, method
    )
    assert status == 404
    assert b"no Anthropic, OpenAI or Gemini API call" in body
    assert upstream.received == []
    ex = _exchange(proxy)
    assert ex["api"] == "unrouted" and ex["upstream"] is None
    assert ex["error"]["kind"] == "not_forwarded" and ex["response"] is None
    assert b"sk-openai-SECRET" not in Path(proxy.out).read_bytes()


@pytest.mark.parametrize(
    ("path", "headers", "side"),
    [
        ("/v1/models", {"Authorization": "Bearer sk-openai"}, "openai"),
        ("/v1/embeddings", {"Authorization": "Bearer sk-openai"}, "openai"),
        ("/chat/completions", {"Authorization": "Bearer sk-openai"}, "openai"),
        ("/v1/models", {"x-api-key": "sk-ant", "anthropic-version": "2023-06-01"}, "anthropic"),
    ],
)
def test_calls_go_to_the_provider_of_their_shape(
    make_proxy: Callable[..., ProxyThread], path: str, headers: dict[str, str], side: str
) -> None:
    anthropic_side, openai_side = FakeUpstream(), FakeUpstream()
    anthropic_side.server.start()
    openai_side.server.start()
    try:
        proxy = make_proxy(upstream=anthropic_side.url, openai_upstream=openai_side.url)
        method = "GET" if path == "/v1/models" else "POST"
        data = (
            b"" if method == "GET" else orjson.dumps({"model": "m", "input": "x", "messages": []})
        )
        status, _ = _post(proxy.url + path, data, headers, method)
        assert status == 200
        hit = openai_side if side == "openai" else anthropic_side
        missed = anthropic_side if side == "openai" else openai_side
        assert [r["path"] for r in hit.received] == [path] and missed.received == []
    finally:
        anthropic_side.server.stop()
        openai_side.server.stop()


# -- request bodies in a content encoding ------------------------------------------------


def test_a_gzip_request_body_is_forwarded_as_sent_and_recorded_decoded(
    proxy: ProxyThread, upstream: FakeUpstream
) -> None:
    packed = gzip.compress(orjson.dumps(BODY))
    status, _ = _post(
        proxy.url + "/v1/messages",
        packed,
        {"Content-Encoding": "gzip", "Content-Type": "application/json", "x-api-key": API_KEY},
    )
    assert status == 200
    (got,) = upstream.received
    assert got["raw"] == packed and got["encoding"] == "gzip"  # byte-exact, header kept
    assert got["body"] == BODY
    assert _exchange(proxy)["request"]["body"] == BODY


def test_a_body_in_an_encoding_without_a_decoder_is_forwarded_and_said_so(
    proxy: ProxyThread, upstream: FakeUpstream
) -> None:
    opaque = bytes(range(256)) * 4
    _post(
        proxy.url + "/v1/messages/batches",
        opaque,
        {"Content-Encoding": "x-custom", "x-api-key": API_KEY},
    )
    (got,) = upstream.received
    assert got["raw"] == opaque and got["encoding"] == "x-custom"
    body = _exchange(proxy)["request"]["body"]
    assert body == {
        "_raw": "[1024 bytes, content-encoding x-custom, not decoded: "
        "content-encoding x-custom has no decoder here]"
    }


def test_a_brotli_body_is_recorded_decoded_when_brotli_is_installed(
    proxy: ProxyThread, upstream: FakeUpstream
) -> None:
    brotli = pytest.importorskip("brotli", reason="brotli is an optional decoder")
    packed = brotli.compress(orjson.dumps(BODY))
    _post(
        proxy.url + "/v1/messages/batches", packed, {"Content-Encoding": "br", "x-api-key": API_KEY}
    )
    assert upstream.received[0]["raw"] == packed
    assert _exchange(proxy)["request"]["body"] == BODY


# -- the request line -------------------------------------------------------------------


def test_an_absolute_form_request_line_goes_to_the_upstream_path(
    proxy: ProxyThread, upstream: FakeUpstream
) -> None:
    """``POST http://elsewhere/v1/messages``: a client that takes the proxy for an
    HTTP proxy. Its host is not appended to the upstream's."""
    body = orjson.dumps(BODY)
    head = (
        f"POST http://api.example.invalid/v1/messages?beta=true HTTP/1.1\r\n"
        f"Host: api.example.invalid\r\nx-api-key: {API_KEY}\r\n"
        f"content-type: application/json\r\ncontent-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=20) as sock:
        sock.sendall(head + body)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200")
    (got,) = upstream.received
    assert got["path"] == "/v1/messages" and got["query"] == "beta=true"
    ex = _exchange(proxy)
    assert ex["path"] == "/v1/messages" and ex["api"] == "anthropic"
    assert ex["upstream"] == f"{upstream.url}/v1/messages?beta=true"


# -- a client that hangs up -----------------------------------------------------------


def test_a_client_hanging_up_while_the_upstream_is_silent_is_noticed_at_once(
    make_proxy: Callable[..., ProxyThread], upstream: FakeUpstream
) -> None:
    proxy = make_proxy(timeout=600.0)
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=20) as sock:
        body = orjson.dumps(BODY)
        sock.sendall(
            (
                f"POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-fake-mode: hang\r\n"
                f"content-type: application/json\r\ncontent-length: {len(body)}\r\n"
                "\r\n"
            ).encode()
            + body
        )
        deadline = time.monotonic() + 10
        while not upstream.received and time.monotonic() < deadline:
            time.sleep(0.02)
        assert upstream.received  # the upstream has it, and stays silent
    hung_up = time.monotonic()
    assert proxy.wait_for_records(1, 10)
    assert time.monotonic() - hung_up < 10  # not the 600 s upstream timeout
    ex = _exchange(proxy)
    assert ex["error"]["kind"] == "client_disconnected" and ex["response"] is None


# -- the recording file ------------------------------------------------------------------


def test_a_half_line_left_by_a_killed_run_does_not_swallow_the_next_meta_line(
    tmp_path: Path,
) -> None:
    out = tmp_path / "rec.jsonl"
    rec = Recorder(out)
    rec.open({"anthropic": "http://127.0.0.1:1"})
    rec.close()
    with open(out, "ab") as f:
        f.write(b'{"ctxviewer":1,"type":"exchange","id":"ex_000001","requ')  # killed here
    rec = Recorder(out)
    rec.open({"anthropic": "http://127.0.0.1:1"})
    rec.close()
    lines = out.read_bytes().split(b"\n")
    assert orjson.loads(lines[2])["type"] == "meta"  # whole, on its own line
    session = load(str(out))
    assert len(session.skipped) == 1 and "not valid JSON" in session.skipped[0].reason


def test_a_file_that_is_not_a_recording_is_refused_unless_forced(tmp_path: Path) -> None:
    transcript = tmp_path / "session.jsonl"
    transcript.write_bytes(
        b'{"type":"user","uuid":"u1","message":{"role":"user","content":"hi"}}\n'
    )
    before = transcript.read_bytes()
    with pytest.raises(NotARecording, match="not a ctxviewer recording"):
        Recorder(transcript).open({"anthropic": "http://127.0.0.1:1"})
    assert transcript.read_bytes() == before
    rec = Recorder(transcript, force=True)
    rec.open({"anthropic": "http://127.0.0.1:1"})
    rec.close()
    assert transcript.read_bytes().startswith(before)
    assert orjson.loads(transcript.read_bytes().splitlines()[1])["type"] == "meta"


@pytest.mark.skipif(not (CORPUS / "claude-code").is_dir(), reason="../shared/corpus absent")
def test_proxy_out_on_a_claude_code_transcript_exits_2_and_leaves_it_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = next((CORPUS / "claude-code").glob("lanegrid__agtrace*.jsonl"))
    transcript = tmp_path / source.name
    transcript.write_bytes(source.read_bytes())
    assert main(["proxy", "--port", "0", "--out", str(transcript)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a ctxviewer recording" in err and "force" in err
    assert transcript.read_bytes() == source.read_bytes()


def _cli_proxy(
    out: Path, upstream: FakeUpstream, tmp_path: Path, preexec: Callable[[], None] | None = None
) -> CliServer:
    args = ["--out", str(out), "--upstream", upstream.url, "--openai-upstream", upstream.url]
    return CliServer("proxy", [*args, "--quiet"], tmp_path, preexec=preexec)


def test_kill_9_mid_stream_then_restart_keeps_the_recording_readable(
    tmp_path: Path, upstream: FakeUpstream
) -> None:
    out = tmp_path / "rec.jsonl"
    proxy = _cli_proxy(out, upstream, tmp_path)
    try:
        with anthropic.Anthropic(base_url=proxy.url, api_key=API_KEY, max_retries=0) as client:
            client.messages.create(**BODY)  # one whole exchange first
            with client.messages.stream(**BODY, extra_headers={"x-fake-mode": "drip"}) as s:
                next(iter(s))  # mid-stream...
                proxy.proc.send_signal(signal.SIGKILL)  # ...the proxy dies
                with pytest.raises(Exception):  # noqa: B017 - whatever the SDK makes of it
                    s.get_final_message()
    finally:
        proxy.proc.kill()
        proxy.proc.wait(timeout=10)
    proxy = _cli_proxy(out, upstream, tmp_path)
    with anthropic.Anthropic(base_url=proxy.url, api_key=API_KEY, max_retries=0) as client:
        client.messages.create(**BODY)
    assert proxy.stop()[0] == 0
    records = read_lines(out)
    assert [r["type"] for r in records] == ["meta", "exchange", "meta", "exchange"]
    session = load(str(out))
    assert len(session.requests) == 2 and session.skipped == []


def _small_file_limit() -> None:  # runs in the child before exec
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (6000, 6000))


def test_a_full_disk_stops_the_recording_in_one_line_and_forwarding_goes_on(
    tmp_path: Path, upstream: FakeUpstream
) -> None:
    """The file may not grow past 6 KB (as on a full disk): every call still gets its
    answer, the proxy says once why the recording stopped, and what was written reads."""
    out = tmp_path / "rec.jsonl"
    proxy = _cli_proxy(out, upstream, tmp_path, _small_file_limit)
    try:
        with anthropic.Anthropic(base_url=proxy.url, api_key=API_KEY, max_retries=0) as client:
            replies = [
                client.messages.create(
                    **{
                        **BODY,
                        "messages": [{"role": "user", "content": f"call {i} " + "pad " * 200}],
                    }
                )
                for i in range(12)
            ]
        assert len(replies) == 12 and all(r.content for r in replies)
    finally:
        code, err = proxy.stop()
    assert code == 1
    assert "Traceback" not in err
    said = [line for line in err.splitlines() if "ctxviewer proxy: recording stopped" in line]
    assert len(said) == 1 and "File too large" in said[0]  # once, when it happened
    (summary,) = [line for line in err.splitlines() if "stopped early" in line]  # at exit
    assert "forwarded but not recorded" in summary
    written = read_lines(out, lenient=True)
    assert written[0]["type"] == "meta" and 1 <= len(written) < 13
    session = load(str(out))
    assert len(session.requests) == len(written) - 1
    assert len(session.skipped) <= 1  # at most the line cut by the limit


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_out_on_a_pipe_or_a_device_exits_2_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    if kind == "fifo":
        target = tmp_path / "pipe"
        os.mkfifo(target)
    else:
        target = Path("/dev/null")
    assert main(["proxy", "--port", "0", "--out", str(target), "--force"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a regular file" in err


def test_a_damaged_stream_keeps_its_request_recorded() -> None:
    """A stream whose events hold values of the wrong types (a list where the delta
    belongs) is recorded with its request; the answer says it was not reassembled."""
    from ctxviewer.proxy.exchange import Exchange

    ex = Exchange(
        "x1",
        "anthropic",
        "POST",
        "/v1/messages",
        "https://up/v1/messages",
        {"content-type": "application/json"},
        request_body=b'{"model":"m","messages":[{"role":"user","content":"hi"}]}',
    )
    ex.status = 200
    ex.response_headers = {"content-type": "text/event-stream"}
    ex.chunks = [
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"m",'
        b'"usage":{"input_tokens":5}}}\n\n',
        b'event: content_block_delta\ndata: {"type":"content_block_delta",'
        b'"index":0,"delta":[1]}\n\n',
    ]
    record = ex.to_record()
    assert record["request"]["body"]["messages"][0]["content"] == "hi"
    assert "could not be reassembled: AttributeError" in record["response"]["body"]["_raw"]


def test_a_listener_binds_every_address_of_its_host_on_one_port() -> None:
    """``localhost`` names 127.0.0.1 and, where IPv6 is on, ::1: port 0 gives both the
    same port, and a client of either family is answered."""
    from ctxviewer.proxy.guard import Listener

    listener = Listener.bind("localhost", 0)
    try:
        names = [s.getsockname() for s in listener.sockets]
        assert names and len({n[1] for n in names}) == 1
        for sock in listener.sockets:
            sock.setblocking(True)
            family, (host, port) = sock.family, sock.getsockname()[:2]
            with socket.socket(family) as client:
                client.connect((host, port))
                accepted, _ = sock.accept()
                accepted.close()
    finally:
        listener.close()
    assert all(s.fileno() == -1 for s in listener.sockets)
