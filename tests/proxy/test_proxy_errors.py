"""Upstream failures and vanishing clients: recorded with the request, never a hang."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable
from typing import Any

import aiohttp
import anthropic
import httpx2
import pytest
from proxy_fakes import API_KEY, FakeUpstream, exchanges

from ctxviewer.proxy import ProxyThread

# What a client sees when a stream is cut: the SDK's transport error (or its wrapper).
STREAM_CUT = (anthropic.APIError, httpx2.TransportError)

SENT: dict[str, Any] = {
    "model": "claude-test-1",
    "max_tokens": 32,
    "messages": [{"role": "user", "content": "will it fail?"}],
}


def _client(proxy: ProxyThread, **kwargs: Any) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=proxy.url, api_key=API_KEY, max_retries=0, timeout=20.0, **kwargs
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_upstream_500_passes_through(client: anthropic.Anthropic, proxy: ProxyThread) -> None:
    with pytest.raises(anthropic.InternalServerError) as info:
        client.messages.create(**SENT, extra_headers={"x-fake-mode": "500"})
    assert info.value.status_code == 500
    assert info.value.body == {
        "type": "error",
        "error": {"type": "api_error", "message": "Internal server error"},
    }
    (ex,) = exchanges(proxy, 1)
    assert ex["request"]["body"] == SENT
    assert ex["response"]["status"] == 500
    assert ex["response"]["body"]["error"]["type"] == "api_error"
    assert ex["error"] == {
        "kind": "upstream_status",
        "message": "HTTP 500: api_error: Internal server error",
    }
    assert ex["usage"] is None


def test_upstream_429_keeps_retry_after(client: anthropic.Anthropic, proxy: ProxyThread) -> None:
    with pytest.raises(anthropic.RateLimitError) as info:
        client.messages.create(**SENT, extra_headers={"x-fake-mode": "429"})
    assert info.value.response.headers["retry-after"] == "7"
    (ex,) = exchanges(proxy, 1)
    assert ex["response"]["status"] == 429
    assert ex["response"]["headers"]["retry-after"] == "7"
    assert ex["error"]["kind"] == "upstream_status"


def test_upstream_reset_mid_stream(client: anthropic.Anthropic, proxy: ProxyThread) -> None:
    seen: list[str] = []
    with pytest.raises(STREAM_CUT):
        for event in client.messages.create(
            **SENT, stream=True, extra_headers={"x-fake-mode": "reset"}
        ):
            seen.append(event.type)
    assert seen[0] == "message_start"  # what was sent before the reset reached the client
    (ex,) = exchanges(proxy, 1)
    assert ex["request"]["body"] == {**SENT, "stream": True}
    assert ex["error"]["kind"] == "upstream_reset"
    assert ex["response"]["status"] == 200 and ex["response"]["stream"] is True
    assert ex["response"]["body"]["type"] == "message"  # the partial message
    assert ex["usage"]["input_tokens"] > 0


def test_upstream_unreachable_gives_502(make_proxy: Callable[..., ProxyThread]) -> None:
    proxy = make_proxy(upstream=f"http://127.0.0.1:{_free_port()}")
    with _client(proxy) as client, pytest.raises(anthropic.APIStatusError) as info:
        client.messages.create(**SENT)
    assert info.value.status_code == 502
    assert "ctxviewer proxy" in info.value.message
    (ex,) = exchanges(proxy, 1)
    assert ex["request"]["body"] == SENT
    assert ex["response"] is None
    assert ex["error"]["kind"] == "upstream_unreachable"
    assert ex["timing"]["first_byte_ms"] is None


def test_upstream_timeout_gives_504(make_proxy: Callable[..., ProxyThread]) -> None:
    proxy = make_proxy(timeout=0.3)
    t0 = time.perf_counter()
    with _client(proxy) as client, pytest.raises(anthropic.APIStatusError) as info:
        client.messages.create(**SENT, extra_headers={"x-fake-mode": "slow"})
    assert info.value.status_code == 504
    assert time.perf_counter() - t0 < 3
    (ex,) = exchanges(proxy, 1)
    assert ex["request"]["body"] == SENT
    assert ex["error"]["kind"] == "upstream_timeout" and ex["response"] is None


def test_upstream_stalls_mid_stream(make_proxy: Callable[..., ProxyThread]) -> None:
    proxy = make_proxy(timeout=0.3)
    t0 = time.perf_counter()
    with _client(proxy) as client, pytest.raises(STREAM_CUT):
        for _event in client.messages.create(
            **SENT, stream=True, extra_headers={"x-fake-mode": "stall"}
        ):
            pass
    assert time.perf_counter() - t0 < 3
    (ex,) = exchanges(proxy, 1)
    assert ex["error"]["kind"] == "upstream_timeout"
    assert ex["response"]["body"]["type"] == "message"


def test_client_disconnect_mid_stream(
    client: anthropic.Anthropic, proxy: ProxyThread, upstream: FakeUpstream
) -> None:
    async def read_one_chunk_then_leave() -> bytes:
        async with aiohttp.ClientSession() as session:
            resp = await session.post(
                f"{proxy.url}/v1/messages",
                json={**SENT, "stream": True},
                headers={"x-api-key": API_KEY, "x-fake-mode": "drip"},
            )
            chunk = await resp.content.readany()
            resp.close()  # drops the connection mid-stream
            return chunk

    first = asyncio.run(asyncio.wait_for(read_one_chunk_then_leave(), 20))
    assert first.startswith(b"event: message_start")
    (ex,) = exchanges(proxy, 1)
    assert ex["error"]["kind"] == "client_disconnected"
    assert ex["request"]["body"] == {**SENT, "stream": True}
    # the proxy is still fine
    message = client.messages.create(**SENT)
    assert message.id in upstream.built
    assert exchanges(proxy, 2)[1]["error"] is None


def test_stop_with_a_stream_in_flight(make_proxy: Callable[..., ProxyThread]) -> None:
    """Stopping the proxy records the unfinished exchange and does not wait for the upstream."""
    proxy = make_proxy(timeout=10.0)

    async def stream_until_cut() -> None:
        async with (
            aiohttp.ClientSession() as session,
            session.post(
                f"{proxy.url}/v1/messages",
                json={**SENT, "stream": True},
                headers={"x-fake-mode": "stall"},
            ) as resp,
        ):
            await resp.content.readany()
            proxy_stop = asyncio.get_running_loop().run_in_executor(None, proxy.stop)
            with pytest.raises(aiohttp.ClientError):
                await resp.read()
            await proxy_stop

    t0 = time.perf_counter()
    asyncio.run(asyncio.wait_for(stream_until_cut(), 20))
    assert time.perf_counter() - t0 < 5
    (ex,) = exchanges(proxy, 1)
    assert ex["error"]["kind"] == "proxy_stopped"
    assert ex["request"]["body"] == {**SENT, "stream": True}


def test_proxy_bug_is_recorded_and_answered(
    client: anthropic.Anthropic, proxy: ProxyThread, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unexpected exception inside the proxy: the client gets a 500, the request is kept."""
    import ctxviewer.proxy.forward as forward

    def broken(headers: object) -> object:
        raise ValueError("simulated bug")

    with monkeypatch.context() as patch, pytest.raises(anthropic.InternalServerError):
        patch.setattr(forward, "upstream_request_headers", broken)
        client.messages.create(**SENT)
    client.messages.create(**SENT)
    first, second = exchanges(proxy, 2)
    assert first["error"] == {"kind": "proxy_error", "message": "ValueError: simulated bug"}
    assert first["request"]["body"] == SENT
    assert second["error"] is None
