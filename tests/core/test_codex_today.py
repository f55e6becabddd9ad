"""Codex CLI 0.171.0 as captured from the real agent (tests/data/agents/codex-0.171.0):
its window and compaction rule, its request shape on the wire and in the rollout, its
compactions (before a turn and mid-turn), and its own estimates that are no API counts.

``proxy`` is three ``codex exec`` turns and a TUI turn through ``ctxviewer proxy``;
``direct`` the same against the fake; ``compaction`` turns whose scripted usage crosses the
limit. Its ``/status`` and the request as sent, row by row: test_conformance.py."""

from __future__ import annotations

import json
import lzma
from pathlib import Path
from typing import Any

import pytest

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.report import report_json
from ctxviewer.ingest import load
from ctxviewer.jsonish import js_dumps
from ctxviewer.model import AUXILIARY, COMPACT_BOUNDARY, MAIN

AGENTS = Path(__file__).parents[1] / "data" / "agents"
CODEX = AGENTS / "codex-0.171.0"
LIMIT_PCT = 0.9  # codex-rs ModelInfo::auto_compact_token_limit: 90% of the model's window
USABLE_PCT = 0.95  # effective_context_window_percent


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in lzma.decompress(path.read_bytes()).decode().splitlines()]


def _bundled_window(model: str) -> int:
    """The model's window as the captured rollout records it, un-cut (95% of the window)."""
    rollout = _lines(CODEX / "proxy" / "rollout.jsonl.xz")
    recorded = next(
        r["payload"]["info"]["model_context_window"]
        for r in rollout
        if r["type"] == "event_msg" and r["payload"].get("type") == "token_count"
    )
    assert model == "gpt-6.2-sol"
    return round(recorded / USABLE_PCT)


@pytest.mark.parametrize(
    "log", ["proxy/recording.rec.jsonl.xz", "proxy/rollout.jsonl.xz", "direct/rollout.jsonl.xz"]
)
def test_window_and_thresholds_are_codexs_own(log: str) -> None:
    a = Analysis(load(str(CODEX / log)))
    raw = _bundled_window("gpt-6.2-sol")
    assert raw == 500_000
    assert a.identity.label == "Codex CLI 0.171.0"
    assert a.identity.rules_note is None
    assert a.window == round(raw * USABLE_PCT) == 475_000
    assert a.window_info.raw == raw
    t = a.thresholds
    assert t.auto == round(raw * LIMIT_PCT) == 450_000  # of the raw window, not of 475,000
    assert t.hard == 475_000 and t.warn <= t.auto


def _sent(body: dict[str, Any]) -> tuple[str, str]:
    """(the base instructions' text, the tool schemas' JSON) as the request carried them."""
    items = body["input"]
    tools = js_dumps([t for i in items if i.get("type") == "additional_tools" for t in i["tools"]])
    first = next(i for i in items if i.get("type") == "message")
    assert first["role"] == "developer" and "instructions" not in body and "tools" not in body
    return "\n".join(c["text"] for c in first["content"]), tools


def test_the_wire_system_prompt_and_tools_are_what_was_sent() -> None:
    """Codex 0.171 sends no instructions/tools fields: input[0] is an additional_tools item,
    input[1] the base instructions as a developer message. Every call: the exec and TUI
    turns and the TUI's title call."""
    path = CODEX / "proxy" / "recording.rec.jsonl.xz"
    bodies = [r["request"]["body"] for r in _lines(path) if r.get("type") == "exchange"]
    a = Analysis(load(str(path)), estimator_name="o200k")
    est = a.estimator
    assert len(bodies) == len(a.session.requests) > 0
    for i, body in enumerate(bodies):
        system_text, tools_json = _sent(body)
        b = a.breakdown(i)
        system = b.category("system_prompt").tokens
        tools = b.category("builtin_tools").tokens + b.category("mcp_tools").tokens
        assert abs(system - est.count(system_text)) <= 0.05 * est.count(system_text)
        assert abs(tools - est.count(tools_json)) <= 0.05 * est.count(tools_json)
        assert "functions" not in {t.name for t in a.session.requests[i].tools}
        assert "exec" in {t.name for t in a.session.requests[i].tools}
        # the base instructions are the system prompt, not also a message
        first = a.session.requests[i].messages[0]
        assert not any(blk.text.startswith("You are Codex") for blk in first.blocks)


def test_the_tui_is_codex_and_its_title_call_a_side_call() -> None:
    s = load(str(CODEX / "proxy" / "recording.rec.jsonl.xz"))
    a = Analysis(s)
    assert a.identity.profile.id == "codex"
    assert [r.client.split("/")[0] for r in s.requests] == ["codex_exec"] * 3 + ["codex-tui"] * 2
    assert [r.role for r in s.requests] == [MAIN] * 4 + [AUXILIARY]
    assert "title" in s.requests[4].notes[0]


def test_the_rollout_counts_the_base_instructions_once_and_reads_its_tools() -> None:
    path = CODEX / "proxy" / "rollout.jsonl.xz"
    s = load(str(path))
    records = _lines(path)
    base = records[0]["payload"]["base_instructions"]["text"]
    tool_item = next(
        r["payload"]
        for r in records
        if r["type"] == "response_item" and r["payload"].get("type") == "additional_tools"
    )
    wire = load(str(CODEX / "proxy" / "recording.rec.jsonl.xz"))
    turns = [r for r in wire.requests if r.role == MAIN]  # not the TUI's title call
    for req, sent in zip(s.requests, turns, strict=True):
        assert "".join(b.text for b in req.system) == base
        assert not any(base in b.text for m in req.messages for b in m.blocks)
        assert [t.name for t in req.tools] == [t.name for t in sent.tools]
        assert req.complete  # the rollout holds the request's whole input
    assert len(s.requests[0].tools) == sum(len(t["tools"]) for t in tool_item["tools"])
    assert not any("additional_tools" in k.reason for k in s.skipped)
    a = Analysis(s, estimator_name="o200k")
    w = Analysis(wire, estimator_name="o200k")
    for cat in ("system_prompt", "builtin_tools", "skills", "memory_files"):
        assert a.breakdown(0).category(cat).tokens == w.breakdown(0).category(cat).tokens


def _compaction_rollout() -> list[dict[str, Any]]:
    return _lines(CODEX / "compaction" / "rollout.jsonl.xz")


def test_compactions_before_a_turn_and_mid_turn_are_predicted() -> None:
    """Codex compared the last call's total (input + output) with 450,000: 450,001 compacted
    before the next turn; 449,999 plus the tool output it added compacted mid-turn."""
    records = _compaction_rollout()
    calls = [
        r["payload"]["info"]["last_token_usage"]
        for r in records
        if r["type"] == "event_msg"
        and r["payload"].get("type") == "token_count"
        and r["payload"]["info"]["last_token_usage"]["input_tokens"]
    ]
    a = Analysis(load(str(CODEX / "compaction" / "rollout.jsonl.xz")))
    s = a.session
    c = a.compactions
    assert len(c.observed) == sum(r["type"] == "compacted" for r in records) == 2
    assert list(c.predicted) == list(c.observed) and all(c.explained(i) for i in c.observed)
    events = [e for r in s.requests for e in r.events if e.kind == COMPACT_BOUNDARY]
    totals = [u["total_tokens"] for u in calls]
    assert events[0].pre_tokens == 450_001 == max(totals)  # exactly what Codex compared
    assert totals.count(449_999) >= 1 and 449_999 < a.thresholds.auto <= events[1].pre_tokens
    # the calls that wrote the summaries are side calls, not turns
    aux = [r for r in s.requests if r.role == AUXILIARY]
    assert len(aux) == 2 and all("compaction call" in " ".join(r.notes) for r in aux)


def test_codexs_own_estimates_are_no_api_counts() -> None:
    """A token_count with input 0 (and output 0) is Codex's estimate of the history after a
    compaction: it becomes the compaction's post size, never a request."""
    records = _compaction_rollout()
    estimates = [
        r["payload"]["info"]["last_token_usage"]["total_tokens"]
        for r in records
        if r["type"] == "event_msg"
        and r["payload"].get("type") == "token_count"
        and not r["payload"]["info"]["last_token_usage"]["input_tokens"]
    ]
    assert len(estimates) == 2
    s = load(str(CODEX / "compaction" / "rollout.jsonl.xz"))
    posts = [e.post_tokens for r in s.requests for e in r.events if e.kind == COMPACT_BOUNDARY]
    assert posts == estimates
    assert all(r.usage and r.usage.prompt_tokens for r in s.requests)


def test_an_estimate_with_new_totals_is_still_no_request(tmp_path: Path) -> None:
    """Where Codex's estimate comes with other totals than the call before (0.10x), the
    reader used to take it for a call of 0 prompt tokens."""
    records = _compaction_rollout()
    for r in records:
        p = r.get("payload")
        if (
            r["type"] == "event_msg"
            and p.get("type") == "token_count"
            and not p["info"]["last_token_usage"]["input_tokens"]
        ):
            p["info"]["total_token_usage"]["total_tokens"] += 1
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    s = load(str(path))
    assert len(s.requests) == len(load(str(CODEX / "compaction" / "rollout.jsonl.xz")).requests)
    assert all(r.usage and r.usage.prompt_tokens for r in s.requests)


def test_a_recording_infers_the_compaction_after_codexs_summary() -> None:
    """Through the proxy: Codex's compaction calls (request_kind 'compaction') are side calls,
    and each summary, kept after the user's messages, shows where the history was replaced.
    Before a turn, the last exchange (prompt + output: 450,001) explains it; mid-turn the
    tool output Codex added is not in any recorded request: observed, not predicted."""
    a = Analysis(load(str(CODEX / "compaction" / "recording.rec.jsonl.xz")))
    kinds = [r.role for r in a.session.requests]
    after = [i + 1 for i, k in enumerate(kinds) if k == AUXILIARY]
    assert len(after) == 2
    c = a.compactions
    assert list(c.observed) == after
    assert [c.explained(i) for i in after] == [True, False]
    assert report_json(a)["compactions"]["observed"] == after


def test_a_version_newer_than_the_rules_says_so(tmp_path: Path) -> None:
    records = _lines(CODEX / "proxy" / "rollout.jsonl.xz")
    records[0]["payload"]["cli_version"] = "0.200.0"
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    a = Analysis(load(str(path)))
    note = (
        "Codex CLI 0.200.0 is newer than the rules ctxviewer knows (up to 0.171.0); using 0.171.0's"
    )
    assert a.identity.rules_note == note
    known = Analysis(load(str(CODEX / "proxy" / "rollout.jsonl.xz")))
    assert (a.window, a.thresholds) == (known.window, known.thresholds)
    data = report_json(a)
    assert data["rules_note"] == data["agent"]["rules_note"] == note


def test_an_unknown_model_says_which_window_it_assumed(tmp_path: Path) -> None:
    records = _lines(CODEX / "proxy" / "recording.rec.jsonl.xz")
    for r in records:
        if r.get("type") == "exchange":
            r["request"]["body"]["model"] = "gpt-7-nova"
    path = tmp_path / "codex.rec.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    a = Analysis(load(str(path)))
    assert a.window_info.raw == 272_000 and a.window == 258_400
    assert "gpt-7-nova is not in Codex CLI 0.171.0's model list: 272,000" in a.window_info.detail
    assert "model_info_from_slug" in a.window_info.detail


CODEX_104 = AGENTS / "codex-0.104.0" / "compaction"
REASONING_OVERHEAD = 650  # codex-rs estimate_reasoning_length: 3/4 of the ciphertext less 650


def test_codex_0104_compacts_on_its_reasoning_estimate_and_mid_turn() -> None:
    """Real Codex 0.104.0 compacted after a call of 243,509 tokens in all, under its
    244,800 limit: it adds its estimate of the encrypted reasoning before the last user
    message. Then mid-turn, after a tool's output. Both are predicted from the rollout."""
    path = CODEX_104 / "rollout.jsonl.xz"
    records = _lines(path)
    secret = next(
        r["payload"]["encrypted_content"]
        for r in records
        if r["type"] == "response_item" and r["payload"].get("type") == "reasoning"
    )
    reasoning = (len(secret) * 3 // 4 - REASONING_OVERHEAD + 3) // 4
    totals = [
        r["payload"]["info"]["last_token_usage"]["total_tokens"]
        for r in records
        if r["type"] == "event_msg"
        and r["payload"].get("type") == "token_count"
        and r["payload"]["info"]
        and r["payload"]["info"]["last_token_usage"]["input_tokens"]
    ]
    a = Analysis(load(str(path)))
    limit = a.thresholds.auto
    assert limit == round(LIMIT_PCT * 272_000) == 244_800 and a.window == 258_400
    c = a.compactions
    assert len(c.observed) == 2 and list(c.predicted) == list(c.observed)
    reqs = a.session.requests
    assert reqs[c.observed[0] - 1].role == AUXILIARY  # the compaction call
    last = reqs[c.observed[0] - 2].usage  # the last turn before it
    assert last is not None
    before = last.prompt_tokens + last.output_tokens
    assert before in totals and before < limit <= before + reasoning
    events = [e for r in a.session.requests for e in r.events if e.kind == COMPACT_BOUNDARY]
    assert events[0].pre_tokens >= before + reasoning
    assert all(e.pre_tokens >= limit for e in events)
    estimates = [
        r["payload"]["info"]["last_token_usage"]["total_tokens"]
        for r in records
        if r["type"] == "event_msg"
        and r["payload"].get("type") == "token_count"
        and r["payload"]["info"]
        and not r["payload"]["info"]["last_token_usage"]["input_tokens"]
    ]
    assert [e.post_tokens for e in events] == sorted(set(estimates), key=estimates.index)
    aux = [r for r in a.session.requests if r.role == AUXILIARY]
    assert len(aux) == 2 and all("compaction call" in " ".join(r.notes) for r in aux)


def test_codex_0104s_recording_marks_its_compaction_calls() -> None:
    a = Analysis(load(str(CODEX_104 / "recording.rec.jsonl.xz")))
    kinds = [r.role for r in a.session.requests]
    assert kinds.count(AUXILIARY) == 2
    assert list(a.compactions.observed) == [i + 1 for i, k in enumerate(kinds) if k == AUXILIARY]
