"""Insights: prices, costs, budgets, cache breaks, redundancy, sub-agents, diffs, CLI."""

from __future__ import annotations

import math

import orjson
import pytest

from ctxviewer.analysis.insights import (
    Budget,
    cache_breaks,
    diff_requests,
    evaluate_budget,
    load_prices,
    redundancy,
    request_cost,
    session_cost,
    subagent_runs,
)
from ctxviewer.analysis.tokens.estimators import get_estimator
from ctxviewer.cli import main
from ctxviewer.ingest import load
from ctxviewer.model import (
    BUILTIN,
    COMPACT_BOUNDARY,
    COMPACTION_SUMMARY,
    SYSTEM_REMINDER,
    TEXT,
    TOOL_RESULT,
    TOOL_USE,
    Block,
    Event,
    Message,
    Request,
    Session,
    ToolDef,
    Usage,
)

SONNET = "claude-sonnet-4-5-20250929"
QWEN = get_estimator("qwen")
SUBAGENTS = (
    "claude-code/d-kimuson__claude-code-viewer__mock-global-claude-dir_projects_"
    "sample-project_fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
)
SPOTTER = (
    "claude-code/marot__spotter__test_fixtures_transcripts_"
    "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
)


def req(
    i, messages=(), usage=None, model=SONNET, system=(), tools=(), complete=False, **kw
) -> Request:
    return Request(
        i,
        model,
        f"2025-01-01T00:0{i % 10}:00Z",
        tuple(system),
        tuple(tools),
        tuple(messages),
        usage,
        complete,
        **kw,
    )


def user(text, **kw) -> Message:
    return Message("user", (Block(TEXT, text, **kw),))


def call(name, ref, args) -> Message:
    return Message("assistant", (Block(TOOL_USE, orjson.dumps(args).decode(), name=name, ref=ref),))


def result(ref, text) -> Message:
    return Message("user", (Block(TOOL_RESULT, text, ref=ref),))


USAGE = Usage(
    input_tokens=1_000,
    cache_creation_input_tokens=2_000,
    cache_read_input_tokens=10_000,
    output_tokens=500,
)


# --- prices (the catalogue, the tables and the gateways: tests/core/test_pricing.py) ---


def test_user_price_file_is_merged_over_the_shipped_one(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXVIEWER_HOME", str(tmp_path))
    (tmp_path / "prices.json").write_text(
        orjson.dumps(
            {
                "models": {
                    "my-model": {"input": 2.0, "output": 4.0},
                    "claude-sonnet-4-5": {"input": 1.0, "output": 2.0, "cache_read": 0.5},
                }
            }
        ).decode()
    )
    t = load_prices()
    assert t.user_file == str(tmp_path / "prices.json")
    mine = t.lookup("my-model-20250101")
    assert (mine.input, mine.cache_write_5m, mine.cache_write_1h, mine.cache_read) == (
        2.0,
        2.5,
        4.0,
        0.2,
    )
    assert t.lookup(SONNET).cache_read == 0.5  # the user's entry wins over the catalogue
    assert t.lookup("gpt-4o").input == 2.5  # the catalogue's prices stay


def test_bad_user_price_file_is_a_value_error(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXVIEWER_HOME", str(tmp_path))
    (tmp_path / "prices.json").write_text('{"models": {"x": {"input": 1}}}')
    with pytest.raises(ValueError, match="output"):
        load_prices()


# --- cost ---


def test_request_cost_by_hand():
    c = request_cost(req(0, usage=USAGE), load_prices())
    # 1,000 x $3 + 2,000 x $3.75 + 10,000 x $0.30 + 500 x $15, per million tokens
    assert c.uncached_input_usd == pytest.approx(0.003)
    assert c.cache_write_usd == pytest.approx(0.0075)
    assert c.cache_read_usd == pytest.approx(0.003)
    assert c.output_usd == pytest.approx(0.0075)
    assert c.total_usd == pytest.approx(0.021)
    assert c.hit_rate == pytest.approx(10_000 / 13_000)
    assert [x for _, x in c.waterfall()] == pytest.approx([0.003, 0.0075, 0.003, 0.0075])


def test_one_hour_cache_writes_cost_twice_input():
    u = Usage(0, 2_000, 0, 0, cache_creation_1h_tokens=1_000)
    c = request_cost(req(0, usage=u), load_prices())
    assert c.cache_write_usd == pytest.approx((1_000 * 3.75 + 1_000 * 6.0) / 1e6)


def test_session_cost_saved_and_unknown_models():
    s = Session(
        None,
        "test",
        [
            req(0, usage=USAGE),
            req(1, usage=USAGE),
            req(2, usage=USAGE, model="mystery-1"),
            req(3, usage=None),
        ],
    )
    c = session_cost(s)
    assert c.total_usd is None  # one request has no price: the total is unknown, not $0.042
    assert c.priced_usd == pytest.approx(0.042)
    # without caching: 13,000 x $3 + 500 x $15 per request
    assert c.no_cache_usd == pytest.approx(2 * 0.0465)
    assert c.saved_usd == pytest.approx(2 * 0.0255)
    assert c.unknown_models == ("mystery-1",)
    assert c.unpriced_requests == (2,)
    assert c.requests[2].total_usd is None
    assert c.hit_rate == pytest.approx(30_000 / 39_000)
    assert c.to_json()["requests"][0]["usd"]["total"] == pytest.approx(0.021)
    assert c.to_json()["total_usd"] is None
    assert c.to_json()["priced_usd"] == pytest.approx(0.042)


def test_budget_warning_and_hard_limit():
    s = Session(None, "test", [req(i, usage=USAGE) for i in range(5)])  # $0.021 each
    budget = Budget(0.05, warn_fraction=0.8, hard=True)
    assert budget.warn_at == pytest.approx(0.04)  # 0.8 of the limit
    assert (budget.threshold("warn"), budget.threshold("limit")) == (budget.warn_at, 0.05)
    with pytest.raises(ValueError):
        budget.threshold("hard")
    b = evaluate_budget(session_cost(s), budget)
    assert [(x.kind, x.request) for x in b.crossings] == [("warn", 1), ("limit", 2)]
    assert [x.threshold for x in b.crossings] == [budget.warn_at, budget.limit]
    assert b.crossings[0].spent >= budget.warn_at > session_cost(s).requests[0].total_usd
    assert b.stopped_at == 2 and b.skipped_requests == 2 and b.exceeded
    soft = evaluate_budget(session_cost(s), Budget(1.0))
    assert soft.crossings == () and soft.spent == pytest.approx(0.105)


def test_task_budget_resets_at_each_prompt():
    m0, m1 = user("first task"), user("second task")
    a = Message("assistant", (Block(TEXT, "ok"),))
    reqs = [
        req(0, [m0], USAGE),
        req(1, [m0, a, result("x", "r")], USAGE),
        req(2, [m0, a, result("x", "r"), a, m1], USAGE),
    ]
    s = Session(None, "test", reqs)
    b = evaluate_budget(session_cost(s), Budget(26_000, unit="tokens", scope="task"), reqs)
    assert b.tasks == 2
    assert [(x.kind, x.request, x.task) for x in b.crossings] == [("warn", 1, 0), ("limit", 1, 0)]


# --- cache breaks ---


def _tool(name):
    return ToolDef(name, BUILTIN, f'{{"name":"{name}","input_schema":{{}}}}')


SYSTEM = (Block(TEXT, "You are a coding agent."),)
TOOLS = (_tool("Read"), _tool("Edit"), _tool("Bash"))


def _pair(messages_a, messages_b, tools_b=TOOLS, events_b=(), usage_b=None):
    a = req(0, messages_a, system=SYSTEM, tools=TOOLS, complete=True)
    b = req(
        1, messages_b, system=SYSTEM, tools=tools_b, complete=True, events=events_b, usage=usage_b
    )
    return Session(None, "test", [a, b])


def test_no_break_when_messages_are_appended():
    m0, m1 = user("hello"), Message("assistant", (Block(TEXT, "hi"),))
    assert cache_breaks(_pair([m0], [m0, m1, user("more")]), QWEN) == ()


def test_break_in_tools_when_reordered():
    m0 = user("hello")
    tools = (TOOLS[0], TOOLS[2], TOOLS[1])
    usage = Usage(10, 900, 0, 5)
    (b,) = cache_breaks(_pair([m0], [m0], tools, usage_b=usage), QWEN)
    assert (b.section, b.position, b.kind) == ("tools", 1, "tools_reordered")
    assert (b.tokens, b.tokens_source) == (900, "api")


def test_break_at_message_zero_when_a_reminder_is_edited():
    r0 = Message(
        "user",
        (
            Block(TEXT, "<system-reminder>today is Monday</system-reminder>", tag=SYSTEM_REMINDER),
            Block(TEXT, "fix the bug"),
        ),
    )
    r1 = Message(
        "user",
        (
            Block(TEXT, "<system-reminder>today is Tuesday</system-reminder>", tag=SYSTEM_REMINDER),
            Block(TEXT, "fix the bug"),
        ),
    )
    a = Message("assistant", (Block(TEXT, "looking"),))
    (b,) = cache_breaks(_pair([r0, a], [r1, a, user("go on")]), QWEN)
    assert (b.section, b.position, b.block, b.kind) == ("messages", 0, 0, "system_reminder_edited")
    # no usage: everything from message 0 on, estimated
    expected = sum(QWEN.block(x) for m in (r1, a, user("go on")) for x in m.blocks)
    assert (b.tokens, b.tokens_source) == (expected, "estimate")


def test_break_in_messages_on_compaction():
    ms = [user(f"step {i}") for i in range(6)]
    summary = Message("user", (Block(TEXT, "summary of the work", tag=COMPACTION_SUMMARY),))
    (b,) = cache_breaks(
        _pair(ms, [summary, user("next")], events_b=(Event(COMPACT_BOUNDARY),)), QWEN
    )
    assert (b.section, b.position, b.kind) == ("messages", 0, "compaction")


def test_transcript_break_from_usage_only():
    m0 = user("hello")
    prev = req(0, [m0], Usage(5, 1_000, 50_000, 10))
    cur = req(1, [m0, user("x")], Usage(5, 40_000, 11_000, 10))
    same = req(2, [m0, user("x"), user("y")], Usage(5, 300, 51_000, 10))
    (b,) = cache_breaks(Session(None, "t", [prev, cur, same]), QWEN)
    assert (b.request, b.section, b.kind, b.tokens) == (1, "unknown", "unknown", 40_000)
    assert b.lost_cache_read == 51_005 - 11_000


# --- redundancy ---


def _read_edit_read_session():
    prompt = user("update a.py")
    read1 = call("Read", "r1", {"file_path": "/src/a.py"})
    out1 = result("r1", "def a():\n    return 1\n" * 20)
    edit = call("Edit", "e1", {"file_path": "/src/a.py", "old_string": "1", "new_string": "2"})
    ok = result("e1", "The file has been updated.")
    read2 = call("Read", "r2", {"file_path": "/src/a.py"})
    out2 = result("r2", "def a():\n    return 2\n" * 20)
    done = Message("assistant", (Block(TEXT, "done"),))
    hist = [prompt, read1, out1, edit, ok, read2, out2, done, user("thanks")]
    reqs = [
        req(0, hist[:1]),
        req(1, hist[:3]),
        req(2, hist[:5]),
        req(3, hist[:7]),
        req(4, hist[:9]),
    ]
    return Session(None, "test", reqs), out1


def test_read_superseded_by_an_edit_is_stale_with_its_carry_cost():
    s, out1 = _read_edit_read_session()
    rep = redundancy(s, QWEN)
    (f,) = rep.findings
    tokens = math.ceil(len(out1.blocks[0].text) / 4)
    assert (f.kind, f.path, f.ref, f.tokens) == ("stale_read", "/src/a.py", "r1", tokens)
    # the Edit first appears in request 2; requests 2, 3 and 4 still carry the old output
    assert (f.first_request, f.since_request, f.carried_by) == (1, 2, 3)
    assert f.carry_tokens == 3 * tokens
    assert f.trim_drops  # trim drops reads that were read again later
    assert rep.to_json()["by_kind"] == {"stale_read": {"count": 1, "carry_tokens": 3 * tokens}}


def test_repeated_read_and_old_todos():
    p = user("go")
    r1 = call("Read", "r1", {"file_path": "/b.py"})
    o1 = result("r1", "x = 1\n" * 100)
    t1 = call("TodoWrite", "t1", {"todos": [{"content": "a", "status": "in_progress"}]})
    k1 = result("t1", "ok")
    r2 = call("Read", "r2", {"file_path": "/b.py"})
    o2 = result("r2", "x = 1\n" * 100)
    t2 = call("TodoWrite", "t2", {"todos": [{"content": "a", "status": "completed"}]})
    k2 = result("t2", "ok")
    hist = [p, r1, o1, t1, k1, r2, o2, t2, k2]
    s = Session(None, "t", [req(i, hist[:n]) for i, n in enumerate((1, 3, 5, 7, 9))])
    kinds = {f.kind: f for f in redundancy(s, QWEN).findings}
    assert set(kinds) == {"repeated_read", "old_todo"}  # identical outputs not double-counted
    assert kinds["repeated_read"].carried_by == 2 and kinds["repeated_read"].trim_drops
    todo = kinds["old_todo"]
    assert todo.tokens == QWEN.block(t1.blocks[0]) + QWEN.block(k1.blocks[0])
    assert (todo.since_request, todo.carried_by, todo.trim_drops) == (4, 1, True)


def test_duplicate_reminders():
    rem = "<system-reminder>" + "remember the rules. " * 30 + "</system-reminder>"
    m0 = user(rem, tag=SYSTEM_REMINDER)
    a = Message("assistant", (Block(TEXT, "ok"),))
    m1 = Message("user", (Block(TEXT, rem, tag=SYSTEM_REMINDER), Block(TEXT, "next")))
    s = Session(None, "t", [req(0, [m0]), req(1, [m0, a, m1]), req(2, [m0, a, m1, a])])
    (f,) = redundancy(s, QWEN).findings
    assert (f.kind, f.since_request, f.carried_by) == ("duplicate_reminder", 1, 2)


# --- diff ---


def test_diff_requests_added_removed_changed():
    m0, m1 = user("hello"), user("a long tool output " * 10)
    a = req(0, [m0, m1], system=SYSTEM, tools=TOOLS[:2], complete=True)
    b = req(
        1,
        [m0, user("a short one"), user("new")],
        system=SYSTEM,
        tools=(TOOLS[1], TOOLS[2]),
        complete=True,
    )
    d = diff_requests(a, b, QWEN)
    got = {(c.section, c.status, c.label) for c in d.changes}
    assert ("tools", "removed", "tool Read") in got
    assert ("tools", "added", "tool Bash") in got
    assert ("messages", "changed", "message 1 (user) block 0 text") in got
    assert ("messages", "added", "message 2 (user) block 0 text") in got
    assert d.unchanged_tokens == QWEN.block(SYSTEM[0]) + QWEN.tool(TOOLS[1]) + QWEN.block(
        m0.blocks[0]
    )
    assert d.delta == sum(QWEN.block(x.blocks[0]) for x in b.messages) + QWEN.tool(TOOLS[2]) - sum(
        QWEN.block(x.blocks[0]) for x in a.messages
    ) - QWEN.tool(TOOLS[0])
    assert orjson.dumps(d.to_json())


# --- corpus ---


def test_subagent_runs_on_the_corpus(corpus):
    s = load(corpus / SUBAGENTS)
    runs = subagent_runs(s, session_cost(s))
    assert len(runs) == 5
    assert [r.parent for r in runs] == [2, 2, 2, 87, 87]
    assert all(r.link == "exact" for r in runs)
    assert len({r.parent_tool_use for r in runs}) == 5
    assert sum(len(r.requests) for r in runs) == sum(1 for r in s.requests if r.sidechain)
    first = runs[0]
    assert first.requests == tuple(range(3, 12)) and first.description == "Build TODO components"
    assert first.peak_context == max(s.requests[i].usage.prompt_tokens for i in first.requests)
    assert first.tool_calls >= 8 and first.cost_usd > 0


def test_cli_insights_json(corpus, capsys):
    assert (
        main(["insights", str(corpus / SPOTTER), "--json", "--budget", "5", "--diff", "0", "1"])
        == 0
    )
    out = orjson.loads(capsys.readouterr().out)
    assert {"cost", "cache", "redundancy", "subagents", "diff", "budgets"} <= set(out)
    assert out["cost"]["by_model"][0]["price"] == "claude-opus-4-6"
    assert 0.9 < out["cache"]["hit_rate"] <= 1
    assert out["cost"]["total_usd"] > 0 and out["cost"]["saved_usd"] > 0
    assert len(out["cost"]["requests"]) == out["source"]["requests"]
    assert out["redundancy"]["findings"]
    assert out["budgets"][0]["exceeded"]


def test_cli_insights_text_and_bad_input(corpus, capsys):
    assert main(["insights", str(corpus / SPOTTER)]) == 0
    text = capsys.readouterr().out
    assert "caching saved" in text and "Redundancy" in text and "Sub-agents" in text
    assert main(["insights", str(corpus / SPOTTER), "--diff", "0", "99999"]) == 2
    assert "out of range" in capsys.readouterr().err
