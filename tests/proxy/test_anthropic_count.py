"""The anthropic estimator against a fake count_tokens server, with the real SDK."""

from __future__ import annotations

import json

import pytest

from ctxviewer.analysis.tokens.anthropic import AnthropicCounter, DiskCache, request_body
from ctxviewer.cli import main
from ctxviewer.ingest import load

CAPTURED = "captured/claude-code-2.1.197-tui.claude-trace.jsonl"


@pytest.fixture
def server(count_server):  # noqa: ANN001, ANN201 - tests/conftest.py's fake count_tokens
    return count_server


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
    counter = AnthropicCounter.from_env(
        cache=DiskCache(tmp_path / "c.json"), workers=1, backoff=0.01
    )
    assert counter.prompt(s.requests[0]) is not None
    assert server.calls == 4 and counter.calls == 4


def test_persistent_failure_is_reported_per_row(corpus, server, tmp_path):
    s = _session(corpus)
    server.always = 503
    counter = AnthropicCounter.from_env(
        cache=DiskCache(tmp_path / "c.json"), retries=2, backoff=0.01
    )
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
    argv = [
        "compare",
        str(corpus / CAPTURED),
        "--estimators",
        "anthropic,qwen",
        "--json",
        "--request",
        "last",
    ]
    assert main(argv) == 0
    cats = json.loads(capsys.readouterr().out)["categories"]["estimates"]["anthropic"]
    assert cats["builtin_tools"] > 0 and cats["system_prompt"] > 0 and cats["messages"] > 0


def test_no_key_no_url_is_a_usage_error(corpus, capsys):
    assert main(["compare", str(corpus / CAPTURED), "--estimators", "anthropic"]) == 2
    err = capsys.readouterr().err
    assert "ANTHROPIC_API_KEY" in err and "ANTHROPIC_BASE_URL" in err and err.count("\n") == 1
