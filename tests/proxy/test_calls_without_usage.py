"""A call without usage in the middle of a session (refused, cut off) is sized from the
last API count of its conversation plus the estimate of what it added: its breakdown
shows its messages and its tier, where it used to show an empty window."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anthropic
import pytest
from aiohttp import web
from proxy_fakes import API_KEY, ServerThread

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.thresholds import tier
from ctxviewer.ingest import load
from ctxviewer.proxy import ProxyThread

TURN = "lorem ipsum dolor sit amet " * 9_000  # ~243k characters a user turn


async def _messages(request: web.Request) -> web.Response:
    """Anthropic's Messages API as far as these calls go: usage is the body's size / 4;
    ``x-fake-mode: 429`` refuses the call."""
    raw = await request.read()
    if request.headers.get("x-fake-mode") == "429":
        return web.json_response(
            {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}},
            status=429,
        )
    n = len(raw) // 4
    return web.json_response(
        {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "model": "claude-test-1",
            "content": [{"type": "text", "text": "Noted."}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": n, "output_tokens": 3},
        }
    )


@pytest.fixture
def recording(tmp_path: Path) -> Iterator[Path]:
    app = web.Application()
    app.router.add_post("/v1/messages", _messages)
    upstream = ServerThread(app).start()
    out = tmp_path / "rec.jsonl"
    proxy = ProxyThread(port=0, out=out, upstream=upstream.url, openai_upstream=upstream.url)
    proxy.start()
    try:
        history: list[dict[str, str]] = []
        with anthropic.Anthropic(base_url=proxy.url, api_key=API_KEY, max_retries=0) as c:
            for n, mode in enumerate(["", "", "429", ""]):
                if mode != "" or n == 0 or history[-1]["role"] == "assistant":
                    history.append({"role": "user", "content": f"turn {n}: {TURN}"})
                try:
                    reply = c.messages.create(
                        model="claude-test-1",
                        max_tokens=64,
                        messages=history,
                        extra_headers={"x-fake-mode": mode},
                    )
                    history.append({"role": "assistant", "content": reply.content[0].text})
                except anthropic.RateLimitError:
                    assert mode == "429"  # the same history is sent again next
        assert proxy.wait_for_records(4, 10)
        yield out
    finally:
        proxy.stop()
        upstream.stop()


def test_a_refused_call_keeps_its_size_messages_and_tier(recording: Path) -> None:
    s = load(str(recording))
    assert [r.usage is None for r in s.requests] == [False, False, True, False]
    a = Analysis(s)
    last, refused = s.requests[1], s.requests[2]
    added = refused.messages[len(last.messages) :]
    assert len(added) == 2  # the reply to call 1 and the new user turn
    expected = last.usage.prompt_tokens + a.estimator.messages(added)
    b = a.breakdown(2)
    assert (b.mode, b.total_basis, b.total) == ("B", "estimate", expected)
    messages = b.category("messages")
    assert messages is not None and messages.tokens > 100_000
    assert len([x for x in messages.items if x.kind == "message"]) == 5
    assert sum(c.tokens for c in b.categories) == b.window
    free = b.category("free_space")
    assert free is not None and free.tokens < b.window - expected + 1
    point = a.timeline[2]
    assert point.carried_prompt_tokens == expected
    assert point.tier == tier(expected, a.thresholds) != "safe"
    assert [a.breakdown(i).total_basis for i in (1, 3)] == ["api", "api"]
    retried = s.requests[3].usage.prompt_tokens  # the API's count of the same history
    assert abs(expected - retried) / retried < 0.05
