"""The proxy records what the real anthropic SDK sent and what the upstream answered."""

from __future__ import annotations

import asyncio
import time
import zlib
from pathlib import Path
from typing import Any

import aiohttp
import anthropic
import orjson
import pytest
from proxy_fakes import API_KEY, DRIP_SECONDS, FakeUpstream, anthropic_sse, exchanges, read_lines

from ctxviewer.proxy import ProxyThread
from ctxviewer.proxy.routes import GEMINI_UPSTREAM

TOOLS: list[Any] = [
    {
        "name": "read_file",
        "description": "Read a file",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
]


def _request(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "model": "claude-test-1",
        "max_tokens": 64,
        "system": [{"type": "text", "text": "You are terse."}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
        **extra,
    }


def test_meta_line_first(proxy: ProxyThread, upstream: FakeUpstream) -> None:
    meta = read_lines(proxy.out)[0]
    assert meta["ctxviewer"] == 1 and meta["type"] == "meta"
    assert meta["upstreams"] == {
        "anthropic": upstream.url,
        "openai": upstream.url,
        "gemini": GEMINI_UPSTREAM,
    }
    assert meta["started"].endswith("Z")


def test_non_streamed_create(
    client: anthropic.Anthropic, proxy: ProxyThread, upstream: FakeUpstream
) -> None:
    sent = _request("hello there", tools=TOOLS, stop_sequences=["###"])
    raw = client.messages.with_raw_response.create(**sent)
    message = raw.parse()
    built = upstream.built[message.id]
    assert raw.http_response.content == orjson.dumps(built)  # byte-exact passthrough

    (ex,) = exchanges(proxy, 1)
    assert ex["api"] == "anthropic" and ex["method"] == "POST" and ex["path"] == "/v1/messages"
    assert ex["upstream"] == f"{upstream.url}/v1/messages"
    assert ex["request"]["body"] == sent == upstream.received[0]["body"]
    assert ex["response"]["status"] == 200 and ex["response"]["stream"] is False
    assert ex["response"]["body"] == built
    assert ex["usage"] == built["usage"]
    assert ex["error"] is None
    timing = ex["timing"]
    assert 0 <= timing["first_byte_ms"] <= timing["total_ms"]


def test_streamed_with_stream_helper(
    client: anthropic.Anthropic, proxy: ProxyThread, upstream: FakeUpstream
) -> None:
    sent = _request("stream me", tools=TOOLS)
    with client.messages.stream(**sent) as stream:
        final = stream.get_final_message()
    built = upstream.built[final.id]
    assert final.content[1].input == built["content"][1]["input"]

    (ex,) = exchanges(proxy, 1)
    assert ex["request"]["body"] == {**sent, "stream": True}
    assert ex["response"]["stream"] is True
    assert ex["response"]["headers"]["content-type"] == "text/event-stream"
    assert ex["response"]["body"] == built  # reassembled: text_delta and input_json_delta
    assert ex["usage"] == built["usage"]


def test_streamed_create_stream_true(
    client: anthropic.Anthropic, proxy: ProxyThread, upstream: FakeUpstream
) -> None:
    sent = _request("raw events please", stream=True)
    kinds = [event.type for event in client.messages.create(**sent)]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    (ex,) = exchanges(proxy, 1)
    assert ex["request"]["body"] == sent
    assert ex["response"]["body"] == upstream.built[ex["response"]["body"]["id"]]


def test_stream_is_byte_exact_and_not_buffered(proxy: ProxyThread, upstream: FakeUpstream) -> None:
    """The first event reaches the client while the upstream is still sending."""

    async def run() -> tuple[bytes, float, float]:
        t0 = time.perf_counter()
        first = None
        got = b""
        async with (
            aiohttp.ClientSession() as s,
            s.post(
                f"{proxy.url}/v1/messages",
                json=_request("drip", stream=True),
                headers={"x-api-key": API_KEY, "x-fake-mode": "drip"},
            ) as resp,
        ):
            async for chunk in resp.content.iter_any():
                first = first or time.perf_counter() - t0
                got += chunk
        return got, first or 0.0, time.perf_counter() - t0

    got, first, total = asyncio.run(asyncio.wait_for(run(), 20))
    (ex,) = exchanges(proxy, 1)
    built = upstream.built[ex["response"]["body"]["id"]]
    assert got == anthropic_sse(built)
    assert ex["response"]["body"] == built
    n_events = got.count(b"\n\n")
    assert total > n_events * DRIP_SECONDS * 0.8
    assert first < total / 2


def test_api_key_never_recorded(
    client: anthropic.Anthropic, proxy: ProxyThread, upstream: FakeUpstream
) -> None:
    client.messages.create(
        **_request("secret test"),
        extra_headers={"x-api-key": API_KEY, "cookie": "sid=COOKIE-SECRET"},
    )
    client.get("/v1/models", options={"params": {"key": API_KEY, "beta": "true"}}, cast_to=object)
    proxy.wait_for_records(2)
    proxy.stop()  # everything flushed and closed
    data = Path(proxy.out).read_bytes()
    assert API_KEY.encode() not in data and b"COOKIE-SECRET" not in data
    first, second = exchanges(proxy, 2)
    assert first["request"]["headers"]["authorization"] == "[redacted]"
    assert first["request"]["headers"]["x-api-key"] == "[redacted]"
    assert first["request"]["headers"]["cookie"] == "[redacted]"
    assert second["response"]["headers"]["set-cookie"] == "[redacted]"
    assert "key=[redacted]" in second["upstream"] and "beta=true" in second["upstream"]
    # ...while the upstream got the real credentials, and its own Host
    got = upstream.received[0]["headers"]
    assert got["Authorization"] == f"Bearer {API_KEY}" and got["x-api-key"] == API_KEY
    assert got["Host"] == upstream.url.removeprefix("http://")


def test_count_tokens_passthrough(
    client: anthropic.Anthropic, proxy: ProxyThread, upstream: FakeUpstream
) -> None:
    sent = {"model": "claude-test-1", "messages": [{"role": "user", "content": "count me"}]}
    result = client.messages.count_tokens(**sent)
    (ex,) = exchanges(proxy, 1)
    assert ex["api"] == "anthropic-count-tokens"
    assert ex["path"] == "/v1/messages/count_tokens"
    assert ex["request"]["body"] == sent
    assert ex["response"]["body"] == {"input_tokens": result.input_tokens}
    assert ex["usage"] is None


def test_other_route_keeps_query_and_headers(
    client: anthropic.Anthropic, proxy: ProxyThread, upstream: FakeUpstream
) -> None:
    response = client.get(
        "/v1/models?beta=true", cast_to=object, options={"headers": {"accept-encoding": "identity"}}
    )
    assert response["beta"] == "true"  # type: ignore[index]
    (ex,) = exchanges(proxy, 1)
    assert ex["api"] == "other" and ex["method"] == "GET" and ex["path"] == "/v1/models"
    assert ex["upstream"] == f"{upstream.url}/v1/models?beta=true"
    assert ex["request"]["body"] is None
    assert upstream.received[0]["query"] == "beta=true"


def test_gzip_passthrough_is_decoded_for_the_recording(
    client: anthropic.Anthropic, proxy: ProxyThread, upstream: FakeUpstream
) -> None:
    raw = client.messages.with_raw_response.create(
        **_request("zip it"), extra_headers={"x-fake-mode": "gzip"}
    )
    encoding = raw.http_response.headers["content-encoding"]
    assert encoding in ("gzip", "deflate")  # the SDK accepts both
    message = raw.parse()
    (ex,) = exchanges(proxy, 1)
    assert ex["response"]["headers"]["content-encoding"] == encoding
    assert ex["response"]["body"] == upstream.built[message.id]


@pytest.mark.parametrize(
    ("accept", "forwarded", "received"),
    [
        ("br, zstd", "identity", None),  # the recorder could not decode these: not asked for
        ("gzip;q=1.0, br", "gzip;q=1.0", "gzip"),
        (None, "identity", None),
    ],
)
def test_client_gets_an_encoding_it_accepts(
    proxy: ProxyThread,
    upstream: FakeUpstream,
    accept: str | None,
    forwarded: str,
    received: str | None,
) -> None:
    async def run() -> tuple[int, bytes, str | None]:
        headers = {"x-fake-mode": "gzip"}
        skip = ["Accept-Encoding"] if accept is None else []
        if accept is not None:
            headers["accept-encoding"] = accept
        async with (
            aiohttp.ClientSession(auto_decompress=False, skip_auto_headers=skip) as s,
            s.post(f"{proxy.url}/v1/messages", json=_request("zip?"), headers=headers) as r,
        ):
            return r.status, await r.read(), r.headers.get("content-encoding")

    status, body, encoding = asyncio.run(asyncio.wait_for(run(), 20))
    assert status == 200 and encoding == received
    assert upstream.received[0]["headers"]["Accept-Encoding"] == forwarded
    (ex,) = exchanges(proxy, 1)
    plain = zlib.decompress(body, 47) if encoding else body
    assert ex["response"]["body"] == orjson.loads(plain)


def test_openai_chat_stream_with_usage(proxy: ProxyThread, upstream: FakeUpstream) -> None:
    sent = {
        "model": "gpt-test",
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi openai"},
        ],
    }

    async def run() -> bytes:
        async with (
            aiohttp.ClientSession() as s,
            s.post(
                f"{proxy.url}/v1/chat/completions",
                json=sent,
                headers={"authorization": "Bearer sk-openai-SECRET"},
            ) as resp,
        ):
            return await resp.read()

    body = asyncio.run(asyncio.wait_for(run(), 20))
    assert body.endswith(b"data: [DONE]\n\n")
    (ex,) = exchanges(proxy, 1)
    assert ex["api"] == "openai-chat" and ex["request"]["body"] == sent
    assert ex["response"]["stream"] is True
    assert ex["response"]["body"] == upstream.built[ex["response"]["body"]["id"]]
    assert ex["usage"] == {
        "input_tokens": 44,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 256,
        "output_tokens": 12,
    }
    assert b"sk-openai-SECRET" not in Path(proxy.out).read_bytes()


def test_non_json_request_body_is_kept_raw(proxy: ProxyThread, upstream: FakeUpstream) -> None:
    async def run() -> int:
        async with (
            aiohttp.ClientSession() as s,
            s.post(f"{proxy.url}/v1/messages/batches", data=b"not json \xff") as resp,
        ):
            return resp.status

    assert asyncio.run(asyncio.wait_for(run(), 20)) == 200
    (ex,) = exchanges(proxy, 1)
    assert ex["request"]["body"] == {"_raw": "not json \ufffd"}
    assert upstream.received[0]["body"] == {"_bytes": b"not json \xff"}  # forwarded as is


def test_recording_reads_back_as_a_session(
    client: anthropic.Anthropic, proxy: ProxyThread, upstream: FakeUpstream
) -> None:
    """What the proxy writes is what ``ctxviewer.ingest`` reads (the ``recording`` reader)."""
    from ctxviewer.ingest.loader import load

    with client.messages.stream(**_request("first", tools=TOOLS)) as stream:
        stream.get_final_message()
    client.messages.count_tokens(model="claude-test-1", messages=[{"role": "user", "content": "n"}])
    client.messages.create(**_request("second"))
    proxy.wait_for_records(3)
    proxy.stop()
    session = load(str(proxy.out))
    assert session.format == "recording"
    recorded = [ex["usage"]["output_tokens"] for ex in exchanges(proxy, 3) if ex["usage"]]
    assert len(recorded) == 2  # count_tokens has no usage
    assert [r.usage.output_tokens for r in session.requests if r.usage] == recorded
