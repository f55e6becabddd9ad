"""Codex CLI: rollout files and the Responses API items they hold. The record types,
and the test that recognises a rollout; the reader is ``codex.rollout``."""

from __future__ import annotations

from ctxviewer.ingest.base import Format, Head

# -- Codex rollouts: the envelope of each line, and the Responses API item types
CODEX_ENVELOPE = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
)


CODEX_OUTPUT_ITEMS = frozenset(
    {
        "reasoning",
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "web_search_call",
        "image_generation_call",
        "tool_search_call",
    }
)


CODEX_INPUT_ITEMS = frozenset(
    {
        "function_call_output",
        "custom_tool_call_output",
        "local_shell_call_output",
        "tool_search_output",
        "mcp_tool_call_output",
    }
)


CODEX_OPAQUE_ITEMS = frozenset({"compaction", "compaction_summary"})  # encrypted summary


CODEX_ITEM_TYPES = CODEX_OUTPUT_ITEMS | CODEX_INPUT_ITEMS | CODEX_OPAQUE_ITEMS | {"message"}


def codex(head: Head) -> bool:
    records = head.records
    if any(
        isinstance(r.get("type"), str)
        and r["type"] in CODEX_ENVELOPE
        and isinstance(r.get("payload"), dict)
        for r in records
    ):
        return True
    if not records:
        return False
    first = records[0]
    old_meta = (
        "id" in first and "timestamp" in first and "instructions" in first and "type" not in first
    )
    return old_meta and all(
        r.get("type") in CODEX_ITEM_TYPES or "record_type" in r for r in records[1:]
    )


FORMAT = Format(
    "codex",
    "Codex CLI rollout",
    "~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl (token_count events)",
    False,
    codex,
    "ctxviewer.ingest.codex.rollout",
)
