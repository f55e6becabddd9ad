"""Anthropic Messages API bodies -> model objects.

Shared by every reader that sees full request bodies (claude-trace, ctxviewer
recordings). An ``Interner`` makes equal messages and tool lists one object,
so a trace that repeats the whole history in every request stores (and
counts) each distinct message once.
"""

from __future__ import annotations

import base64
import math
import struct
import time
from typing import Any, TypeVar

from ctxviewer.ingest.base import as_dict, as_int, well_typed
from ctxviewer.ingest.classify import classify_tool, split_message_text, split_system_text
from ctxviewer.jsonish import js_dumps
from ctxviewer.model import (
    DOCUMENT,
    IMAGE,
    OTHER,
    THINKING,
    TOOL_RESULT,
    TOOL_USE,
    Block,
    Message,
    ToolDef,
    Usage,
)

DEFAULT_IMAGE_TOKENS = 1_600  # Anthropic's cap for one image (~1.15 megapixels)


RECENT_CONVERSATIONS = 8  # message lists remembered for reuse (main + side calls + sub-agents)

T = TypeVar("T")


class Interner:
    """One shared object per distinct value.

    It also remembers the raw (parsed JSON) message lists of the last few
    requests with their conversions, so that ``messages_from`` converts only
    what a request adds to an earlier one.
    """

    def __init__(self) -> None:
        self._pool: dict[Any, Any] = {}
        self.recent: list[tuple[list[Any], list[Any]]] = []  # (raw messages, converted)
        self.tools_memo: tuple[Any, tuple[ToolDef, ...] | None] = (None, None)  # (raw, converted)
        self.system_memo: dict[str, tuple[Block, ...]] = {}  # system text -> blocks
        # a raw Gemini Content (the same object again where the trace decoder reused it)
        # -> its Message: a recorded session converts each content once
        self.contents_memo: dict[int, tuple[Any, Message]] = {}

    def __call__(self, value: T) -> T:
        try:
            same: T = self._pool.setdefault(value, value)
        except TypeError:  # a list or an object where odd JSON had text: not hashable
            value = well_typed(value)
            same = self._pool.setdefault(value, value)
        return same


def iso(ts: Any) -> str | None:
    """An epoch number or ISO string -> ISO 8601 UTC ('...Z')."""
    if ts is None:
        return None
    if isinstance(ts, (int, float)) and not isinstance(ts, bool):
        if ts > 1e12:  # milliseconds
            ts = ts / 1000
        try:
            whole = math.floor(ts)
            micros = round((ts - whole) * 1e6)  # as datetime.fromtimestamp rounds
            if micros >= 1_000_000:
                whole, micros = whole + 1, 0
            return (
                time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{micros // 1000:03d}Z"
            )
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(ts, str):
        return ts
    return None


def usage_from(raw: Any) -> Usage | None:
    """Anthropic ``usage`` -> Usage (None when absent)."""
    if not isinstance(raw, dict) or not any(
        k in raw
        for k in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        )
    ):
        return None
    creation = as_dict(raw.get("cache_creation"))
    return Usage(
        input_tokens=as_int(raw.get("input_tokens")),
        cache_creation_input_tokens=as_int(raw.get("cache_creation_input_tokens")),
        cache_read_input_tokens=as_int(raw.get("cache_read_input_tokens")),
        output_tokens=as_int(raw.get("output_tokens")),
        cache_creation_1h_tokens=as_int(creation.get("ephemeral_1h_input_tokens")),
    )


def image_tokens(source: Any) -> int:
    """Anthropic's image cost, width*height/750, from a PNG/JPEG/GIF header when present."""
    if not isinstance(source, dict) or source.get("type") != "base64":
        return DEFAULT_IMAGE_TOKENS
    data = source.get("data")
    if not isinstance(data, str):
        return DEFAULT_IMAGE_TOKENS
    try:
        head = base64.b64decode(data[:4096] + "=" * (-len(data[:4096]) % 4))
    except ValueError:
        return DEFAULT_IMAGE_TOKENS
    size = _image_size(head)
    if size is None:
        return DEFAULT_IMAGE_TOKENS
    w, h = size
    scale: float = min(1.0, (1_150_000 / max(w * h, 1)) ** 0.5, 1568 / max(w, h, 1))
    return max(1, min(DEFAULT_IMAGE_TOKENS, round(w * scale * h * scale / 750)))


def _image_size(head: bytes) -> tuple[int, int] | None:
    if head[:8] == b"\x89PNG\r\n\x1a\n" and len(head) >= 24:
        return struct.unpack(">II", head[16:24])
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        return struct.unpack("<HH", head[6:10])
    if head[:2] == b"\xff\xd8":
        i = 2
        while i + 9 < len(head):
            if head[i] != 0xFF:
                return None
            marker, length = head[i + 1], struct.unpack(">H", head[i + 2 : i + 4])[0]
            if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                h, w = struct.unpack(">HH", head[i + 5 : i + 9])
                return w, h
            i += 2 + length
    return None


def _result_blocks(block: dict[str, Any]) -> list[Block]:
    content = block.get("content")
    ref = block.get("tool_use_id")
    err = bool(block.get("is_error"))
    if isinstance(content, str) or content is None:
        text = content or ""
        tag = split_message_text(text)[0].tag if text else None
        return [Block(TOOL_RESULT, text, tag=tag, ref=ref, is_error=err)]
    texts: list[str] = []
    extra: list[Block] = []
    for part in content if isinstance(content, list) else [content]:
        if isinstance(part, dict) and part.get("type") == "text":
            texts.append(str(part.get("text", "")))
        elif isinstance(part, dict) and part.get("type") == "image":
            extra.append(Block(IMAGE, "", ref=ref, fixed_tokens=image_tokens(part.get("source"))))
        else:
            texts.append(js_dumps(part))
    text = "\n".join(texts)
    tag = split_message_text(text)[0].tag if text else None
    return [Block(TOOL_RESULT, text, tag=tag, ref=ref, is_error=err), *extra]


def content_blocks(content: Any) -> list[Block]:
    """A message's ``content`` (string or list of blocks) -> Blocks."""
    if isinstance(content, str):
        return split_message_text(content) if content else []
    out: list[Block] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            out.extend(split_message_text(str(block.get("text", ""))))
        elif kind == "thinking":
            out.append(Block(THINKING, str(block.get("thinking", ""))))
        elif kind == "redacted_thinking":
            out.append(Block(THINKING, str(block.get("data", "")), name="redacted"))
        elif kind in ("tool_use", "server_tool_use"):
            out.append(
                Block(
                    TOOL_USE,
                    js_dumps(block.get("input", {})),
                    name=str(block.get("name", "")),
                    ref=block.get("id"),
                )
            )
        elif kind == "tool_result":
            out.extend(_result_blocks(block))
        elif kind == "image":
            out.append(Block(IMAGE, "", fixed_tokens=image_tokens(block.get("source"))))
        elif kind == "document":
            src = block.get("source") or {}
            text = src.get("data") if src.get("type") == "text" else None
            out.append(
                Block(
                    DOCUMENT,
                    str(text) if text else "",
                    name=block.get("title"),
                    fixed_tokens=None if text else DEFAULT_IMAGE_TOKENS,
                )
            )
        else:
            out.append(Block(OTHER, js_dumps(block), name=str(kind)))
    return out


def message_from(
    raw: Any, intern: Interner, msg_id: str | None = None, timestamp: str | None = None
) -> Message | None:
    if not isinstance(raw, dict):
        return None
    role = str(raw.get("role", "user"))
    return intern(Message(role, tuple(content_blocks(raw.get("content"))), msg_id, timestamp))


def messages_from(raw: list[Any], intern: Interner) -> tuple[Message, ...]:
    """A request's ``messages`` -> Messages, reusing the conversions of a recent request.

    Real traces repeat the whole history in every request. A raw message
    equal to the one at the same position of a recent request of the same
    conversation (same first message) takes that request's Message: one
    comparison of parsed JSON (C speed) instead of a conversion. Python's
    ``==`` takes 1, 1.0 and true for equal: a message that differs from the
    remembered one only by such a number type keeps the remembered conversion.
    """
    prev_raw: list[Any] = []
    prev_msgs: list[Any] = []
    if raw:
        for pos in range(len(intern.recent) - 1, -1, -1):
            cand_raw, cand_msgs = intern.recent[pos]
            if cand_raw and (cand_raw[0] is raw[0] or cand_raw[0] == raw[0]):
                prev_raw, prev_msgs = cand_raw, cand_msgs
                del intern.recent[pos]
                break
    same = _common_prefix(raw, prev_raw)
    out = prev_msgs[:same]
    known = len(prev_raw)
    out += [
        prev_msgs[i]
        if i < known and (m is prev_raw[i] or m == prev_raw[i])
        else message_from(m, intern)
        for i, m in enumerate(raw[same:], same)
    ]
    intern.recent.append((raw, out))
    if len(intern.recent) > RECENT_CONVERSATIONS:
        del intern.recent[0]
    return tuple(filter(None, out))  # message_from gives None for a non-object


def _common_prefix(raw: list[Any], prev: list[Any]) -> int:
    """How many leading elements ``raw`` and ``prev`` share (``==``, identity first).

    List comparison runs in C and takes identical objects as equal without
    looking inside: the history a decoder reused compares in microseconds.
    """
    high = min(len(raw), len(prev))
    if raw[:high] == prev[:high]:
        return high
    # Most often only the last shared message or two differ (a cache marker that
    # moved on): try those before a binary search, each try a slice compare in C.
    for n in range(high - 1, max(high - 3, 0), -1):
        if raw[n - 1] is prev[n - 1] or raw[n - 1] == prev[n - 1]:
            if raw[:n] == prev[:n]:
                return n
            high = n
            break
    low = 0  # raw[:low] == prev[:low] holds; raw[:high + 1] == prev[:high + 1] does not
    high -= 1
    while low < high:
        mid = (low + high + 1) // 2
        if raw[:mid] == prev[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def system_from(raw: Any, intern: Interner | None = None) -> tuple[Block, ...]:
    """System blocks, memory sections split out; each distinct text classified once."""
    memo = intern.system_memo if intern is not None else {}

    def split(text: str) -> tuple[Block, ...]:
        blocks = memo.get(text)
        if blocks is None:
            blocks = memo[text] = tuple(split_system_text(text))
        return blocks

    if isinstance(raw, str):
        return split(raw) if raw else ()
    out: list[Block] = []
    for block in raw if isinstance(raw, list) else []:
        if isinstance(block, dict) and block.get("type", "text") == "text":
            out.extend(split(str(block.get("text", ""))))
    return tuple(out)


def _declaration(tool: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in tool.items() if k != "cache_control"}


def tools_from(raw: Any, intern: Interner) -> tuple[ToolDef, ...]:
    memo_raw, memo_tools = intern.tools_memo
    if memo_tools is not None and raw == memo_raw:  # the same declarations as last time
        return memo_tools
    tools = _tools_from(raw, intern)
    intern.tools_memo = (raw, tools)
    return tools


def _tools_from(raw: Any, intern: Interner) -> tuple[ToolDef, ...]:
    out = []
    for tool in raw if isinstance(raw, list) else []:
        if isinstance(tool, dict) and tool.get("name"):
            out.append(
                classify_tool(
                    str(tool["name"]), _declaration(tool), str(tool.get("description", ""))
                )
            )
    return intern(tuple(out))


def response_message(body: Any, intern: Interner) -> Message | None:
    if not isinstance(body, dict) or body.get("type") == "error":
        return None
    return message_from(
        {"role": "assistant", "content": body.get("content")}, intern, body.get("id")
    )


def is_anthropic_body(body: Any) -> bool:
    return (
        isinstance(body, dict)
        and isinstance(body.get("messages"), list)
        and (
            "max_tokens" in body
            or "system" in body
            or "anthropic_version" in body
            or not any(
                isinstance(m, dict) and m.get("role") in ("system", "developer", "tool")
                for m in body["messages"]
            )
        )
    )
