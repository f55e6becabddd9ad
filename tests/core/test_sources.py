"""Every source of the context over a session: tokens x requests, and what it cost."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.insights import session_cost, session_sources
from ctxviewer.analysis.pricing import load_prices
from ctxviewer.analysis.tokens.estimators import get_estimator
from ctxviewer.cli import main
from ctxviewer.ingest import load
from ctxviewer.model import TEXT, TOOL_RESULT, TOOL_USE, Block, Message, Request, Session, Usage

SONNET = "claude-sonnet-4-5"


def corpus_logs(corpus: Path) -> list[Path]:
    return sorted(p for p in corpus.glob("*/*") if p.suffix in (".jsonl", ".json"))


def test_sources_add_up_to_the_prompts_and_their_cost_on_every_corpus_log(corpus):
    prices = load_prices()
    for path in corpus_logs(corpus):
        s = load(str(path))
        a = Analysis(s)
        src = session_sources(s, a.estimator, prices)
        prompts = sum(r.api_prompt_tokens or 0 for r in s.requests)
        assert src.prompt_tokens == prompts, path.name
        if prompts:
            assert src.token_requests == pytest.approx(prompts, rel=0.05), path.name
        cost = session_cost(s, prices)
        priced = [c for c in cost.requests if c.total_usd is not None]
        if priced and not cost.unpriced_requests:
            prompt_usd = sum(
                (c.uncached_input_usd or 0) + (c.cache_write_usd or 0) + (c.cache_read_usd or 0)
                for c in priced
            )
            assert sum(x.cost_usd or 0 for x in src.sources) == pytest.approx(
                prompt_usd, rel=0.01, abs=1e-6
            ), path.name
        for x in src.sources:
            assert x.requests == tuple(sorted(set(x.requests)))
            assert x.tokens <= x.token_requests <= x.tokens * len(x.requests) + len(x.requests)
            for one in x.largest:
                assert set(one.requests) <= set(x.requests)
                assert one.token_requests <= x.token_requests


def req(i: int, messages: tuple[Message, ...], usage: Usage) -> Request:
    return Request(
        i, SONNET, f"2025-11-01T00:0{i}:00Z", (Block(TEXT, "S" * 400),), (), messages, usage, True
    )


def test_tokens_times_requests_and_cache_reads_and_writes_by_hand():
    user = Message("user", (Block(TEXT, "u" * 400),))
    call = Message(
        "assistant", (Block(TEXT, "a" * 400), Block(TOOL_USE, "{}", name="Read", ref="t1"))
    )
    result = Message("user", (Block(TOOL_RESULT, "r" * 800, ref="t1"),))
    est = get_estimator("chars4")
    head = est.block(Block(TEXT, "S" * 400))
    first = head + est.message(user)
    second = first + est.message(call) + est.message(result)
    s = Session(
        None,
        "test",
        [
            req(0, (user,), Usage(0, first, 0, 10)),
            req(1, (user, call, result), Usage(0, second - first, first, 10)),
        ],
    )
    src = {(x.kind, x.name): x for x in session_sources(s, est, load_prices()).sources}
    p = load_prices().lookup(SONNET)
    system = src[("system", "system prompt")]
    assert (system.tokens, system.requests, system.token_requests) == (head, (0, 1), 2 * head)
    # written to the cache by the first request, read from it by the second
    assert system.cost_usd == pytest.approx(head * (p.cache_write_5m + p.cache_read) / 1e6)
    results = src[("tool_results", "Read")]  # the result is named by its call
    assert results.requests == (1,) and results.cost_usd == pytest.approx(
        results.tokens * p.cache_write_5m / 1e6
    )
    assert results.largest[0].requests == (1,)
    assert sum(x.token_requests for x in src.values()) == first + second


def test_insights_json_lists_the_sources(corpus, capsys):
    path = corpus / "claude-trace" / "badlogic__lemmy__apps_claude-trace_test_test-traffic.jsonl"
    assert main(["insights", str(path), "--json"]) == 0
    out = orjson.loads(capsys.readouterr().out)
    sources = out["sources"]
    assert sources and {"kind", "name", "tokens", "requests", "token_requests", "cost_usd"} <= set(
        sources[0]
    )
    costs = [x["cost_usd"] for x in sources]
    assert costs == sorted(costs, reverse=True)  # the costliest first
    kinds = {x["kind"] for x in sources}
    assert {"system", "tool", "user", "assistant", "tool_results", "memory"} <= kinds
    assert sum(x["token_requests"] for x in sources) == pytest.approx(
        sum(
            r["tokens"]["input"]
            + r["tokens"]["cache_read"]
            + r["tokens"]["cache_write_5m"]
            + r["tokens"]["cache_write_1h"]
            for r in out["cost"]["requests"]
        ),
        rel=0.05,
    )
    assert main(["insights", str(path)]) == 0
    text = capsys.readouterr().out
    assert "Sources: " in text and "tokens x requests (the prompts sent: " in text
