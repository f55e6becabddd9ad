"""Each exchange of a recording is one call, whatever its response's id: a gateway or a
mock that gives every answer the same message id made 10 recorded calls one request
(the first call's messages with the last call's counts)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anthropic
import pytest
from aiohttp import web
from proxy_fakes import API_KEY, ServerThread

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.ingest import load
from ctxviewer.proxy import ProxyThread

CALLS = 10


async def _messages(request: web.Request) -> web.Response:
    raw = await request.read()
    return web.json_response(
        {
            "id": "msg_gateway",
            "type": "message",
            "role": "assistant",
            "model": "claude-test-1",
            "content": [{"type": "text", "text": "ok"}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": len(raw) // 4, "output_tokens": 1},
        }
    )


@pytest.fixture
def recording(tmp_path: Path) -> Iterator[Path]:
    app = web.Application()
    app.router.add_post("/v1/messages", _messages)
    upstream = ServerThread(app).start()
    out = tmp_path / "rec.jsonl"
    proxy = ProxyThread(port=0, out=out, upstream=upstream.url)
    proxy.start()
    try:
        history: list[dict[str, str]] = []
        with anthropic.Anthropic(base_url=proxy.url, api_key=API_KEY, max_retries=0) as c:
            for n in range(CALLS):
                history.append({"role": "user", "content": f"step {n}: " + "word " * 200})
                reply = c.messages.create(model="claude-test-1", max_tokens=8, messages=history)
                assert reply.id == "msg_gateway"
                history.append({"role": "assistant", "content": "ok"})
        assert proxy.wait_for_records(CALLS, 10)
        yield out
    finally:
        proxy.stop()
        upstream.stop()


def test_every_exchange_is_a_request(recording: Path) -> None:
    s = load(str(recording))
    assert len(s.requests) == CALLS
    assert [len(r.messages) for r in s.requests] == list(range(1, 2 * CALLS, 2))
    sizes = [r.usage.prompt_tokens for r in s.requests]
    assert sizes == sorted(sizes) and len(set(sizes)) == CALLS  # each its own count
    a = Analysis(s)
    assert [p.api_prompt_tokens for p in a.timeline] == sizes
