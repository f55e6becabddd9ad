from __future__ import annotations

import pytest

from ctxviewer.analysis.breakdown import breakdown
from ctxviewer.analysis.thresholds import thresholds
from ctxviewer.analysis.tokens.estimators import get_estimator
from ctxviewer.ingest.api.anthropic import Interner, message_from, system_from, tools_from
from ctxviewer.model import Request, Usage

QWEN = get_estimator("qwen")
MEMORY_SYSTEM = (
    "You are a helpful coding agent.\n"
    "--- Context from: ~/.qwen/QWEN.md ---\nAlways answer in English.\n"
    "--- End of Context from: ~/.qwen/QWEN.md ---\n"
    "--- Context from: /p/QWEN.md ---\nUse 4 spaces.\n--- End of Context from: /p/QWEN.md ---\n"
)
SKILL_DESC = (
    "Execute a skill\n<skills_instructions>Use skills wisely.</skills_instructions>\n"
    "<available_skills>\n<skill>\n<name>pdf</name>\n<description>Convert PDF files"
    "</description>\n<location>project</location>\n</skill>\n<skill>\n<name>xlsx"
    "</name>\n<description>Process spreadsheets</description>\n</skill>\n"
    "</available_skills>"
)
TOOLS = [
    {"name": "read_file", "description": "Read a file", "input_schema": {"type": "object"}},
    {"name": "skill", "description": SKILL_DESC, "input_schema": {"type": "object"}},
    {"name": "github__create_issue", "description": "Create an issue", "input_schema": {}},
    {"name": "mcp__db__query", "description": "Run SQL", "input_schema": {}},
]


def make_request(usage: Usage | None, messages=None) -> Request:
    intern = Interner()
    msgs = messages or [{"role": "user", "content": "Please fix the failing test in app.py"}]
    return Request(
        0,
        "qwen3-coder-plus",
        None,
        system_from(MEMORY_SYSTEM),
        tools_from(TOOLS, intern),
        tuple(message_from(m, intern) for m in msgs),
        usage,
        complete=True,
    )


def cats(b):
    return {c.name: c for c in b.categories}


def test_mode_b_categories_sum_to_window_and_messages_absorb_error():
    req = make_request(Usage(input_tokens=30_000))
    t = thresholds(131_072)
    b = breakdown(req, QWEN, 131_072, t)
    c = cats(b)
    assert b.mode == "B" and b.total == 30_000
    assert [x.name for x in b.categories] == [
        "system_prompt",
        "builtin_tools",
        "mcp_tools",
        "skills",
        "memory_files",
        "messages",
        "free_space",
        "autocompact_buffer",
    ]
    assert sum(x.tokens for x in b.categories) == 131_072
    overhead = sum(
        c[n].tokens
        for n in ("system_prompt", "builtin_tools", "mcp_tools", "skills", "memory_files")
    )
    assert c["messages"].tokens == 30_000 - overhead
    assert b.messages_error == c["messages"].tokens - b.messages_estimate
    assert c["autocompact_buffer"].tokens == 131_072 - t.auto
    # built-in = all tools - skills - MCP, per tool = estimate of its declaration
    assert [i.name for i in c["builtin_tools"].items] == ["read_file"]
    assert c["builtin_tools"].tokens == QWEN.tool(req.tools[0])
    assert c["skills"].tokens == QWEN.tool(req.tools[1])
    assert sorted(s.name for s in c["mcp_tools"].items) == ["db", "github"]
    # per-skill rows sum to less than the Skills total (the instructions)
    assert {s.name for s in c["skills"].items} == {"pdf", "xlsx"}
    assert sum(s.tokens for s in c["skills"].items) < c["skills"].tokens
    # memory between qwen-code markers, one row per file, not in the system prompt
    assert sorted(m.name for m in c["memory_files"].items) == ["/p/QWEN.md", "~/.qwen/QWEN.md"]
    assert "Always answer" not in "".join(i.ref.text for i in c["system_prompt"].items)


def test_overhead_is_scaled_when_it_exceeds_the_api_total():
    req = make_request(Usage(input_tokens=100))
    b = breakdown(req, QWEN, 131_072, thresholds(131_072))
    assert b.raw_overhead > 100
    assert b.overhead_scale == pytest.approx(100 / b.raw_overhead)
    c = cats(b)
    assert c["messages"].tokens == max(
        0,
        100
        - sum(
            c[n].tokens
            for n in ("system_prompt", "builtin_tools", "mcp_tools", "skills", "memory_files")
        ),
    )
    assert sum(x.tokens for x in b.categories) == 131_072
    assert any("scaled" in n for n in b.notes)


def test_mode_a_has_no_total_and_no_messages():
    b = breakdown(make_request(None), QWEN, 131_072, thresholds(131_072))
    assert b.mode == "A" and b.total is None
    assert "messages" not in cats(b)
    assert sum(x.tokens for x in b.categories) == 131_072


def test_items_sorted_by_tokens_descending():
    msgs = [
        {"role": "user", "content": "short"},
        {"role": "assistant", "content": [{"type": "text", "text": "x" * 4000}]},
        {"role": "user", "content": "medium " * 50},
    ]
    b = breakdown(
        make_request(Usage(input_tokens=50_000), msgs), QWEN, 200_000, thresholds(200_000)
    )
    for c in b.categories:
        tokens = [i.tokens for i in c.items]
        assert tokens == sorted(tokens, reverse=True), c.name
    assert [i.index for i in cats(b)["messages"].items] == [1, 2, 0]


def test_over_the_window_never_goes_negative():
    b = breakdown(make_request(Usage(input_tokens=250_000)), QWEN, 200_000, thresholds(200_000))
    c = cats(b)
    assert c["free_space"].tokens == 0 and c["autocompact_buffer"].tokens == 0


def test_each_agents_baseline_is_stated(data):
    """Codex's '% left' and Claude Code's percentages differ: the breakdown says which is shown."""
    from ctxviewer.analysis.analysis import Analysis
    from ctxviewer.ingest import load

    a = Analysis(load(str(data / "codex_tools.jsonl")))
    b = a.breakdown(a.resolve_index("last"))
    assert any("Codex" in n and "% of the full window" in n for n in b.notes)
    assert b.source_notes and any("Codex rollout" in n for n in b.source_notes)
    claude = breakdown(make_request(Usage(input_tokens=30_000)), QWEN, 131_072, thresholds(131_072))
    assert not any("Codex" in n for n in claude.notes)
