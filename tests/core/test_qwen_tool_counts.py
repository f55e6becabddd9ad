"""Per-tool counts under --estimator qwen agree with what qwen-code's /context prints.

qwen-code estimates each tool as ``estimateTokens(JSON.stringify(tool.schema))``
where the schema is a FunctionDeclaration ``{name, description,
parametersJsonSchema}``, and ``estimateTokens`` is
``ceil(ascii/4 + nonAscii*1.5)``. On the wire (OpenAI-compatible
backends) the same tool travels as ``{"type": "function", "function": {name,
description, parameters}}``. ctxviewer reads the wire form; its per-tool
count must stay within 10% of qwen-code's number for the same declaration.
qwen-code's number is computed here independently, with its own key names.
"""

from __future__ import annotations

import json
import math

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.ingest.builder import SessionBuilder
from ctxviewer.ingest.trace.reader import CLAUDE_TRACE
from ctxviewer.model import Session

DECLARATIONS = [
    {
        "name": "read_file",
        "description": "Reads and returns the content of a specified file. If the file is large, "
        "the content will be truncated. Handles text, images and PDF files.",
        "parametersJsonSchema": {
            "type": "object",
            "properties": {
                "absolute_path": {
                    "type": "string",
                    "description": "The absolute path to the file.",
                },
                "offset": {"type": "number", "description": "0-based line number to start from."},
                "limit": {"type": "number", "description": "Maximum number of lines to read."},
            },
            "required": ["absolute_path"],
        },
    },
    {
        "name": "run_shell_command",
        "description": "在当前项目中执行 shell 命令。Executes a given shell command as `bash -c "
        "<command>`; returns stdout, stderr, exit code and background PIDs.",
        "parametersJsonSchema": {
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "Exact bash command to execute"},
                "is_background": {"type": "boolean", "description": "Run in the background"},
            },
            "required": ["command", "is_background"],
        },
    },
    {
        "name": "skill",
        "description": "Execute a skill within the main conversation\n<skills_instructions>\nWhen "
        "users ask you to perform tasks, check if any of the available skills can "
        "help.\n</skills_instructions>\n<available_skills>\n<skill>\n<name>pdf</name>"
        "\n<description>Convert PDF files to text (project)</description>\n"
        "<location>project</location>\n</skill>\n</available_skills>",
        "parametersJsonSchema": {
            "type": "object",
            "properties": {"skill": {"type": "string", "description": "The skill name"}},
            "required": ["skill"],
        },
    },
    {
        "name": "github__create_issue",
        "description": "Create a new issue in a GitHub repository",
        "parametersJsonSchema": {
            "type": "object",
            "properties": {
                "owner": {"type": "string"},
                "repo": {"type": "string"},
                "title": {"type": "string"},
                "body": {"type": "string"},
            },
            "required": ["owner", "repo", "title"],
        },
    },
]


def qwen_code_estimate(text: str) -> int:
    ascii_chars = sum(1 for ch in text if ord(ch) < 128)
    return math.ceil(ascii_chars / 4 + (len(text) - ascii_chars) * 1.5)


def js_stringify(value) -> str:  # JSON.stringify: no spaces, non-ASCII as is
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def wire_request() -> dict:
    tools = [
        {
            "type": "function",
            "function": {
                "name": d["name"],
                "description": d["description"],
                "parameters": d["parametersJsonSchema"],
            },
        }
        for d in DECLARATIONS
    ]
    return {
        "request": {
            "timestamp": 1_767_000_000,
            "url": "https://dashscope.example/v1/chat/completions",
            "body": {
                "model": "qwen3-coder-plus",
                "tools": tools,
                "messages": [
                    {"role": "system", "content": "You are Qwen Code."},
                    {"role": "user", "content": "hi"},
                ],
            },
        },
        "response": {
            "status_code": 200,
            "body": {
                "id": "c1",
                "choices": [],
                "usage": {"prompt_tokens": 4000, "completion_tokens": 5},
            },
        },
    }


def test_per_tool_counts_match_qwen_code_context(tmp_path):
    path = tmp_path / "qwen-trace.jsonl"
    path.write_text(json.dumps(wire_request(), ensure_ascii=False) + "\n", encoding="utf-8")
    builder = SessionBuilder(Session(str(path), CLAUDE_TRACE.name))
    for item in CLAUDE_TRACE.parser().feed(1, wire_request()):
        builder.add(item)
    a = Analysis(builder.build(), "qwen", window_override=131_072)
    b = a.breakdown(0)
    ours = {}
    for cat in b.categories:
        for item in cat.items:
            for sub in item.items or (item,):
                if cat.name in ("builtin_tools", "mcp_tools"):
                    ours[sub.name] = sub.tokens
    ours["skill"] = b.category("skills").tokens
    for decl in DECLARATIONS:
        expected = qwen_code_estimate(js_stringify(decl))
        assert abs(ours[decl["name"]] - expected) <= 0.10 * expected, (decl["name"], ours, expected)
    assert [s.name for s in b.category("mcp_tools").items] == ["github"]
