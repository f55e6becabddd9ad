"""The anthropic estimator against a fake count_tokens server, with the real SDK."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator

import pytest
from aiohttp import web

from ctxviewer.analysis.anthropic_count import AnthropicCounter, DiskCache, request_body
from ctxviewer.cli import main
from ctxviewer.ingest import load

CAPTURED = "captured/claude-code-2.1.197-tui.claude-trace.jsonl"


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
            return web.json_response({"type": "error", "error": {"type": "x", "message": "no"}},
                                     status=status, headers=headers)
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


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[CountServer]:
    s = CountServer()
    s.start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{s.port}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    yield s
    s.stop()


def _session(corpus):
    return load(str(corpus / CAPTURED))


def test_counts_match_server_rule_and_are_cached(corpus, server, tmp_path):
    s = _session(corpus)
    counter = AnthropicCounter.from_env(cache=DiskCache(tmp_path / "c.json"))
    counter.prefetch(s.requests)
    assert server.calls == len(s.requests)
    for r in s.requests:
        n = counter.prompt(r)
        assert n is not None and n > 0
    assert server.calls == len(s.requests)  # all from the cache
    again = AnthropicCounter.from_env(cache=DiskCache(tmp_path / "c.json"))
    assert again.prompt(s.requests[1]) == counter.prompt(s.requests[1])
    assert server.calls == len(s.requests)  # the disk cache survives a new counter
    body = request_body(s.requests[1])
    assert body["tools"] and body["system"] and body["messages"]


def test_429_retry_after_and_500_backoff(corpus, server, tmp_path):
    s = _session(corpus)
    server.fail = [(429, {"retry-after": "0"}), (500, {}), (429, {"retry-after": "1"})]
    counter = AnthropicCounter.from_env(cache=DiskCache(tmp_path / "c.json"), workers=1,
                                        backoff=0.01)
    assert counter.prompt(s.requests[0]) is not None
    assert server.calls == 4 and counter.calls == 4


def test_persistent_failure_is_reported_per_row(corpus, server, tmp_path):
    s = _session(corpus)
    server.always = 503
    counter = AnthropicCounter.from_env(cache=DiskCache(tmp_path / "c.json"), retries=2,
                                        backoff=0.01)
    assert counter.prompt(s.requests[0]) is None
    assert server.calls == 3 and "503" in (counter.error(s.requests[0]) or "")


def test_cli_second_run_makes_no_api_calls(corpus, server, capsys):
    argv = ["compare", str(corpus / CAPTURED), "--estimators", "anthropic", "--json"]
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out)
    calls = server.calls
    assert calls >= len(first["rows"]) > 0
    assert all(r["estimates"]["anthropic"] for r in first["rows"])
    assert first["summary"]["anthropic"]["n"] == len(first["rows"])
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out) == first
    assert server.calls == calls


def test_cli_categories_with_anthropic(corpus, server, capsys):
    argv = ["compare", str(corpus / CAPTURED), "--estimators", "anthropic,qwen", "--json",
            "--request", "last"]
    assert main(argv) == 0
    cats = json.loads(capsys.readouterr().out)["categories"]["estimates"]["anthropic"]
    assert cats["builtin_tools"] > 0 and cats["system_prompt"] > 0 and cats["messages"] > 0


def test_no_key_no_url_is_a_usage_error(corpus, capsys):
    assert main(["compare", str(corpus / CAPTURED), "--estimators", "anthropic"]) == 2
    err = capsys.readouterr().err
    assert "ANTHROPIC_API_KEY" in err and "ANTHROPIC_BASE_URL" in err and err.count("\n") == 1
