"""Gemini CLI: chat files (the JSON document and the JSONL layout). The tests that
recognise them; the readers are in ``gemini.chat``."""

from __future__ import annotations

from typing import Any

from ctxviewer.ingest.base import Format, Head


def gemini_document(head: Head) -> bool:
    doc = head.document
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("messages"), list)
        and "sessionId" in doc
        and ("projectHash" in doc or "startTime" in doc)
    )


def is_gemini_header(r: dict[str, Any]) -> bool:
    return "sessionId" in r and "projectHash" in r and "uuid" not in r and "type" not in r


def gemini_jsonl(head: Head) -> bool:
    for r in head.records:
        if isinstance(r.get("$set"), dict) or isinstance(r.get("$rewindTo"), str):
            return True
        if is_gemini_header(r):
            return True
        if (
            r.get("type") in ("user", "gemini")
            and isinstance(r.get("id"), str)
            and "uuid" not in r
            and "content" in r
            and "message" not in r
        ):
            return True
    return False


CHAT_DOCUMENT = Format(
    "gemini-cli",
    "Gemini CLI chat (JSON)",
    "~/.gemini/tmp/<hash>/chats/session-*.json (one JSON document)",
    True,
    gemini_document,
    "ctxviewer.ingest.gemini.chat",
)
CHAT_JSONL = Format(
    "gemini-cli-jsonl",
    "Gemini CLI chat (JSONL)",
    "~/.gemini/tmp/<hash>/chats/session-*.jsonl (header, messages, $set updates)",
    False,
    gemini_jsonl,
    "ctxviewer.ingest.gemini.chat",
    "JSONL_READER",
)
