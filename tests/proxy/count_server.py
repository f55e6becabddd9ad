"""A fake ``count_tokens`` endpoint on 127.0.0.1 for the real ``anthropic`` SDK."""

from __future__ import annotations

import asyncio
import json
import threading

from aiohttp import web


class CountServer:
    """POST /v1/messages/count_tokens -> {"input_tokens": len(body) // 4}."""

    def __init__(self) -> None:
        self.calls = 0
        self.fail: list[tuple[int, dict[str, str]]] = []  # responses to give before success
        self.always: int | None = None
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._lock = threading.Lock()

    async def _handle(self, request: web.Request) -> web.Response:
        raw = await request.read()
        with self._lock:
            self.calls += 1
            fail = self.fail.pop(0) if self.fail else None
        if self.always is not None:
            fail = (self.always, {})
        if fail is not None:
            status, headers = fail
            return web.json_response(
                {"type": "error", "error": {"type": "x", "message": "no"}},
                status=status,
                headers=headers,
            )
        body = json.loads(raw)
        assert body["messages"] and body["model"]
        return web.json_response({"input_tokens": len(raw) // 4})

    def start(self) -> None:
        threading.Thread(target=self._run, daemon=True).start()
        assert self._ready.wait(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_post("/v1/messages/count_tokens", self._handle)
        self._runner = web.AppRunner(app)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._ready.set()
        self._loop.run_forever()

    def stop(self) -> None:
        fut = asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop)
        fut.result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
