"""A Codex rollout with no token_count (and no turn_context) records, as Codex Desktop
0.128 writes them: its calls are still requests, sized by estimate, and say why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.cli import main
from ctxviewer.ingest import load
from ctxviewer.model import TOOL_RESULT, TOOL_USE

TS = "2026-05-03T14:28:00.000Z"


def _line(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": TS, "type": kind, "payload": payload}


def _item(payload: dict[str, Any]) -> dict[str, Any]:
    return _line("response_item", payload)


def _msg(role: str, text: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return _item({"type": "message", "role": role, "content": [{"type": kind, "text": text}]})


def _call(n: int, cmd: str) -> list[dict[str, Any]]:
    return [
        _item({"type": "reasoning", "summary": [], "encrypted_content": "gAAAA" + "x" * 40}),
        _item(
            {
                "type": "function_call",
                "name": "exec_command",
                "call_id": f"call_{n}",
                "arguments": json.dumps({"cmd": cmd}),
            }
        ),
        _item(
            {
                "type": "function_call_output",
                "call_id": f"call_{n}",
                "output": f"output of {cmd}\n" * 20,
            }
        ),
    ]


def _rollout(path: Path) -> Path:
    """Three prompts, four tool calls: six model calls (each run of model output)."""
    records = [
        _line(
            "session_meta",
            {
                "id": "019dec85",
                "timestamp": TS,
                "cwd": "/Users/u/proj",
                "originator": "Codex Desktop",
                "cli_version": "0.128.0",
                "source": "vscode",
                "model_provider": "openai",
            },
        ),
        _msg(
            "developer",
            "<permissions instructions>\nsandbox: workspace-write\n</permissions instructions>",
        ),
        _msg("user", "<environment_context>\n  <cwd>/Users/u/proj</cwd>\n</environment_context>"),
        _line("event_msg", {"type": "task_started", "turn_id": "t1"}),
        _msg("user", "List the files and count the lines of main.py"),
        _line("event_msg", {"type": "user_message", "message": "List the files ..."}),
        *_call(1, "ls"),
        *_call(2, "wc -l main.py"),
        _msg("assistant", "There are 3 files; main.py has 120 lines."),
        _line("event_msg", {"type": "task_complete", "turn_id": "t1"}),
        _msg("user", "Run the tests"),
        *_call(3, "pytest -q"),
        _msg("assistant", "All 12 tests pass."),
        _msg("user", "Thanks, summarise."),
        *_call(4, "git status"),
        _msg("assistant", "Clean tree, tests green."),
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_each_run_of_model_output_is_a_call(tmp_path: Path) -> None:
    s = load(str(_rollout(tmp_path / "rollout-2026-05-03T14-27-59-019dec85.jsonl")))
    assert len(s.requests) == 7
    assert all(r.usage is None and r.client == "codex/0.128.0" for r in s.requests)
    assert all(any("records no token_count" in n for n in r.notes) for r in s.requests)
    calls = [
        [b.ref for m in r.messages for b in m.blocks if b.kind == TOOL_USE] for r in s.requests
    ]
    answered = [
        [b.ref for m in r.messages for b in m.blocks if b.kind == TOOL_RESULT] for r in s.requests
    ]
    assert (
        calls
        == answered
        == [
            [],
            ["call_1"],
            ["call_1", "call_2"],
            ["call_1", "call_2"],
            ["call_1", "call_2", "call_3"],
            ["call_1", "call_2", "call_3"],
            ["call_1", "call_2", "call_3", "call_4"],
        ]
    )
    assert s.requests[-1].response is not None
    assert s.requests[-1].response.text == "Clean tree, tests green."
    a = Analysis(s)
    assert a.identity.version == (0, 128, 0)
    sizes = [p.estimated_prompt_tokens for p in a.timeline]
    assert sizes == sorted(sizes) and sizes[0] > 0


def test_report_says_why_there_are_no_api_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _rollout(tmp_path / "rollout.jsonl")
    assert main(["report", str(path)]) == 0
    text = capsys.readouterr().out
    assert "7 requests" in text and "agent Codex CLI 0.128.0" in text
    assert "no API counts: this rollout records no token_count events" in text
    assert "no API usage in its conversation to infer them from" in text
