"""Real logs written by others (../shared/corpus): Claude Code transcripts and traces."""

from __future__ import annotations

import json

import pytest

from ctxviewer.analysis.agents.context_output import parse as parse_context
from ctxviewer.analysis.analysis import Analysis
from ctxviewer.ingest import load

SPOTTER = "claude-code/marot__spotter__test_fixtures_transcripts_fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
LEMMY = "claude-trace/badlogic__lemmy__apps_claude-trace_test_test-traffic.jsonl"
CAPTURED = "captured/claude-code-2.1.197-tui.claude-trace.jsonl"
CAPTURED_CONTEXT = "captured/claude-code-2.1.197-tui.context.txt"


def _api_calls(path):
    """Distinct (message id, request id) with usage, read independently of ctxviewer."""
    keys = set()
    peak = 0
    for line in open(path, encoding="utf-8"):
        r = json.loads(line)
        m = r.get("message") if r.get("type") == "assistant" else None
        data = r.get("data") if r.get("type") == "progress" else None
        if isinstance(data, dict) and data.get("type") == "agent_progress":  # a sub-agent's
            nested = data.get("message") or {}
            if nested.get("type") == "assistant":
                m, r = nested.get("message"), nested
        if isinstance(m, dict) and m.get("usage") and m.get("model") != "<synthetic>":
            keys.add((m.get("id"), r.get("requestId")))
            u = m["usage"]
            peak = max(
                peak,
                u["input_tokens"]
                + u.get("cache_creation_input_tokens", 0)
                + u.get("cache_read_input_tokens", 0),
            )
    return keys, peak


@pytest.mark.parametrize("folder", ["claude-code", "claude-trace", "captured", "openai"])
def test_every_claude_format_file_loads(corpus, folder):
    for path in sorted((corpus / folder).glob("*.jsonl")):
        s = load(str(path))
        assert s.format in ("claude-code", "claude-trace"), path.name
        for r in s.requests:
            assert r.usage is None or r.usage.prompt_tokens >= 0
        if s.format == "claude-code":
            keys, peak = _api_calls(path)
            assert len(s.requests) == len(keys), path.name
            assert max((r.api_prompt_tokens or 0 for r in s.requests), default=0) == peak


def test_spotter_transcript(corpus):
    s = load(str(corpus / SPOTTER))
    assert len(s.requests) == 175  # 157 of the main agent, 18 of two Explore sub-agents
    assert sum(r.role == "main" for r in s.requests) == 157
    assert max(r.api_prompt_tokens for r in s.requests) == 166_874
    events = [(r.index, e) for r in s.requests for e in r.events]
    assert [e.kind for _, e in events] == ["compact_boundary"]
    idx, boundary = events[0]
    assert boundary.pre_tokens == 167_117 and boundary.trigger == "auto"
    # The first request after the boundary starts from the summary, far below the peak.
    after = s.requests[idx]
    assert after.api_prompt_tokens < 60_000
    assert any(b.tag == "compaction_summary" for m in after.messages for b in m.blocks)
    assert not s.complete


def test_spotter_breakdown_is_honest_about_unrecorded_overhead(corpus):
    a = Analysis(load(str(corpus / SPOTTER)))
    b = a.breakdown(a.resolve_index("last"))
    names = [c.name for c in b.categories]
    assert names[0] == "unrecorded_overhead" and "system_prompt" not in names
    assert sum(c.tokens for c in b.categories) == b.window
    unrec = b.category("unrecorded_overhead")
    assert 5_000 < unrec.tokens < 40_000  # Claude Code's system prompt + tools
    first = a.session.requests[0]
    assert unrec.tokens <= first.api_prompt_tokens


def test_lemmy_trace_breakdown(corpus):
    a = Analysis(load(str(corpus / LEMMY)))
    i = a.resolve_index("last")
    req = a.session.requests[i]
    b = a.breakdown(i)
    assert b.mode == "B" and b.total == req.api_prompt_tokens
    cats = {c.name: c for c in b.categories}
    for name in (
        "system_prompt",
        "builtin_tools",
        "mcp_tools",
        "messages",
        "free_space",
        "autocompact_buffer",
    ):
        assert cats[name].tokens > 0, name
    servers = cats["mcp_tools"].items
    assert [s.name for s in servers] == ["ide"]
    assert {t.name for t in servers[0].items} == {
        "mcp__ide__executeCode",
        "mcp__ide__getDiagnostics",
    }
    assert sum(c.tokens for c in b.categories) == b.window
    used = sum(c.tokens for c in b.categories if c.name not in ("free_space", "autocompact_buffer"))
    assert used == req.api_prompt_tokens
    # streamed SSE responses were reassembled into usage and a reply
    assert sum(1 for r in a.session.requests if r.usage) == 64
    assert any(r.role == "auxiliary" for r in a.session.requests)


def test_captured_claude_code_request_matches_its_own_context_command(corpus):
    """Claude Code 2.1.197 printed its /context for this request (captured/*.context.txt).

    The trace holds no count_tokens calls (claude-trace records /v1/messages only), so
    tools and memory are local estimates of what the fake server counted; the window,
    skills (the agent's own listing estimate) and free space are the agent's."""
    a = Analysis(load(str(corpus / CAPTURED)))
    theirs = parse_context((corpus / CAPTURED_CONTEXT).read_text("utf-8"))
    b = a.breakdown(a.resolve_index("last"))
    assert b.window == 1_000_000 and b.counts == "agent"  # TUI + context-1m beta
    assert a.identity.interactive is True and a.identity.version == (2, 1, 197)
    cats = {c.name: c for c in b.categories}
    assert cats["autocompact_buffer"].tokens == 0  # 2.1.197's /context shows none
    assert theirs.categories["free_space"].matches(cats["free_space"].tokens)
    assert abs(cats["system_prompt"].tokens - 1_600) < 200
    assert abs(cats["builtin_tools"].tokens - 18_900) < 1_000
    assert {m.name for m in cats["memory_files"].items} == {
        "/srv/agentdemo1/home/.claude/CLAUDE.md",
        "/srv/agentdemo1/proj/CLAUDE.md",
    }
    assert [s.name for s in cats["mcp_tools"].items] == ["notes-weather"]
    mine = {s.name: s.tokens for s in cats["skills"].items}
    assert mine == {name: int(n.value) for name, n in theirs.items["skills"].items()}
    assert theirs.categories["skills"].matches(cats["skills"].tokens)
    wire = Analysis(load(str(corpus / CAPTURED)), counts="wire")
    wb = wire.breakdown(wire.resolve_index("last"))
    wcats = {c.name: c for c in wb.categories}
    assert wb.counts == "wire" and wcats["autocompact_buffer"].tokens == 33_000
    # one row per skill's entry, and the listing's own text (instructions) as a row
    entries = [s for s in wcats["skills"].items if s.kind == "skill"]
    rest = [s for s in wcats["skills"].items if s.kind == "rest"]
    assert sum(s.tokens for s in entries) < wcats["skills"].tokens
    assert len(rest) == 1 and sum(s.tokens for s in wcats["skills"].items) == wcats["skills"].tokens
    assert {d.what for d in b.differences} >= {"skills", "autocompact buffer"}


def test_openai_and_anthropic_pairs_in_one_trace(corpus):
    path = next((corpus / "openai").glob("*.jsonl"))
    s = load(str(path))
    apis = {r.api for r in s.requests}
    assert apis == {"openai-chat", "anthropic"}
    for r in s.requests:
        assert r.complete and r.usage is not None
    chat = [r for r in s.requests if r.api == "openai-chat" and r.tools]
    assert chat and all(r.system for r in chat)
