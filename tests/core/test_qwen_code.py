"""qwen-code chat records (hand-made fixture following chatRecordingService.ts)."""

from __future__ import annotations

from pathlib import Path

from ctxviewer.ingest import Head, detect, load, read_head
from ctxviewer.ingest.qwen.chat import READER
from ctxviewer.model import (
    API_ERROR,
    COMPACT_BOUNDARY,
    COMPACTION_SUMMARY,
    IMAGE,
    MEMORY,
    THINKING,
    TOOL_RESULT,
    TOOL_USE,
)

DATA = Path(__file__).parents[1] / "data"


def _session():
    return load(str(DATA / "qwen_session.jsonl"))


def test_fixtures_are_detected_as_qwen_code() -> None:
    assert detect(read_head(str(DATA / "qwen_session.jsonl"))).name == "qwen-code"
    assert detect(read_head(str(DATA / "qwen_empty.jsonl"))).name == "qwen-code"


def test_claude_code_records_are_not_qwen() -> None:
    claude = {
        "uuid": "u",
        "parentUuid": None,
        "sessionId": "s",
        "type": "assistant",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "hi"}],
            "usage": {"input_tokens": 1},
        },
    }
    assert not READER.sniff(Head(path="x", text="{}", records=[claude]))


def test_empty_session_has_no_requests() -> None:
    session = load(str(DATA / "qwen_empty.jsonl"))
    assert session.requests == [] and session.skipped == []


def test_one_request_per_assistant_record_with_usage() -> None:
    session = _session()
    assert [r.line for r in session.requests] == [3, 7, 9, 11, 14, 17]
    assert all(r.api == "gemini" and not r.complete for r in session.requests)
    assert {r.model for r in session.requests} == {"qwen3-coder-plus"}
    assert session.window_hint == 131072


def test_usage_split_and_thoughts() -> None:
    req0, req1, req2 = _session().requests[:3]
    # total == prompt + candidates: the thoughts are inside the candidates
    assert (req0.usage.output_tokens, req0.usage.reasoning_tokens) == (60, 25)
    # total == prompt + candidates + thoughts: Gemini's way, thoughts added
    assert (req1.usage.output_tokens, req1.usage.reasoning_tokens) == (110, 30)
    assert (req2.usage.input_tokens, req2.usage.cache_read_input_tokens) == (292, 14208)
    assert req2.api_prompt_tokens == 14500


def test_context_blocks() -> None:
    req0, req1 = _session().requests[:2]
    memory = req0.messages[0].blocks[0]
    assert (memory.tag, memory.name) == (MEMORY, "QWEN.md")
    assert req0.response.blocks[0].kind == THINKING
    assert [m.role for m in req1.messages] == ["user", "assistant", "user"]
    assert all(b.kind != THINKING for m in req1.messages for b in m.blocks)
    call = req1.messages[1].blocks[1]
    assert (call.kind, call.name, call.ref) == (TOOL_USE, "read_file", "call_r1")
    # the mid-turn user message joins the tool results in one user turn
    assert [b.kind for b in req1.messages[2].blocks] == [TOOL_RESULT, "text"]
    assert [e.kind for e in req1.events] == [API_ERROR]


def test_rewind_leaves_the_abandoned_branch_out() -> None:
    requests = _session().requests
    dead, after = requests[3], requests[4]
    assert dead.messages[-1].text == "Now refactor everything"  # that call did happen
    texts = [m.text for m in after.messages]
    assert "Now refactor everything" not in texts
    assert after.messages[-1].blocks[1].kind == IMAGE


def test_compression_checkpoint_restarts_the_history() -> None:
    last = _session().requests[-1]
    assert [e.kind for e in last.events] == [COMPACT_BOUNDARY]
    event = last.events[0]
    assert (event.pre_tokens, event.post_tokens) == (16207, 1200)
    assert COMPACTION_SUMMARY in last.messages[0].tags
    assert [m.role for m in last.messages] == ["user", "assistant", "user"]
    assert last.messages[-1].text == "Commit it"


def test_unknown_record_and_truncated_line_are_skipped() -> None:
    reasons = [s.reason for s in _session().skipped]
    assert reasons == ["unknown record type 'mystery'", "truncated last line"]


def test_breakdown_has_no_gemini_cli_note() -> None:
    """qwen-code writes Gemini-shaped transcripts; Gemini CLI's note on its own numbers
    is not about it."""
    from ctxviewer.analysis.analysis import Analysis

    analysis = Analysis(_session())
    bd = analysis.breakdown(len(analysis.session.requests) - 1)
    assert analysis.session.requests[-1].client.startswith("qwen-code/")
    assert not [n for n in bd.notes if "Gemini CLI" in n]
