"""Cline and Roo Code (VS Code extensions): a task folder under the editor's global
storage, ``tasks/<id>/`` with ``api_conversation_history.json`` (the Anthropic-shaped
messages), ``ui_messages.json`` (what the chat panel shows, with each API request's
token counts) and ``task_metadata.json``. The test that recognises either file; the
reader is ``cline.task``, which reads the task's files together."""

from __future__ import annotations

from typing import Any

from ctxviewer.ingest.base import Format, Head

# keys Cline and Roo Code add to the Anthropic messages they store
_MESSAGE_MARKS = (
    "ts",
    "metrics",
    "modelInfo",
    "isSummary",
    "condenseParent",
    "truncationParent",
    "isTruncationMarker",
)
_UI_TYPES = ("say", "ask")


def _api_history(doc: list[Any]) -> bool:
    msgs = [m for m in doc[:50] if isinstance(m, dict)]
    if not msgs or any(
        m.get("role") not in ("user", "assistant") and m.get("type") != "reasoning" for m in msgs
    ):
        return False
    if not all("content" in m or m.get("type") == "reasoning" for m in msgs):
        return False
    if any(k in m for m in msgs for k in _MESSAGE_MARKS):
        return True
    first = msgs[0].get("content")
    text = (
        first
        if isinstance(first, str)
        else " ".join(
            b.get("text", "")
            for b in first
            if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
        if isinstance(first, list)
        else ""
    )
    return "<task>" in text or "<environment_details>" in text  # early Cline: no marks


def _ui_messages(doc: list[Any]) -> bool:
    msgs = [m for m in doc[:50] if isinstance(m, dict)]
    return bool(msgs) and all(
        isinstance(m.get("ts"), (int, float)) and m.get("type") in _UI_TYPES for m in msgs
    )


def cline_task(head: Head) -> bool:
    doc = head.document
    return isinstance(doc, list) and bool(doc) and (_api_history(doc) or _ui_messages(doc))


TASK = Format(
    "cline-task",
    "Cline / Roo Code task",
    "<editor global storage>/<extension>/tasks/<id>/api_conversation_history.json "
    "(or ui_messages.json), read with the task's other files",
    True,
    cline_task,
    "ctxviewer.ingest.cline.task",
    own_document=True,
)
