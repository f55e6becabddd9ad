"""Codex Responses API items -> ctxviewer Messages and Blocks.

The conversion half of the Codex rollout reader (:mod:`ctxviewer.ingest.codex.rollout`):
one ``response_item`` payload becomes ``(is model output, Message)``; runs of
model output items merge into one assistant message; a compaction that did not
record its replacement history is rebuilt the way Codex does it.
"""

from __future__ import annotations

from typing import Any

import orjson

from ctxviewer.ingest.api.anthropic import DEFAULT_IMAGE_TOKENS
from ctxviewer.ingest.classify import agents_md_blocks, split_message_text
from ctxviewer.ingest.codex import (
    CODEX_INPUT_ITEMS,
    CODEX_ITEM_TYPES,
    CODEX_OPAQUE_ITEMS,
    CODEX_OUTPUT_ITEMS,
)
from ctxviewer.jsonish import js_dumps
from ctxviewer.model import (
    COMPACTION_SUMMARY,
    IMAGE,
    OTHER,
    SYSTEM_REMINDER,
    TEXT,
    THINKING,
    TOOL_RESULT,
    TOOL_USE,
    Block,
    Message,
)


def _sid(value: Any) -> str | None:
    """An id field as a string, or None for anything else (lists, objects)."""
    return value if isinstance(value, str) else None


_OUTPUT_ITEMS = CODEX_OUTPUT_ITEMS
_INPUT_ITEMS = CODEX_INPUT_ITEMS
_OPAQUE_ITEMS = CODEX_OPAQUE_ITEMS  # encrypted server-side summary
ITEM_TYPES = CODEX_ITEM_TYPES
QUIET_ITEMS = frozenset({"ghost_snapshot", "other"})  # never sent to the model


def _text_blocks(text: str, role: str = "user") -> list[Block]:
    """Message text: AGENTS.md instructions (old and new wrappers) are memory; injected
    context is a named reminder (classify.INJECTED); a developer message of no known
    kind is the developer instructions (config ``developer_instructions``)."""
    agents = agents_md_blocks(text)
    if agents is not None:
        return agents
    blocks = split_message_text(text) if text else []
    if role in ("developer", "system"):
        blocks = [
            b if b.tag else Block(TEXT, b.text, tag=SYSTEM_REMINDER, name="developer instructions")
            for b in blocks
        ]
    return blocks


def _content_blocks(content: Any, role: str = "user") -> list[Block]:
    if isinstance(content, str):
        return _text_blocks(content, role)
    out: list[Block] = []
    for part in content if isinstance(content, list) else []:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("input_text", "output_text", "text", "refusal"):
            out.extend(_text_blocks(str(part.get("text", part.get("refusal", ""))), role))
        elif kind in ("input_image", "image", "image_url"):
            out.append(Block(IMAGE, "", fixed_tokens=DEFAULT_IMAGE_TOKENS))
        elif kind is not None:
            out.append(Block(OTHER, js_dumps(part), name=str(kind)))
    return out


def _compact_json(value: Any) -> str:
    """Tool-call arguments as compact JSON (Codex stores them as a JSON string)."""
    if isinstance(value, str):
        try:
            return js_dumps(orjson.loads(value))
        except orjson.JSONDecodeError:
            return value
    return js_dumps(value if value is not None else {})


def _call_block(item: dict[str, Any]) -> Block:
    kind = str(item.get("type"))
    ref = _sid(item.get("call_id")) or _sid(item.get("id"))
    if kind == "reasoning":
        parts = item.get("summary") or item.get("content") or []
        parts = parts if isinstance(parts, list) else []
        text = "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
        return Block(THINKING, text)
    if kind == "function_call":
        return Block(
            TOOL_USE, _compact_json(item.get("arguments")), name=str(item.get("name", "")), ref=ref
        )
    if kind == "custom_tool_call":
        return Block(
            TOOL_USE, str(item.get("input") or ""), name=str(item.get("name", "")), ref=ref
        )
    return Block(
        TOOL_USE, _compact_json(item.get("action")), name=kind.removesuffix("_call"), ref=ref
    )


def _output_blocks(item: dict[str, Any]) -> list[Block]:
    out, err = item.get("output"), False
    if isinstance(out, dict):  # {content, success} payload
        err = out.get("success") is False
        out = out.get("content", out.get("content_items", out))
    texts: list[str] = []
    extra: list[Block] = []
    for part in out if isinstance(out, list) else [out]:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("input_image", "image"):
            extra.append(
                Block(IMAGE, "", ref=_sid(item.get("call_id")), fixed_tokens=DEFAULT_IMAGE_TOKENS)
            )
        elif isinstance(part, dict) and kind in ("input_text", "output_text", "text"):
            texts.append(str(part.get("text", "")))
        elif part is not None:
            texts.append(part if isinstance(part, str) else js_dumps(part))
    text = "\n".join(texts)
    tag = split_message_text(text)[0].tag if text else None
    return [Block(TOOL_RESULT, text, tag=tag, ref=_sid(item.get("call_id")), is_error=err), *extra]


def item_entry(item: dict[str, Any], ts: str | None) -> tuple[bool, Message] | None:
    """One Responses API item -> (is model output, Message); None for unknown items."""
    kind = item.get("type")
    if not isinstance(kind, str):
        return None
    if kind == "message":
        role = str(item.get("role") or "user")
        blocks = tuple(_content_blocks(item.get("content"), role))
        return role == "assistant", Message(role, blocks, _sid(item.get("id")), ts)
    if kind in _OUTPUT_ITEMS:
        return True, Message("assistant", (_call_block(item),), None, ts)
    if kind in _INPUT_ITEMS:
        return False, Message("tool", tuple(_output_blocks(item)), None, ts)
    if kind in _OPAQUE_ITEMS:
        block = Block(OTHER, "", tag=COMPACTION_SUMMARY, name="encrypted compaction")
        return False, Message("user", (block,), None, ts)
    return None


def compaction_rebuild(
    entries: list[tuple[bool, Message]], summary: str, ts: str | None
) -> list[tuple[bool, Message]]:
    """History after a compaction that did not record it: Codex keeps the initial
    context and the user's messages and appends the summary as a user message."""
    kept: list[tuple[bool, Message]]
    kept = [
        (o, m)
        for o, m in entries
        if not o and m.role in ("user", "developer", "system") and COMPACTION_SUMMARY not in m.tags
    ]
    note = Block(TEXT, summary, tag=COMPACTION_SUMMARY)
    return kept + [(False, Message("user", (note,), None, ts))]


def merge(entries: list[tuple[bool, Message]]) -> tuple[Message, ...]:
    """Items -> messages: a run of model output items is one assistant message."""
    out: list[Message] = []
    run: list[Message] = []
    for is_output, msg in entries + [(False, Message("", ()))]:
        if is_output:
            run.append(msg)
            continue
        if run:
            blocks = tuple(b for m in run for b in m.blocks)
            out.append(Message("assistant", blocks, run[0].id, run[0].timestamp))
            run = []
        if msg.role:
            out.append(msg)
    return tuple(out)
