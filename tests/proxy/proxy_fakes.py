"""A fake Anthropic + OpenAI upstream on 127.0.0.1, and a thread to run aiohttp servers in.

The fake answers like the real APIs (same JSON shapes, the real SSE event
sequences) and keeps every message it built, so tests can compare what the
proxy recorded with what the upstream actually sent. A request header
``x-fake-mode`` selects an error mode.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import zlib
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web

from ctxviewer.proxy import ProxyThread

API_KEY = "sk-ant-test-SECRET"
MODES = (
    "500",
    "429",
    "reset",
    "slow",
    "stall",
    "gzip",
    "drip",
    "hang",
    "huge",
    "close",
    "overflow",
)
OVERFLOW_LIMIT = 200_000  # "overflow": the window its 400 names (x-fake-input: the prompt)
HANG_SECONDS = 3600.0  # "hang": headers never come (the test ends it)
HUGE_BYTES = 8 * 1024 * 1024  # "huge": default size of the streamed text (x-fake-size)
SLOW_SECONDS = 5.0
DRIP_SECONDS = 0.02


class ServerThread:
    """Runs an aiohttp ``web.Application`` on 127.0.0.1:<free port> in its own loop and thread."""

    def __init__(self, app: web.Application) -> None:
        self.app = app
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, daemon=True, name="fake-upstream")
        self._started: Future[int] = Future()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ServerThread:
        self._thread.start()
        self.port = self._started.result(timeout=10)
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=10)

    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        # bodies arrive as sent (the fake decodes gzip itself and keeps the bytes)
        runner = web.AppRunner(
            self.app, access_log=None, shutdown_timeout=0.2, auto_decompress=False
        )
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        self._started.set_result(runner.addresses[0][1])
        try:
            await self._stop.wait()
        finally:
            await runner.cleanup()


class FakeUpstream:
    """The fake API. ``received`` lists what reached it; ``built`` maps message id -> message."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.built: dict[str, dict[str, Any]] = {}
        self.streaming = 0  # streams being sent now, and the most at once
        self.max_streaming = 0
        self._ids = itertools.count(1)
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/messages", self.messages)
        app.router.add_post("/v1/messages/count_tokens", self.count_tokens)
        app.router.add_post("/v1/chat/completions", self.chat)
        app.router.add_route("*", "/{tail:.*}", self.other)
        self.server = ServerThread(app)

    @property
    def url(self) -> str:
        return self.server.url

    async def _receive(self, request: web.Request) -> dict[str, Any]:
        raw = await request.read()
        encoding = request.headers.get("Content-Encoding", "")
        try:  # a bomb or a broken stream is kept as bytes (16 MiB of it at most)
            data = (
                zlib.decompressobj(47).decompress(raw, 16 << 20)
                if encoding in ("gzip", "deflate")
                else raw
            )
            body = (
                orjson.loads(data)
                if data and not encoding.startswith(("br", "zstd"))
                else ({"_bytes": data} if data else None)
            )
        except (orjson.JSONDecodeError, zlib.error):
            body = {"_bytes": raw}
        self.received.append(
            {
                "method": request.method,
                "path": request.path,
                "query": request.query_string,
                "headers": dict(request.headers),
                "body": body,
                "raw": raw,
                "encoding": encoding,
            }
        )
        return body if isinstance(body, dict) and "_bytes" not in body else {}

    # -- Anthropic -----------------------------------------------------------------

    async def messages(self, request: web.Request) -> web.StreamResponse:
        body = await self._receive(request)
        mode = request.headers.get("x-fake-mode", "")
        if mode == "500":
            return _anthropic_error(500, "api_error", "Internal server error")
        if mode == "429":
            return _anthropic_error(429, "rate_limit_error", "Slow down", {"retry-after": "7"})
        if mode == "overflow":  # Anthropic's two wordings of a prompt too large
            size, cap = int(request.headers.get("x-fake-input", 195_000)), body.get("max_tokens")
            said = (
                f"prompt is too long: {size} tokens > {OVERFLOW_LIMIT} maximum"
                if size > OVERFLOW_LIMIT
                else (
                    f"input length and `max_tokens` exceed context limit: {size} + {cap} > "
                    f"{OVERFLOW_LIMIT}, decrease input length or `max_tokens` and try again"
                )
            )
            return _anthropic_error(400, "invalid_request_error", said)
        if mode == "slow":
            await asyncio.sleep(SLOW_SECONDS)
        if mode == "hang":
            await asyncio.sleep(HANG_SECONDS)
        if mode == "close":  # hang up before any answer
            assert request.transport is not None
            request.transport.abort()
            return web.Response()
        message = self.build_message(body)
        if mode == "huge":  # one long text, streamed in 64 KB deltas
            size = int(request.headers.get("x-fake-size", HUGE_BYTES))
            message["content"] = [{"type": "text", "text": "x" * size}]
        if not body.get("stream"):
            response = web.json_response(message, dumps=lambda v: orjson.dumps(v).decode())
            if mode == "gzip":
                response.enable_compression()
            return response
        return await self._stream_message(request, message, mode)

    def build_message(self, body: dict[str, Any]) -> dict[str, Any]:
        """A reply that echoes the last user text, plus a tool call when tools were offered."""
        n = next(self._ids)
        echo = _last_user_text(body)
        content: list[dict[str, Any]] = [
            {"type": "text", "text": f"Reply {n} to: {echo} — ünïcödé \u2028 ok"}
        ]
        if body.get("tools"):
            content.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{n:04d}",
                    "name": body["tools"][0]["name"],
                    "input": {"path": f"/tmp/{n}.txt", "lines": [1, 2, 3], "opts": {"echo": echo}},
                }
            )
        message = {
            "id": f"msg_{n:06d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-test"),
            "content": content,
            "stop_reason": "tool_use" if body.get("tools") else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": 100 + n,
                "cache_creation_input_tokens": 7,
                "cache_read_input_tokens": 50,
                "output_tokens": 20 + n,
            },
        }
        self.built[message["id"]] = message
        return message

    async def _stream_message(
        self, request: web.Request, message: dict[str, Any], mode: str
    ) -> web.StreamResponse:
        self.streaming += 1
        self.max_streaming = max(self.max_streaming, self.streaming)
        try:
            return await self._send_events(request, message, mode)
        except ConnectionError:  # the proxy hung up (its client left): fine
            return web.Response()
        finally:
            self.streaming -= 1

    async def _send_events(
        self, request: web.Request, message: dict[str, Any], mode: str
    ) -> web.StreamResponse:
        resp = web.StreamResponse(
            headers={"content-type": "text/event-stream", "cache-control": "no-cache"}
        )
        await resp.prepare(request)
        for i, (event, data) in enumerate(
            anthropic_events(message, 65536 if mode == "huge" else 0)
        ):
            await resp.write(encode_event(event, data))
            if mode == "reset" and i == 3:
                await asyncio.sleep(0.05)  # let the proxy receive what was sent
                assert request.transport is not None
                request.transport.abort()
                return resp
            if mode == "stall" and i == 2:
                await asyncio.sleep(SLOW_SECONDS)
            if mode == "drip":
                await asyncio.sleep(DRIP_SECONDS)
            await asyncio.sleep(0)
        await resp.write_eof()
        return resp

    async def count_tokens(self, request: web.Request) -> web.Response:
        body = await self._receive(request)
        return web.json_response({"input_tokens": 10 + len(orjson.dumps(body))})

    async def other(self, request: web.Request) -> web.Response:
        await self._receive(request)
        return web.json_response(
            {"data": [{"id": "claude-test", "type": "model"}], "beta": request.query.get("beta")},
            headers={"set-cookie": "session=COOKIE-SECRET; Path=/"},
        )

    # -- OpenAI --------------------------------------------------------------------

    async def chat(self, request: web.Request) -> web.StreamResponse:
        body = await self._receive(request)
        n = next(self._ids)
        text = f"Chat {n} to: {_last_user_text(body)}"
        usage = {
            "prompt_tokens": 300,
            "completion_tokens": 12,
            "total_tokens": 312,
            "prompt_tokens_details": {"cached_tokens": 256},
        }
        completion = {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": 1700000000,
            "model": body.get("model", "gpt-test"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": usage,
        }
        self.built[completion["id"]] = completion
        if not body.get("stream"):
            return web.json_response(completion)
        return await stream_chat(request, completion)


def anthropic_events(message: dict[str, Any], piece: int = 0) -> list[tuple[str, dict[str, Any]]]:
    """The event sequence the Messages API streams for ``message`` (text deltas of
    ``piece`` characters; 7 by default)."""
    start = {
        **message,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**message["usage"], "output_tokens": 1},
    }
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
    ]
    for i, block in enumerate(message["content"]):
        if block["type"] == "text":
            first = {"type": "text", "text": ""}
            text = block["text"]
            step = piece or 7
            deltas = [
                {"type": "text_delta", "text": text[j : j + step]}
                for j in range(0, len(text), step)
            ]
        else:
            first = {**block, "input": {}}
            raw = orjson.dumps(block["input"]).decode()
            deltas = [
                {"type": "input_json_delta", "partial_json": raw[j : j + 9]}
                for j in range(0, len(raw), 9)
            ]
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": first},
            )
        )
        events += [
            ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d})
            for d in deltas
        ]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": message["usage"]["output_tokens"]},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def encode_event(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {orjson.dumps(data).decode()}\n\n".encode()


def anthropic_sse(message: dict[str, Any]) -> bytes:
    """The exact bytes the fake streams for ``message``."""
    return b"".join(encode_event(e, d) for e, d in anthropic_events(message))


async def stream_chat(request: web.Request, completion: dict[str, Any]) -> web.StreamResponse:
    """``completion`` streamed as OpenAI Chat chunks, then ``[DONE]``."""
    resp = web.StreamResponse(headers={"content-type": "text/event-stream"})
    await resp.prepare(request)
    for chunk in chat_chunks(completion):
        await resp.write(b"data: " + orjson.dumps(chunk) + b"\n\n")
    await resp.write(b"data: [DONE]\n\n")
    await resp.write_eof()
    return resp


def chat_chunks(completion: dict[str, Any]) -> list[dict[str, Any]]:
    """Chat Completions stream chunks, ending with the usage-only chunk."""
    base = {
        "id": completion["id"],
        "object": "chat.completion.chunk",
        "created": completion["created"],
        "model": completion["model"],
    }
    text = completion["choices"][0]["message"]["content"]
    chunks = [
        {
            **base,
            "choices": [
                {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}
            ],
        }
    ]
    chunks += [
        {
            **base,
            "choices": [{"index": 0, "delta": {"content": text[j : j + 5]}, "finish_reason": None}],
        }
        for j in range(0, len(text), 5)
    ]
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    chunks.append({**base, "choices": [], "usage": completion["usage"]})
    return chunks


def _anthropic_error(
    status: int, kind: str, message: str, headers: dict[str, str] | None = None
) -> web.Response:
    return web.json_response(
        {"type": "error", "error": {"type": kind, "message": message}},
        status=status,
        headers=headers,
    )


def _last_user_text(body: dict[str, Any]) -> str:
    for msg in reversed(body.get("messages") or []):
        if msg.get("role") == "user":
            content = msg.get("content")
            if isinstance(content, str):
                return content
            return " ".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def read_lines(path: str | Path, lenient: bool = False) -> list[dict[str, Any]]:
    """Every line of a recording, parsed (``lenient``: a last line cut short is left out)."""
    lines = [line for line in Path(path).read_bytes().splitlines() if line.strip()]
    if lenient and lines:
        try:
            orjson.loads(lines[-1])
        except orjson.JSONDecodeError:
            lines.pop()
    return [orjson.loads(line) for line in lines]


def exchanges(proxy: ProxyThread, count: int, timeout: float = 10.0) -> list[dict[str, Any]]:
    """Wait until ``count`` exchanges are recorded, then return them (in file order)."""
    assert proxy.wait_for_records(count, timeout), f"fewer than {count} exchanges recorded"
    records = [r for r in read_lines(proxy.out) if r["type"] == "exchange"]
    assert len(records) == count
    return records
