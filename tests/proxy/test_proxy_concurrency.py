"""Many simultaneous streams through one proxy are each recorded intact."""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
from proxy_fakes import API_KEY, FakeUpstream, exchanges

from ctxviewer.proxy import ProxyThread

N_STREAMS = 50


def _request(i: int) -> dict[str, Any]:
    return {
        "model": "claude-test-1",
        "max_tokens": 64,
        "system": f"system prompt for caller {i}",
        "messages": [{"role": "user", "content": f"question number {i}"}],
        "tools": [{"name": f"tool_{i}", "input_schema": {"type": "object"}}],
        "stream": True,
    }


async def _stream_all(url: str) -> list[str]:
    async with anthropic.AsyncAnthropic(
        base_url=url, api_key=API_KEY, max_retries=0, timeout=30.0
    ) as client:

        async def one(i: int) -> str:
            message_id = ""
            stream = await client.messages.create(
                **_request(i), extra_headers={"x-fake-mode": "drip"}
            )
            async for event in stream:
                if event.type == "message_start":
                    message_id = event.message.id
            return message_id

        return await asyncio.gather(*(one(i) for i in range(N_STREAMS)))


def test_fifty_concurrent_streams(proxy: ProxyThread, upstream: FakeUpstream) -> None:
    ids = asyncio.run(asyncio.wait_for(_stream_all(proxy.url), 60))
    assert len(set(ids)) == N_STREAMS
    assert upstream.max_streaming >= N_STREAMS // 2  # they really overlapped
    records = exchanges(proxy, N_STREAMS, timeout=30)
    assert len({r["id"] for r in records}) == N_STREAMS
    sent = {r["request"]["body"]["messages"][0]["content"]: r for r in records}
    assert len(sent) == N_STREAMS
    for i in range(N_STREAMS):
        record = sent[f"question number {i}"]
        assert record["request"]["body"] == _request(i)
        body = record["response"]["body"]
        assert body == upstream.built[body["id"]]
        assert body["content"][0]["text"].split(" to: ")[1].startswith(f"question number {i} ")
        assert body["content"][1]["name"] == f"tool_{i}"
        assert record["error"] is None
