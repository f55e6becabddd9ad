"""Gemini CLI chat files: the JSON document and the JSONL log, then the real corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxviewer.ingest import Head, detect, load, read_head
from ctxviewer.ingest.api.gemini import gemini_usage, parts_blocks
from ctxviewer.ingest.gemini.chat import JSONL_READER, READER
from ctxviewer.model import (
    COMPACT_BOUNDARY,
    COMPACTION_SUMMARY,
    CONTEXT_OVERFLOW,
    DOCUMENT,
    IMAGE,
    MEMORY,
    SUBAGENT,
    THINKING,
    TOOL_RESULT,
    TOOL_USE,
    Request,
)

DATA = Path(__file__).parents[1] / "data"
CORPUS = Path(__file__).parents[2].parent / "shared" / "corpus"


def _load(name: str):
    return load(str(DATA / name))


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("gemini_session.json", "gemini-cli"),
        ("gemini_empty.json", "gemini-cli"),
        ("gemini_updates.jsonl", "gemini-cli-jsonl"),
    ],
)
def test_fixtures_are_detected(name: str, fmt: str) -> None:
    assert detect(read_head(str(DATA / name))).name == fmt


def test_sniff_leaves_qwen_and_claude_records_alone() -> None:
    qwen = {
        "uuid": "u",
        "parentUuid": None,
        "sessionId": "s",
        "type": "user",
        "message": {"role": "user", "parts": [{"text": "hi"}]},
    }
    assert not JSONL_READER.sniff(Head(path="x", text="{}", records=[qwen]))
    assert not READER.sniff(Head(path="x", text="{}", records=[qwen], document=qwen))


def test_empty_session_has_no_requests() -> None:
    session = _load("gemini_empty.json")
    assert session.requests == [] and session.skipped == []


def test_document_one_request_per_reply_with_tokens() -> None:
    session = _load("gemini_session.json")
    assert len(session.requests) == 2  # the reply without tokens (cancelled) is not a call
    usage = session.requests[0].usage
    assert (usage.input_tokens, usage.cache_read_input_tokens) == (2000, 6000)
    assert (usage.output_tokens, usage.reasoning_tokens) == (70, 30)
    assert all(r.api == "gemini" and not r.complete for r in session.requests)
    assert session.requests[0].model == "gemini-2.5-pro"
    assert session.requests[0].line is None  # one JSON document: no line per message


def test_document_context_blocks() -> None:
    first, second = _load("gemini_session.json").requests
    memory = first.messages[0].blocks[0]
    assert (memory.tag, memory.name) == (MEMORY, "GEMINI.md")
    image = first.messages[1].blocks[1]
    assert (image.kind, image.fixed_tokens) == (IMAGE, 1600)
    assert [m.role for m in second.messages] == ["user", "user", "assistant", "user"]
    call = second.messages[2].blocks[1]
    assert (call.kind, call.name, call.text) == (
        TOOL_USE,
        "read_file",
        '{"absolute_path":"/w/notes.txt"}',
    )
    result = second.messages[3].blocks[0]
    assert (result.kind, result.text, result.ref) == (
        TOOL_RESULT,
        "The picture is a cat.",
        "read_file-1",
    )
    assert all(b.kind != THINKING for m in second.messages for b in m.blocks)
    assert first.response.blocks[0].kind == THINKING


def test_error_notice_becomes_an_event_info_is_ignored() -> None:
    session = _load("gemini_session.json")
    assert [e.kind for e in session.requests[1].events] == [CONTEXT_OVERFLOW]
    assert session.skipped == []


def test_jsonl_versions_of_a_message_are_one_call() -> None:
    session = _load("gemini_updates.jsonl")
    assert [r.message_id for r in session.requests] == ["g1", "g2", "g3", "g4", "g5"]
    g1 = session.requests[0]
    assert g1.line == 4
    assert [b.kind for b in g1.response.blocks] == [THINKING, TOOL_USE]  # from its last version
    assert [m.role for m in session.requests[1].messages] == ["user", "assistant", "user"]


def test_jsonl_rewind_drops_the_rewound_turns() -> None:
    g4 = _load("gemini_updates.jsonl").requests[3]
    texts = [m.text for m in g4.messages]
    assert "Delete b.py" not in texts and "Deleting." not in texts
    assert texts[-1] == "Show a.py instead"


def test_jsonl_set_messages_replaces_history() -> None:
    g5 = _load("gemini_updates.jsonl").requests[4]
    assert [e.kind for e in g5.events] == [COMPACT_BOUNDARY]
    assert COMPACTION_SUMMARY in g5.messages[0].tags
    assert [m.text for m in g5.messages[2:]] == ["Show a.py instead", "And now?"]


def test_jsonl_skips_unknown_and_truncated_lines() -> None:
    reasons = [s.reason for s in _load("gemini_updates.jsonl").skipped]
    assert reasons == ["unknown Gemini CLI record", "truncated last line"]


def test_subagent_sessions_are_marked() -> None:
    parser = JSONL_READER.parser()
    records = [
        {"sessionId": "s", "projectHash": "h", "kind": "subagent"},
        {"id": "u", "type": "user", "content": "go"},
        {"id": "g", "type": "gemini", "content": "ok", "tokens": {"input": 10, "output": 1}},
    ]
    items = [i for n, r in enumerate(records, 1) for i in parser.feed(n, r)]
    items += list(parser.finish())
    (req,) = [i for i in items if isinstance(i, Request)]
    assert req.role == SUBAGENT and req.sidechain


def test_usage_thoughts_apart_or_inside_candidates() -> None:
    keys = {"prompt": "p", "cached": "c", "output": "o", "thoughts": "t", "total": "n"}
    apart = gemini_usage({"p": 100, "c": 40, "o": 10, "t": 5, "n": 115}, **keys)
    assert (apart.input_tokens, apart.cache_read_input_tokens) == (60, 40)
    assert (apart.output_tokens, apart.reasoning_tokens) == (15, 5)
    inside = gemini_usage({"p": 100, "o": 10, "t": 5, "n": 110}, **keys)
    assert (inside.output_tokens, inside.reasoning_tokens) == (10, 5)


def test_parts_blocks() -> None:
    parts = [
        {"text": "plan", "thought": True},
        {"text": "hi"},
        {"functionResponse": {"id": "1", "name": "x", "response": {"error": "boom"}}},
        {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://a"}},
    ]
    blocks = parts_blocks(parts)
    assert [b.kind for b in blocks] == ["text", TOOL_RESULT, DOCUMENT]
    assert blocks[1].is_error and blocks[1].text == "boom"
    assert parts_blocks(parts, keep_thoughts=True)[0].kind == THINKING
    assert parts_blocks("plain")[0].text == "plain"


# -- real chat files ---------------------------------------------------------------------


def _corpus_files() -> list[Path]:
    folder = CORPUS / "gemini-cli"
    return sorted(p for p in folder.glob("*.json*")) if folder.is_dir() else []


def _expected(path: Path) -> dict[str, int]:
    """Input tokens per reply id with tokens, read independently of the reader."""
    text = path.read_text(encoding="utf-8")
    try:
        messages = json.loads(text)["messages"]
    except json.JSONDecodeError:  # JSONL: the last version of each message id counts
        records = [json.loads(line) for line in text.splitlines() if line.strip()]
        messages = list({r["id"]: r for r in records if "id" in r}.values())
    return {
        m["id"]: m["tokens"]["input"]
        for m in messages
        if m.get("type") == "gemini" and m.get("tokens")
    }


@pytest.mark.corpus
@pytest.mark.skipif(not _corpus_files(), reason=f"real-world corpus not found at {CORPUS}")
@pytest.mark.parametrize("path", _corpus_files(), ids=lambda p: p.name[:40])
def test_corpus_chats_load_with_their_token_counts(path: Path) -> None:
    session = load(str(path))
    expected = _expected(path)
    assert session.format == ("gemini-cli" if path.suffix == ".json" else "gemini-cli-jsonl")
    assert session.skipped == []
    assert {r.message_id: r.api_prompt_tokens for r in session.requests} == expected
    assert max(r.api_prompt_tokens for r in session.requests) == max(expected.values())
    assert all(r.model and r.response is not None for r in session.requests)
    assert all(r.messages[0].role == "user" for r in session.requests)


def test_tool_result_synced_as_its_own_turn_counts_once() -> None:
    """A history sync ($set messages) may write a tool result turn beside the call's result."""
    parser = JSONL_READER.parser()
    result = [{"functionResponse": {"id": "c1", "name": "ls", "response": {"output": "a.py"}}}]
    call = {"id": "c1", "name": "ls", "args": {}, "result": result, "status": "success"}
    history = [
        {"id": "u1", "type": "user", "content": [{"text": "ls"}]},
        {"id": "g1", "type": "gemini", "content": "", "toolCalls": [call]},
        {"id": "t1", "type": "user", "content": result},
    ]
    records = [
        {"sessionId": "s", "projectHash": "h"},
        {"$set": {"messages": history}},
        {"id": "g2", "type": "gemini", "content": "a.py", "tokens": {"input": 50}},
    ]
    items = [i for n, r in enumerate(records, 1) for i in parser.feed(n, r)]
    items += list(parser.finish())
    (req,) = [i for i in items if isinstance(i, Request)]
    results = [b for m in req.messages for b in m.blocks if b.kind == TOOL_RESULT]
    assert [b.text for b in results] == ["a.py"]
    assert [m.role for m in req.messages] == ["user", "assistant", "user"]
