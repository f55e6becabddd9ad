"""Which reader a file needs, decided without importing any reader.

Each log format is a ``Format``: its registry name, its description and a
``sniff`` test on the file's head. The readers themselves (``claude_code``,
``codex``, ``trace``, …) are imported only when a file of their format is
opened, so ``ctxviewer report`` on a Claude Code transcript never loads the
Codex, Gemini or trace code. The record types the tests look for live here,
and the readers take them from here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxviewer.ingest.base import Head

# -- Codex rollouts: the envelope of each line, and the Responses API item types
CODEX_ENVELOPE = frozenset({"session_meta", "response_item", "event_msg", "turn_context",
                            "compacted"})
CODEX_OUTPUT_ITEMS = frozenset({"reasoning", "function_call", "custom_tool_call",
                                "local_shell_call", "web_search_call", "image_generation_call",
                                "tool_search_call"})
CODEX_INPUT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output",
                               "local_shell_call_output", "tool_search_output",
                               "mcp_tool_call_output"})
CODEX_OPAQUE_ITEMS = frozenset({"compaction", "compaction_summary"})  # encrypted summary
CODEX_ITEM_TYPES = CODEX_OUTPUT_ITEMS | CODEX_INPUT_ITEMS | CODEX_OPAQUE_ITEMS | {"message"}

# -- qwen-code chats: record types, and the system subtypes only qwen-code writes
# (Claude Code's transcripts share the record envelope)
QWEN_TYPES = frozenset({"user", "assistant", "tool_result", "system"})
QWEN_SUBTYPES = frozenset({
    "chat_compression", "ui_telemetry", "slash_command", "at_command", "attribution_snapshot",
    "session_notes", "custom_title", "session_source", "session_model", "file_history_snapshot",
    "parent_session", "session_execution_engine", "session_approval_mode", "rewind",
    "agent_bootstrap", "turn_result", "branch_checkpoint", "background_task_completed",
})

# -- OpenTelemetry: one OTLP export request per line (the Collector's file exporter)
OTEL_EXPORT_KEYS = ("resourceLogs", "resourceSpans", "resourceMetrics")

_CLAUDE_TYPES = ("user", "assistant", "system", "progress", "file-history-snapshot", "summary")


def recording(head: Head) -> bool:
    return any(r.get("ctxviewer") == 1 for r in head.records[:3])


def claude_trace(head: Head) -> bool:
    return any(isinstance(r.get("request"), dict) and "response" in r
               and isinstance(r["request"].get("body"), (dict, type(None)))
               for r in head.records[:5])


def is_otel_export(record: Any) -> bool:
    """An OTLP export request (logs, spans or metrics)."""
    return isinstance(record, dict) and any(isinstance(record.get(k), list)
                                            for k in OTEL_EXPORT_KEYS)


def otel(head: Head) -> bool:
    start = head.text.lstrip()[:40]
    if start.startswith(tuple('{"' + k + '"' for k in OTEL_EXPORT_KEYS)):
        return True
    return any(is_otel_export(r) for r in head.records[:3])


def is_qwen_record(r: dict[str, Any]) -> bool:
    if "uuid" not in r or not isinstance(r.get("type"), str) or r["type"] not in QWEN_TYPES:
        return False
    msg = r.get("message")
    if isinstance(msg, dict):
        return isinstance(msg.get("parts"), list)
    return ("usageMetadata" in r or r.get("type") == "tool_result"
            or (r.get("type") == "system" and isinstance(r.get("subtype"), str)
                and r["subtype"] in QWEN_SUBTYPES))


def qwen_code(head: Head) -> bool:
    claude = any(isinstance(r.get("message"), dict) and "content" in r["message"]
                 for r in head.records)
    return not claude and any(is_qwen_record(r) for r in head.records)


def claude_code(head: Head) -> bool:
    for r in head.records:
        if "sessionId" in r and r.get("type") in _CLAUDE_TYPES:
            return True
        if r.get("type") == "summary" and "leafUuid" in r:
            return True
        if r.get("type") == "file-history-snapshot" and "messageId" in r:
            return True
    return False


def codex(head: Head) -> bool:
    records = head.records
    if any(isinstance(r.get("type"), str) and r["type"] in CODEX_ENVELOPE
           and isinstance(r.get("payload"), dict) for r in records):
        return True
    if not records:
        return False
    first = records[0]
    old_meta = ("id" in first and "timestamp" in first and "instructions" in first
                and "type" not in first)
    return old_meta and all(r.get("type") in CODEX_ITEM_TYPES or "record_type" in r
                            for r in records[1:])


def gemini_document(head: Head) -> bool:
    doc = head.document
    return (isinstance(doc, dict) and isinstance(doc.get("messages"), list)
            and "sessionId" in doc and ("projectHash" in doc or "startTime" in doc))


def is_gemini_header(r: dict[str, Any]) -> bool:
    return "sessionId" in r and "projectHash" in r and "uuid" not in r and "type" not in r


def gemini_jsonl(head: Head) -> bool:
    for r in head.records:
        if isinstance(r.get("$set"), dict) or isinstance(r.get("$rewindTo"), str):
            return True
        if is_gemini_header(r):
            return True
        if (r.get("type") in ("user", "gemini") and isinstance(r.get("id"), str)
                and "uuid" not in r and "content" in r and "message" not in r):
            return True
    return False


class Format:
    """One log format: what ``ctxviewer formats`` lists, its test, and where its reader is."""

    __slots__ = ("name", "label", "description", "document", "sniff", "module", "attr")

    def __init__(self, name: str, label: str, description: str, document: bool,
                 sniff: Callable[[Head], bool], module: str, attr: str = "READER") -> None:
        self.name, self.label, self.description, self.document = name, label, description, \
            document
        self.sniff, self.module, self.attr = sniff, module, attr


RECORDING = Format("recording", "ctxviewer recording",
                   "ctxviewer proxy recordings (docs/recording-format.md)", False, recording,
                   "ctxviewer.ingest.trace.reader", "RECORDING")
CLAUDE_TRACE = Format("claude-trace", "claude-trace / API trace",
                      "request/response pairs (claude-trace and compatible proxies): "
                      "Anthropic and OpenAI", False, claude_trace,
                      "ctxviewer.ingest.trace.reader", "CLAUDE_TRACE")
OTEL = Format("otel", "OpenTelemetry (OTLP JSON)",
              "OTLP JSON lines, as the OpenTelemetry Collector's file exporter and "
              "`ctxviewer otel` write them: Claude Code's API events (docs/otel.md)", False,
              otel, "ctxviewer.ingest.otel.reader")
QWEN_CODE = Format("qwen-code", "qwen-code chat",
                   "~/.qwen/projects/<project>/chats/*.jsonl (Gemini Content records)", False,
                   qwen_code, "ctxviewer.ingest.qwen.chat")
CLAUDE_CODE = Format("claude-code", "Claude Code transcript",
                     "~/.claude/projects/**/*.jsonl session transcripts", False, claude_code,
                     "ctxviewer.ingest.claude.transcript")
CODEX = Format("codex", "Codex CLI rollout",
               "~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl (token_count events)", False,
               codex, "ctxviewer.ingest.codex.rollout")
GEMINI = Format("gemini-cli", "Gemini CLI chat (JSON)",
                "~/.gemini/tmp/<hash>/chats/session-*.json (one JSON document)", True,
                gemini_document, "ctxviewer.ingest.gemini.chat")
GEMINI_JSONL = Format("gemini-cli-jsonl", "Gemini CLI chat (JSONL)",
                      "~/.gemini/tmp/<hash>/chats/session-*.jsonl (header, messages, $set "
                      "updates)", False, gemini_jsonl, "ctxviewer.ingest.gemini.chat", "JSONL_READER")

# detection order: most specific first
FORMATS: tuple[Format, ...] = (
    RECORDING,
    CLAUDE_TRACE,
    OTEL,  # OTLP export requests: no other reader takes their lines
    QWEN_CODE,  # before Claude Code: same record envelope, Claude's test would take it
    CLAUDE_CODE,
    CODEX,
    GEMINI,  # the JSON document layout; before the JSONL one
    GEMINI_JSONL,
)
