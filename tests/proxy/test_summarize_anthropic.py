"""AnthropicSummarizer against a fake Anthropic server on 127.0.0.1, with the real SDK."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from concurrent.futures import Future

import pytest
from aiohttp import web

from ctxviewer.analysis.compaction.summarize_anthropic import (
    AnthropicSummarizer,
    SummarizerError,
    SummarizerStopped,
)
from ctxviewer.model import TEXT, Block, Message

MSGS = [
    Message("user", (Block(TEXT, "Please fix the login test"),)),
    Message("assistant", (Block(TEXT, "I'll rewrite the check."),)),
]


def _sse(event: str, data: dict) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


class Fake:
    def __init__(self) -> None:
        self.mode = "ok"
        self.bodies: list[dict] = []
        self.port = 0
        self._started: Future[int] = Future()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.bodies.append(await request.json())
        if self.mode in ("500", "400"):
            return web.json_response(
                {"type": "error", "error": {"type": "api_error", "message": f"fake {self.mode}"}},
                status=int(self.mode),
            )
        if self.mode == "slow":
            await asyncio.sleep(3)
        resp = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await resp.prepare(request)
        msg = {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 1000, "output_tokens": 1},
        }
        await resp.write(_sse("message_start", {"type": "message_start", "message": msg}))
        await resp.write(
            _sse(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            )
        )
        for part in ("Title: Fix the login test quickly\n", "The user wants ", "a fix."):
            await resp.write(
                _sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": part},
                    },
                )
            )
        await resp.write(_sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
        await resp.write(
            _sse(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": 200},
                },
            )
        )
        await resp.write(_sse("message_stop", {"type": "message_stop"}))
        return resp

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        app = web.Application()
        app.router.add_post("/v1/messages", self.handle)
        runner = web.AppRunner(app, shutdown_timeout=0.2)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        self._started.set_result(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]
        await self._stop.wait()
        await runner.cleanup()

    def start(self) -> Fake:
        self._thread.start()
        self.port = self._started.result(timeout=10)
        return self

    def stop(self) -> None:
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=10)


@pytest.fixture
def fake() -> Iterator[Fake]:
    f = Fake().start()
    yield f
    f.stop()


def summarizer(fake: Fake, timeout: float = 10.0) -> AnthropicSummarizer:
    return AnthropicSummarizer(
        "claude-sonnet-4-6", "sk-test", f"http://127.0.0.1:{fake.port}", timeout=timeout
    )


def test_success_streams_text_usage_cost(fake: Fake) -> None:
    s = summarizer(fake).summarize(MSGS, 400)
    assert s.text == "The user wants a fix." and s.title == "Fix the login test quickly"
    assert s.input_tokens == 1000 and s.output_tokens == 200
    assert s.cost_usd == pytest.approx((1000 * 3 + 200 * 15) / 1e6)
    body = fake.bodies[0]
    assert body["max_tokens"] <= 20_000 and "thinking" not in body and body["stream"] is True


@pytest.mark.parametrize("mode", ["500", "400"])
def test_http_errors(fake: Fake, mode: str) -> None:
    fake.mode = mode
    summ = summarizer(fake)
    with pytest.raises(SummarizerError, match=mode):
        summ.summarize(MSGS)
    assert summ.failures == 1


def test_timeout(fake: Fake) -> None:
    fake.mode = "slow"
    summ = summarizer(fake, timeout=0.5)
    with pytest.raises(SummarizerError, match="Timeout"):
        summ.summarize(MSGS)


def test_three_failures_stop_until_forced_success(fake: Fake) -> None:
    fake.mode = "500"
    summ = summarizer(fake)
    for _ in range(3):
        with pytest.raises(SummarizerError):
            summ.summarize(MSGS)
    calls = len(fake.bodies)
    with pytest.raises(SummarizerStopped, match="3 consecutive"):
        summ.summarize(MSGS)
    assert len(fake.bodies) == calls  # no request sent
    fake.mode = "ok"
    assert summ.summarize(MSGS, force=True).text
    assert summ.failures == 0 and summ.summarize(MSGS).text
