"""Parallel tool calls in Claude Code transcripts, rebuilt as the API saw them.

Claude Code writes an assistant message as one record per content block. Since 2.x
each tool result of parallel calls hangs off its own ``tool_use`` record (sibling
branches of the chain), and earlier versions interleave calls and results in one
chain. Either way the request that follows carries one assistant message with every
call and one user message with every result, in the order they were written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxviewer.ingest import load
from ctxviewer.model import TOOL_RESULT, TOOL_USE, Request

PARALLEL = Path(__file__).resolve().parents[1] / "data" / "claude_parallel"


def _calls(r: Request) -> list[tuple[str, tuple[str | None, ...]]]:
    """Each message holding tool calls or results: its role and their ids, in order."""
    return [
        (m.role, tuple(b.ref for b in m.blocks if b.kind in (TOOL_USE, TOOL_RESULT)))
        for m in r.messages
        if any(b.kind in (TOOL_USE, TOOL_RESULT) for b in m.blocks)
    ]


def _unanswered(r: Request) -> list[str | None]:
    answered = {b.ref for m in r.messages for b in m.blocks if b.kind == TOOL_RESULT}
    return [
        b.ref for m in r.messages for b in m.blocks if b.kind == TOOL_USE and b.ref not in answered
    ]


def test_captured_parallel_calls_read_as_the_api_saw_them() -> None:
    transcript = load(str(PARALLEL / "transcript.jsonl.xz"))
    recording = load(str(PARALLEL / "recording.jsonl.xz"))  # the bodies Claude Code sent
    sent = {r.message_id: r for r in recording.requests}
    assert len(transcript.requests) == 3
    for r in transcript.requests:
        assert _calls(r) == _calls(sent[r.message_id])
    calls = [f"toolu_fake_0001_{i}" for i in range(3)]
    after = transcript.requests[1]
    assert _calls(after) == [
        ("assistant", tuple(calls)),
        ("user", (calls[1], calls[2], calls[0])),
    ]  # as they ended
    assert after.messages[-2].blocks[0].text == "Reading 3 files at once."


def _rec(kind: str, uuid: str, parent: str | None, **extra: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s",
        "timestamp": "2026-04-18T15:20:00.000Z",
        "isSidechain": False,
        **extra,
    }


def _call(
    uuid: str, parent: str | None, msg: str, block: dict[str, Any], prompt: int
) -> dict[str, Any]:
    usage = {"input_tokens": 1, "cache_read_input_tokens": prompt, "output_tokens": 50}
    return _rec(
        "assistant",
        uuid,
        parent,
        requestId="req_" + msg,
        message={
            "id": msg,
            "role": "assistant",
            "model": "claude-opus-4-7",
            "content": [block],
            "usage": usage,
        },
    )


def _use(tool: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool, "name": "Read", "input": {"file_path": tool}}


def _result(uuid: str, parent: str, tool: str) -> dict[str, Any]:
    return _rec(
        "user",
        uuid,
        parent,
        sourceToolAssistantUUID=parent,
        message={
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": tool, "content": f"contents of {tool}"}
            ],
        },
    )


def _hook(uuid: str, parent: str, text: str) -> dict[str, Any]:
    return _rec(
        "attachment",
        uuid,
        parent,
        attachment={
            "type": "hook_additional_context",
            "hookName": "PostToolUse",
            "content": [text],
        },
    )


def _write(path: Path, records: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def test_sibling_results_and_what_hangs_off_them_join_their_turn(tmp_path: Path) -> None:
    # Claude Code 2.1.114's shape: the calls chained, each result (with its PostToolUse
    # hook's output) off its own call, written as they ended; the next call hangs off
    # the last one written
    records = [
        _rec("user", "u0", None, message={"role": "user", "content": "read a, b and c"}),
        _call("a0", "u0", "msg_1", {"type": "text", "text": "Reading three files."}, 1000),
        _call("a1", "a0", "msg_1", _use("t_a"), 1000),
        _call("a2", "a1", "msg_1", _use("t_b"), 1000),
        _call("a3", "a2", "msg_1", _use("t_c"), 1000),
        _result("r_c", "a3", "t_c"),
        _hook("h_c", "r_c", "c was read"),
        _result("r_b", "a2", "t_b"),
        _hook("h_b", "r_b", "b was read"),
        _result("r_a", "a1", "t_a"),
        _hook("h_a", "r_a", "a was read"),
        _call("a4", "h_a", "msg_2", {"type": "text", "text": "Done."}, 1200),
    ]
    s = load(_write(tmp_path / "fork.jsonl", records))
    after = s.requests[1]
    assert _calls(after) == [("assistant", ("t_a", "t_b", "t_c")), ("user", ("t_c", "t_b", "t_a"))]
    text = "\n".join(m.text for m in after.messages)
    assert all(f"{x} was read" in text for x in "abc")  # every branch's hook output
    assert [m.role for m in after.messages] == ["user", "assistant", "user", "user", "user", "user"]


def test_interleaved_calls_and_results_make_one_turn(tmp_path: Path) -> None:
    # Claude Code 2.0 / 2.1.39's shape: one chain, each call followed by its result
    records = [
        _rec("user", "u0", None, message={"role": "user", "content": "read a and b"}),
        _call("a0", "u0", "msg_1", _use("t_a"), 1000),
        _result("r_a", "a0", "t_a"),
        _call("a1", "r_a", "msg_1", _use("t_b"), 1000),
        _result("r_b", "a1", "t_b"),
        _call("a2", "r_b", "msg_2", {"type": "text", "text": "Done."}, 1200),
    ]
    s = load(_write(tmp_path / "interleaved.jsonl", records))
    assert _calls(s.requests[1]) == [("assistant", ("t_a", "t_b")), ("user", ("t_a", "t_b"))]
    assert len(s.requests[1].messages) == 3


CLAUDE = "claude-code"


def test_every_call_in_a_real_context_has_its_result(corpus: Path) -> None:
    files = sorted((corpus / CLAUDE).glob("*.jsonl"))
    assert files
    seen = 0
    for f in files:
        s = load(str(f))
        for r in s.requests:
            assert not _unanswered(r), f"{f.name} request {r.index}"
            seen += sum(1 for m in r.messages for b in m.blocks if b.kind == TOOL_USE)
    assert seen > 1000


def _progress(inner: dict[str, Any], n: int) -> dict[str, Any]:
    """A sub-agent's record nested in the main transcript (Claude Code 2.1.39)."""
    inner = {**inner, "timestamp": "2026-04-18T15:20:00.000Z"}
    return _rec(
        "progress",
        f"p{n}",
        f"p{n - 1}" if n else "u0",
        data={
            "type": "agent_progress",
            "agentId": "a93ccab",
            "prompt": "explore",
            "message": inner,
        },
    )


def test_parallel_calls_of_a_sub_agent_in_progress_records(tmp_path: Path) -> None:
    inner = [
        _call("s0", None, "msg_s1", _use("t_a"), 5000),
        _result("sr_a", "s0", "t_a"),
        _call("s1", "sr_a", "msg_s1", _use("t_b"), 5000),
        _result("sr_b", "s1", "t_b"),
        _call("s2", "sr_b", "msg_s2", {"type": "text", "text": "Found it."}, 5400),
    ]
    records = [
        _rec("user", "u0", None, message={"role": "user", "content": "go"}),
        *(_progress(r, n) for n, r in enumerate(inner)),
    ]
    s = load(_write(tmp_path / "progress.jsonl", records))
    sub = [r for r in s.requests if r.agent == "a93ccab"]
    assert len(sub) == 2
    assert _calls(sub[1]) == [("assistant", ("t_a", "t_b")), ("user", ("t_a", "t_b"))]
    assert [m.role for m in sub[1].messages] == ["user", "assistant", "user"]
