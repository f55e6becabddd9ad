"""The proxy's pure parts: redaction, header rules, routing, usage, body decoding."""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from ctxviewer.ingest.api.sse import parse_sse, reassemble_anthropic
from ctxviewer.proxy.exchange import Exchange, decode_content, parse_json
from ctxviewer.proxy.headers import (
    client_response_headers,
    decodable_accept_encoding,
    upstream_request_headers,
)
from ctxviewer.proxy.redact import REDACTED, redact_headers, redact_url
from ctxviewer.proxy.routes import classify, join_url
from ctxviewer.proxy.server import client_host, is_loopback
from ctxviewer.proxy.usage import normalise_usage

REPO = Path(__file__).resolve().parents[2]


def test_redact_headers() -> None:
    headers = [
        ("X-Api-Key", "k"),
        ("Authorization", "Bearer k"),
        ("Cookie", "a=1"),
        ("Set-Cookie", "b=2"),
        ("api-key", "k"),
        ("Proxy-Authorization", "Basic k"),
        ("Accept", "a"),
        ("accept", "b"),
        ("anthropic-version", "2023-06-01"),
    ]
    assert redact_headers(headers) == {
        "x-api-key": REDACTED,
        "authorization": REDACTED,
        "cookie": REDACTED,
        "set-cookie": REDACTED,
        "api-key": REDACTED,
        "proxy-authorization": REDACTED,
        "accept": "a, b",
        "anthropic-version": "2023-06-01",
    }


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://api.x.com/v1/messages?beta=true", "https://api.x.com/v1/messages?beta=true"),
        ("https://h/v1?key=SECRET&alt=sse", "https://h/v1?key=[redacted]&alt=sse"),
        ("https://user:SECRET@h/v1", "https://[redacted]@h/v1"),
    ],
)
def test_redact_url(url: str, expected: str) -> None:
    assert redact_url(url) == expected


ANTHROPIC_SDK = {"anthropic-version": "2023-06-01", "x-api-key": "k", "Authorization": "Bearer k"}
OPENAI_SDK = {"Authorization": "Bearer sk-openai"}


@pytest.mark.parametrize(
    ("method", "path", "headers", "api", "side"),
    [
        ("POST", "/v1/messages", OPENAI_SDK, "anthropic", "anthropic"),  # the path decides
        ("POST", "/v1/messages/count_tokens", None, "anthropic-count-tokens", "anthropic"),
        ("POST", "/v1/messages/batches", None, "other", "anthropic"),
        ("GET", "/v1/messages", None, "other", "anthropic"),
        ("POST", "/v1/chat/completions", ANTHROPIC_SDK, "openai-chat", "openai"),
        ("POST", "/chat/completions", OPENAI_SDK, "openai-chat", "openai"),  # base URL without /v1
        ("POST", "/v1/responses", None, "openai-responses", "openai"),
        ("GET", "/v1/responses/resp_1", None, "openai-other", "openai"),
        ("POST", "/v1/embeddings", OPENAI_SDK, "openai-other", "openai"),
        ("POST", "/embeddings", OPENAI_SDK, "openai-other", "openai"),
        # both providers have these: the SDK's headers tell them apart
        ("GET", "/v1/models", ANTHROPIC_SDK, "other", "anthropic"),
        ("GET", "/v1/models", OPENAI_SDK, "openai-other", "openai"),
        ("GET", "/v1/models/gpt-5", OPENAI_SDK, "openai-other", "openai"),
        # Gemini (GOOGLE_GEMINI_BASE_URL): its versions' paths, and a model's :method anywhere
        ("POST", "/v1beta/models/gemini-2.5-pro:generateContent", None, "gemini", "gemini"),
        ("POST", "/v1beta/models/gemini-3.8-flash:streamGenerateContent", None, "gemini", "gemini"),
        (
            "POST",
            "/v1/models/gemini-2.5-pro:countTokens",
            OPENAI_SDK,
            "gemini-count-tokens",
            "gemini",
        ),
        ("POST", "/v1beta/models/gemini-2.5-pro:embedContent", None, "gemini-other", "gemini"),
        ("GET", "/v1beta/models", None, "gemini-other", "gemini"),
        ("POST", "/upload/v1beta/files", None, "gemini-other", "gemini"),
        # none of them: never forwarded
        ("GET", "/", None, "unrouted", None),
        ("POST", "/v2/things:generateContent", None, "unrouted", None),
        ("POST", "/v1/messagesX", ANTHROPIC_SDK, "unrouted", None),
        ("GET", "/admin", OPENAI_SDK, "unrouted", None),
    ],
)
def test_classify(
    method: str, path: str, headers: dict[str, str] | None, api: str, side: str | None
) -> None:
    assert classify(method, path, headers) == (api, side)


def test_join_url_keeps_prefix_and_query() -> None:
    assert join_url("https://gw.example/anthropic/", "/v1/messages?beta=true") == (
        "https://gw.example/anthropic/v1/messages?beta=true"
    )


def test_request_headers_drop_hop_by_hop_and_host() -> None:
    sent = {
        "Host": "127.0.0.1:8787",
        "Connection": "keep-alive, X-Hop",
        "X-Hop": "1",
        "Keep-Alive": "timeout=5",
        "Transfer-Encoding": "chunked",
        "Content-Length": "9",
        "Accept-Encoding": "gzip, br",
        "x-api-key": "k",
        "anthropic-beta": "b",
    }
    out = upstream_request_headers(sent)
    assert dict(out) == {"x-api-key": "k", "anthropic-beta": "b", "Accept-Encoding": "gzip"}


def test_response_headers_keep_encoding_and_length() -> None:
    got = {
        "Content-Encoding": "gzip",
        "Content-Length": "12",
        "Transfer-Encoding": "chunked",
        "Connection": "close",
        "request-id": "req_1",
    }
    assert dict(client_response_headers(got)) == {
        "Content-Encoding": "gzip",
        "Content-Length": "12",
        "request-id": "req_1",
    }


@pytest.mark.parametrize(
    ("client", "forwarded"),
    [
        (None, "identity"),
        ("", "identity"),
        ("br", "identity"),
        ("gzip, deflate, br, zstd", "gzip, deflate"),
        ("gzip;q=0.5, identity", "gzip;q=0.5, identity"),
    ],
)
def test_decodable_accept_encoding(client: str | None, forwarded: str) -> None:
    assert decodable_accept_encoding(client) == forwarded


def test_usage_normalised_per_api() -> None:
    anthropic = {
        "usage": {
            "input_tokens": 3,
            "cache_read_input_tokens": 5,
            "output_tokens": 2,
            "service_tier": "standard",
        }
    }
    assert normalise_usage("anthropic", anthropic) == {
        "input_tokens": 3,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 5,
        "output_tokens": 2,
    }
    chat = {
        "usage": {
            "prompt_tokens": 100,
            "completion_tokens": 9,
            "prompt_tokens_details": {"cached_tokens": 64},
        }
    }
    assert normalise_usage("openai-chat", chat) == {
        "input_tokens": 36,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 64,
        "output_tokens": 9,
    }
    responses = {
        "usage": {
            "input_tokens": 50,
            "output_tokens": 4,
            "input_tokens_details": {"cached_tokens": 10},
        }
    }
    assert normalise_usage("openai-responses", responses) == {
        "input_tokens": 40,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 10,
        "output_tokens": 4,
    }
    assert normalise_usage("anthropic-count-tokens", {"input_tokens": 9}) is None
    assert normalise_usage("anthropic", {"type": "error"}) is None
    assert normalise_usage("other", None) is None


def test_parse_json() -> None:
    assert parse_json(b"") is None
    assert parse_json(b'{"a": 1}') == {"a": 1}
    assert parse_json(b"<html>") == {"_raw": "<html>"}


def test_decode_content() -> None:
    data = b'{"x": "y"}' * 50
    assert decode_content(gzip.compress(data), "gzip") == data
    assert decode_content(zlib.compress(data), "deflate") == data
    raw_deflate = zlib.compressobj(wbits=-15)
    assert decode_content(raw_deflate.compress(data) + raw_deflate.flush(), "deflate") == data
    assert (
        decode_content(gzip.compress(data)[:40], "gzip")
        == data[: len(decode_content(gzip.compress(data)[:40], "gzip") or b"")]
    )  # a cut stream: its start
    assert decode_content(data, "") == data
    assert "not a valid br stream" in decode_content(b"\x00\x01", "br")


def test_exchange_record_for_an_undecodable_body() -> None:
    ex = Exchange(
        id="ex_000001",
        api="anthropic",
        method="POST",
        path="/v1/messages",
        upstream="https://u/v1/messages",
        request_headers={},
    )
    ex.request_body = b'{"model": "m"}'
    ex.status, ex.response_headers, ex.content_encoding = 200, {"content-encoding": "br"}, "br"
    ex.chunks = [b"\x0b\x02\x80"]
    ex.finish()
    record = ex.to_record()
    assert record["response"]["body"]["_raw"].startswith(
        "[3 bytes, content-encoding br, not decoded: not a valid br stream"
    )
    assert record["request"]["body"] == {"model": "m"} and record["error"] is None


def test_sse_lines_end_only_at_cr_and_lf() -> None:
    """U+2028, U+0085 and \\x1c are legal unescaped in JSON strings: not line ends."""
    text = 'event: a\r\ndata: {"t": "x\u2028y\x85z\x1cw"}\r\n\r\ndata: {"t": 2}\n\n'
    assert list(parse_sse(text)) == [("a", '{"t": "x\u2028y\x85z\x1cw"}'), (None, '{"t": 2}')]
    stream = (
        'event: message_start\ndata: {"type":"message_start","message":{"id":"m",'
        '"content":[],"usage":{}}}\n\nevent: content_block_start\ndata: {"type":'
        '"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        '"delta":{"type":"text_delta","text":"a\u2028b"}}\n\n'
    )
    message = reassemble_anthropic(stream)
    assert message is not None and message["content"] == [{"type": "text", "text": "a\u2028b"}]


def test_hosts() -> None:
    assert client_host("0.0.0.0") == "127.0.0.1" and client_host("::") == "[::1]"
    assert client_host("::1") == "[::1]" and client_host("localhost") == "localhost"
    assert is_loopback("127.0.0.1") and is_loopback("127.1.2.3") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2")


def test_no_qt_in_proxy_or_commands() -> None:
    sources = [*(REPO / "ctxviewer" / "proxy").glob("*.py"), REPO / "ctxviewer/commands/proxy.py"]
    qt = re.compile(r"^\s*(from|import)\s+(PySide6|PyQt|pyqtgraph|shiboken6)", re.M)
    assert sources and not [p.name for p in sources if qt.search(p.read_text())]
    code = (
        "import sys, ctxviewer.proxy, ctxviewer.commands.proxy; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('PySide6', 'pyqtgraph', 'shiboken6')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=True,
    )
    assert result.stdout.strip() == "[]"


def test_secrets_are_redacted_by_rule_not_by_list() -> None:
    from ctxviewer.proxy.redact import redact_text

    headers = redact_headers(
        [
            ("X-Goog-Api-Key", "a"),
            ("Anthropic-Api-Key", "b"),
            ("openai-api-key", "c"),
            ("x-auth-token", "d"),
            ("X-Claude-Code-Session-Id", "s"),
            ("anthropic-beta", "ok"),
        ]
    )
    assert headers == {
        "x-goog-api-key": REDACTED,
        "anthropic-api-key": REDACTED,
        "openai-api-key": REDACTED,
        "x-auth-token": REDACTED,
        "x-claude-code-session-id": "s",
        "anthropic-beta": "ok",
    }
    url = redact_url("https://u:pw@h/v1/m?x-goog-api-key=S1&alt=sse;key=S2&subscription-key=S3")
    assert "S1" not in url and "S2" not in url and "S3" not in url and "pw" not in url
    assert "alt=sse" in url
    message = redact_text("Cannot connect to host http://h:9/v1beta/x?key=S4 [refused]; token=S5")
    assert "S4" not in message and "S5" not in message and "Cannot connect" in message


def test_the_meta_line_holds_no_credential(tmp_path) -> None:
    import json

    from ctxviewer.proxy.recorder import Recorder

    path = tmp_path / "rec.jsonl"
    rec = Recorder(path)
    rec.open(
        {
            "anthropic": "https://user:PASSWORD@gw.example/v1?key=SECRET",
            "openai": "https://api.openai.com",
        }
    )
    rec.close()
    text = path.read_text()
    assert "PASSWORD" not in text and "SECRET" not in text
    meta = json.loads(text.splitlines()[0])
    assert meta["upstreams"]["openai"] == "https://api.openai.com"
