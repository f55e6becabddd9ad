"""qwen-code: chat files (Gemini Content records). The test that recognises them;
the reader is ``qwen.chat``."""

from __future__ import annotations

from typing import Any

from ctxviewer.ingest.base import Format, Head

# -- qwen-code chats: record types, and the system subtypes only qwen-code writes
# (Claude Code's transcripts share the record envelope)
QWEN_TYPES = frozenset({"user", "assistant", "tool_result", "system"})


QWEN_SUBTYPES = frozenset(
    {
        "chat_compression",
        "ui_telemetry",
        "slash_command",
        "at_command",
        "attribution_snapshot",
        "session_notes",
        "custom_title",
        "session_source",
        "session_model",
        "file_history_snapshot",
        "parent_session",
        "session_execution_engine",
        "session_approval_mode",
        "rewind",
        "agent_bootstrap",
        "turn_result",
        "branch_checkpoint",
        "background_task_completed",
    }
)


def is_qwen_record(r: dict[str, Any]) -> bool:
    if "uuid" not in r or not isinstance(r.get("type"), str) or r["type"] not in QWEN_TYPES:
        return False
    msg = r.get("message")
    if isinstance(msg, dict):
        return isinstance(msg.get("parts"), list)
    return (
        "usageMetadata" in r
        or r.get("type") == "tool_result"
        or (
            r.get("type") == "system"
            and isinstance(r.get("subtype"), str)
            and r["subtype"] in QWEN_SUBTYPES
        )
    )


def qwen_code(head: Head) -> bool:
    claude = any(
        isinstance(r.get("message"), dict) and "content" in r["message"] for r in head.records
    )
    return not claude and any(is_qwen_record(r) for r in head.records)


FORMAT = Format(
    "qwen-code",
    "qwen-code chat",
    "~/.qwen/projects/<project>/chats/*.jsonl (Gemini Content records)",
    False,
    qwen_code,
    "ctxviewer.ingest.qwen.chat",
)
