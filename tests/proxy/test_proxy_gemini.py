"""Gemini through the proxy: the real google-genai SDK and Gemini CLI's own requests against a
fake Gemini API on 127.0.0.1, recorded, redacted and read back as Gemini calls."""

from __future__ import annotations

import json
import lzma
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gemini_fake import CANDIDATES, THOUGHTS, FakeGemini
from proxy_fakes import exchanges

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.ingest import load
from ctxviewer.jsonish import js_dumps
from ctxviewer.model import AUXILIARY, MAIN, THINKING
from ctxviewer.proxy import ProxyThread

genai = pytest.importorskip("google.genai", reason="google-genai is a test dependency")
types = pytest.importorskip("google.genai.types")

KEY = "gk-test-SECRET-0123"
CAPTURE = Path(__file__).parents[1] / "data" / "agents" / "gemini-cli-0.61.0" / "direct"


@pytest.fixture
def fake() -> Iterator[FakeGemini]:
    server = FakeGemini().start()
    yield server
    server.stop()


@pytest.fixture
def gproxy(fake: FakeGemini, tmp_path: Path) -> Iterator[ProxyThread]:
    proxy = ProxyThread(
        port=0,
        out=tmp_path / "gemini.rec.jsonl",
        gemini_upstream=fake.url,
        upstream="http://127.0.0.1:9",
        openai_upstream="http://127.0.0.1:9",
        timeout=5.0,
    )
    proxy.start()
    yield proxy
    proxy.stop()


WEATHER = {
    "name": "get_weather",
    "description": "Weather of a city",
    "parameters": {
        "type": "OBJECT",
        "properties": {"city": {"type": "STRING"}},
        "required": ["city"],
    },
}


def test_the_sdk_streams_and_counts_through_the_proxy(
    gproxy: ProxyThread, fake: FakeGemini
) -> None:
    client = genai.Client(api_key=KEY, http_options=types.HttpOptions(base_url=gproxy.url))
    config = types.GenerateContentConfig(
        system_instruction="You are a test agent.",
        tools=[types.Tool(function_declarations=[types.FunctionDeclaration(**WEATHER)])],
    )
    whole = client.models.generate_content(
        model="gemini-3.8-flash", contents="Hello?", config=config
    )
    pieces = [
        c.text or ""
        for c in client.models.generate_content_stream(
            model="gemini-3.8-flash", contents="Stream it.", config=config
        )
    ]
    counted = client.models.count_tokens(model="gemini-3.8-flash", contents="Count me.")
    assert whole.text == "Fake answer." and "".join(pieces) == "Fake answer."
    assert counted.total_tokens > 0
    assert [r["key"] for r in fake.received] == [KEY] * 3  # forwarded as sent
    assert fake.received[1]["query"].get("alt") == "sse"

    records = exchanges(gproxy, 3)
    assert [r["api"] for r in records] == ["gemini", "gemini", "gemini-count-tokens"]
    assert KEY not in Path(gproxy.out).read_text()
    for rec, sent in zip(records[:2], fake.received[:2], strict=True):
        assert rec["request"]["headers"]["x-goog-api-key"] == "[redacted]"
        assert rec["request"]["body"] == sent["body"]
        prompt = rec["response"]["body"]["usageMetadata"]["promptTokenCount"]
        assert rec["usage"] == {
            "input_tokens": prompt,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": CANDIDATES + THOUGHTS,
        }
    streamed = records[1]["response"]
    assert streamed["stream"] is True
    parts = streamed["body"]["candidates"][0]["content"]["parts"]
    assert parts == [{"text": "weighing it", "thought": True}, {"text": "Fake answer."}]

    s = load(str(gproxy.out))
    assert [r.api for r in s.requests] == ["gemini", "gemini"]
    for req in s.requests:
        assert req.model == "gemini-3.8-flash" and req.complete
        assert "".join(b.text for b in req.system) == "You are a test agent."
        assert [t.name for t in req.tools] == ["get_weather"]
        assert req.usage is not None and req.usage.output_tokens == CANDIDATES + THOUGHTS
        assert req.response is not None and req.response.blocks[0].kind == THINKING
    a = Analysis(s)
    assert a.identity.profile.id == "gemini-client"  # the SDK, not Gemini CLI
    assert a.window == 1_048_576


def test_a_key_in_the_query_is_forwarded_and_never_recorded(
    gproxy: ProxyThread, fake: FakeGemini
) -> None:
    body = json.dumps({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}).encode()
    url = f"{gproxy.url}/v1beta/models/gemini-3.8-flash:generateContent?key={KEY}"
    req = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert json.loads(resp.read())["candidates"]
    assert fake.received[0]["key"] == KEY
    (record,) = exchanges(gproxy, 1)
    assert KEY not in json.dumps(record) and "key=[redacted]" in record["upstream"]


def _captured() -> list[dict[str, Any]]:
    lines = lzma.decompress((CAPTURE / "fake.jsonl.xz").read_bytes()).splitlines()  # the fake's
    return [r for r in map(json.loads, lines) if r.get("method") == "POST"]


def test_gemini_clis_own_requests_read_with_its_window_and_threshold(
    gproxy: ProxyThread, fake: FakeGemini
) -> None:
    """Gemini CLI 0.61.0's requests as captured (headers, path, query, body), sent through the
    proxy: recognised by GeminiCLI-tui/0.61.0, its router's calls are side calls, and the
    system prompt and tools are what was sent."""
    sent = _captured()
    for r in sent:
        headers = {
            k: v
            for k, v in r["headers"].items()
            if k.lower() in ("user-agent", "x-goog-api-client", "content-type")
        }
        headers["x-goog-api-key"] = KEY
        url = f"{gproxy.url}{r['path']}" + (f"?{r['query']}" if r["query"] else "")
        req = urllib.request.Request(url, json.dumps(r["body"]).encode(), headers)
        with urllib.request.urlopen(req, timeout=10) as resp:
            resp.read()
    exchanges(gproxy, len(sent))
    a = Analysis(load(str(gproxy.out)))
    s = a.session
    assert a.identity.label == "Gemini CLI 0.61.0" and a.identity.rules_note is None
    assert a.window == 1_048_576 and a.thresholds.auto == 524_288
    routed = ["Task Routing AI" in r["body"]["systemInstruction"]["parts"][0]["text"] for r in sent]
    assert [r.role for r in s.requests] == [AUXILIARY if x else MAIN for x in routed]
    est = a.estimator
    for i, r in enumerate(sent):
        if routed[i]:
            continue
        b = a.breakdown(i)
        system = est.count(r["body"]["systemInstruction"]["parts"][0]["text"])
        tools = sum(
            est.count(js_dumps(d)) for t in r["body"]["tools"] for d in t["functionDeclarations"]
        )
        assert abs(b.category("system_prompt").tokens - system) <= 0.05 * system
        shown = b.category("builtin_tools").tokens + b.category("mcp_tools").tokens
        assert abs(shown - tools) <= 0.05 * tools
