"""Build agent logs for tests: Claude Code's real captured trace with its headers
changed or count_tokens calls added, and a qwen-code-shaped exchange written here
(placeholder text, never an agent's real prompt)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

CAPTURED = "captured/claude-code-2.1.197-tui.claude-trace.jsonl"
CAPTURED_CONTEXT = "captured/claude-code-2.1.197-tui.context.txt"
CC_SESSION = "5b0c1f8e-1111-4222-8333-944455556666"


def captured_records(corpus: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (corpus / CAPTURED).read_text("utf-8").splitlines()]


def with_headers(records: list[dict[str, Any]], **headers: str) -> list[dict[str, Any]]:
    """``records`` whose requests carry ``headers`` (names as given, replacing any casing)."""
    out = copy.deepcopy(records)
    for r in out:
        h = r["request"]["headers"]
        for name, value in headers.items():
            for k in [k for k in h if k.lower() == name.lower()]:
                del h[k]
            h[name] = value
    return out


def trace_line(
    url: str,
    body: dict[str, Any],
    response: dict[str, Any] | None,
    headers: dict[str, str],
    ts: str,
    status: int = 200,
) -> dict[str, Any]:
    """One claude-trace record with a JSON response."""
    return {
        "request": {
            "timestamp": ts,
            "method": "POST",
            "url": url,
            "headers": headers,
            "body": body,
        },
        "response": {"timestamp": ts, "status_code": status, "headers": {}, "body": response},
        "logged_at": ts,
    }


def count_call(
    headers: dict[str, str],
    ts: str,
    answer: int | None,
    *,
    text: str = "",
    tools: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "claude-opus-4-8",
        "messages": [{"role": "user", "content": text or "foo"}],
    }
    if tools:
        body["tools"] = tools
    url = "http://127.0.0.1:18080/v1/messages/count_tokens?beta=true"
    if answer is None:
        return trace_line(url, body, {"type": "error"}, headers, ts, status=404)
    return trace_line(url, body, {"input_tokens": answer}, headers, ts)


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    return path


# -- qwen-code shaped ---------------------------------------------------------------

QWEN_UA = "QwenCode/0.15.10 (linux; x64)"
QWEN_CORE = "You are Qwen Code, an interactive CLI agent.\n" + "Follow the rules. " * 200
QWEN_DEFERRED = (
    "## Deferred Tools\n\nThe following tools are available but their schemas "
    'are not listed.\n\n- "ask_user_question": "Ask the user a question."\n'
    '- "exit_plan_mode": "Leave plan mode."\n'
    '- "mcp__notes__search_notes": "Search the notes for a query."\n'
)
QWEN_MEMORY = (
    "--- Context from: QWEN.md ---\n# Project rules\n- Use four spaces.\n"
    "--- End of Context from: QWEN.md ---\n"
)
QWEN_AUTO_MEMORY = "# auto memory\n\nYou have a memory folder. " + "Save facts. " * 100
QWEN_SKILLS = (
    "Execute a skill\n\n<available_skills>\n<skill>\n<name>\nnotes\n</name>\n"
    "<description>\nTake notes.\n</description>\n<location>\nproject\n</location>\n"
    "</skill>\n</available_skills>"
)


def _tool(name: str, description: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }


def qwen_body(
    turns: int = 1, system: str | None = None, tools: list[str] | None = None
) -> dict[str, Any]:
    text = (
        system
        if system is not None
        else (
            QWEN_CORE
            + "\n\n"
            + QWEN_DEFERRED
            + "\n---\n\n"
            + QWEN_MEMORY
            + "\n---\n\n"
            + QWEN_AUTO_MEMORY
        )
    )
    msgs: list[dict[str, Any]] = [{"role": "system", "content": text}]
    for i in range(turns):
        msgs.append({"role": "user", "content": f"Question {i}: what does hello.py do?"})
        if i + 1 < turns:
            msgs.append({"role": "assistant", "content": f"Answer {i}."})
    names = tools if tools is not None else ["read_file", "run_shell_command", "todo_write"]
    decls = [_tool(n, f"The {n} tool.") for n in names]
    decls.append(_tool("skill", QWEN_SKILLS))
    return {
        "model": "qwen3-coder-plus",
        "stream": False,
        "max_tokens": 8000,
        "messages": msgs,
        "tools": decls,
    }


def qwen_line(body: dict[str, Any], prompt_tokens: int, ts: str) -> dict[str, Any]:
    response = {
        "id": f"chatcmpl-{ts}",
        "object": "chat.completion",
        "model": body["model"],
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Done."},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": 5,
            "total_tokens": prompt_tokens + 5,
        },
    }
    return trace_line(
        "http://127.0.0.1:18090/v1/chat/completions",
        body,
        response,
        {"user-agent": QWEN_UA, "content-type": "application/json"},
        ts,
    )


def qwen_session(n: int = 3, start_tokens: int = 5_000) -> list[dict[str, Any]]:
    """``n`` main turns, then qwen-code's memory-extraction side agent (another prompt)."""
    out = [
        qwen_line(qwen_body(i + 1), start_tokens + 100 * i, f"2026-11-20T10:00:0{i}.000Z")
        for i in range(n)
    ]
    side = qwen_body(
        1, system="You are a memory extraction agent. " * 40, tools=["read_file", "write_file"]
    )
    out.append(qwen_line(side, 1_500, f"2026-11-20T10:00:0{n}.500Z"))
    return out


def as_recording(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """claude-trace records as ctxviewer proxy recording lines, after a meta line."""
    from urllib.parse import urlsplit

    out: list[dict[str, Any]] = [
        {
            "ctxviewer": 1,
            "type": "meta",
            "version": "test",
            "started": "2026-11-20T10:00:00.000Z",
            "upstreams": {},
        }
    ]
    for n, r in enumerate(records, 1):
        path = urlsplit(r["request"]["url"]).path
        api = (
            "anthropic-count-tokens"
            if path.endswith("count_tokens")
            else "openai-chat"
            if "chat/completions" in path
            else "anthropic"
        )
        headers = {k.lower(): v for k, v in r["request"]["headers"].items()}
        out.append(
            {
                "ctxviewer": 1,
                "type": "exchange",
                "id": f"ex_{n:06d}",
                "api": api,
                "method": "POST",
                "path": path,
                "upstream": r["request"]["url"],
                "started": r["request"]["timestamp"],
                "request": {"headers": headers, "body": r["request"]["body"]},
                "response": {
                    "status": r["response"]["status_code"],
                    "headers": {},
                    "stream": False,
                    "body": r["response"].get("body"),
                },
                "usage": None,
                "timing": {"first_byte_ms": 1.0, "total_ms": 2.0},
                "error": None,
            }
        )
    return out
