"""Reassemble streamed (server-sent events) responses into whole response bodies.

Used by the trace readers (claude-trace keeps ``body_raw``) and by the
recording proxy, so a streamed exchange is recorded and read back exactly like
a non-streamed one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import orjson

_LINE_END = re.compile(r"\r\n|\r|\n")


def parse_sse(text: str) -> Iterator[tuple[str | None, str]]:
    """Yield (event name, data) for each event in an SSE stream."""
    event: str | None = None
    data: list[str] = []
    # Only CR, LF and CRLF end SSE lines; str.splitlines() would also split a
    # JSON string holding U+2028, U+0085 or \x1c, which JSON leaves unescaped.
    for line in _LINE_END.split(text):
        if not line:
            if data:
                yield event, "\n".join(data)
            event, data = None, []
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
    if data:
        yield event, "\n".join(data)


def _json_events(text: str) -> Iterator[dict[str, Any]]:
    for _event, data in parse_sse(text):
        if data.strip() == "[DONE]":
            continue
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            yield value


def reassemble_anthropic(text: str) -> dict[str, Any] | None:
    """An Anthropic Messages stream -> the message object a non-streamed call returns."""
    message: dict[str, Any] | None = None
    blocks: dict[int, dict[str, Any]] = {}
    partial_json: dict[int, list[str]] = {}
    error: dict[str, Any] | None = None
    for ev in _json_events(text):
        kind = ev.get("type")
        if kind == "message_start" and isinstance(ev.get("message"), dict):
            message = dict(ev["message"])
            message["usage"] = dict(message.get("usage") or {})
        elif kind == "content_block_start":
            idx = ev.get("index", len(blocks))
            blocks[idx] = dict(ev.get("content_block") or {})
        elif kind == "content_block_delta":
            idx = ev.get("index", 0)
            block = blocks.setdefault(idx, {"type": "text", "text": ""})
            _apply_delta(block, ev.get("delta") or {}, partial_json.setdefault(idx, []))
        elif kind == "message_delta":
            if message is None:
                message = {"type": "message", "role": "assistant", "content": [], "usage": {}}
            message.update({k: v for k, v in (ev.get("delta") or {}).items() if v is not None})
            for k, v in (ev.get("usage") or {}).items():
                if v is not None:
                    message["usage"][k] = v
        elif kind == "error":
            error = ev.get("error") or ev
    if message is None:
        return {"type": "error", "error": error} if error else None
    for idx, parts in partial_json.items():
        if parts and idx in blocks:
            raw = "".join(parts)
            try:
                blocks[idx]["input"] = orjson.loads(raw) if raw else {}
            except orjson.JSONDecodeError:
                blocks[idx]["input"] = raw
    message["content"] = [blocks[i] for i in sorted(blocks)]
    if error:
        message["error"] = error
    return message


def _apply_delta(block: dict[str, Any], delta: dict[str, Any], json_parts: list[str]) -> None:
    kind = delta.get("type")
    if kind == "text_delta":
        block["text"] = block.get("text", "") + delta.get("text", "")
    elif kind == "thinking_delta":
        block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
    elif kind == "signature_delta":
        block["signature"] = block.get("signature", "") + delta.get("signature", "")
    elif kind == "input_json_delta":
        json_parts.append(delta.get("partial_json", ""))
    elif kind == "citations_delta":
        block.setdefault("citations", []).append(delta.get("citation"))


def reassemble_openai_chat(text: str) -> dict[str, Any] | None:
    """An OpenAI Chat Completions stream -> a ``chat.completion`` object."""
    result: dict[str, Any] | None = None
    choices: dict[int, dict[str, Any]] = {}
    for ev in _json_events(text):
        if result is None:
            result = {k: ev.get(k) for k in ("id", "model", "created")}
            result["object"] = "chat.completion"
        if ev.get("usage"):
            result["usage"] = ev["usage"]
        for ch in ev.get("choices") or []:
            idx = ch.get("index", 0)
            out = choices.setdefault(
                idx, {"index": idx, "message": {"role": "assistant", "content": ""}}
            )
            delta = ch.get("delta") or {}
            msg = out["message"]
            if delta.get("content"):
                msg["content"] = (msg.get("content") or "") + delta["content"]
            if delta.get("reasoning_content"):
                msg["reasoning_content"] = msg.get("reasoning_content", "") + delta[
                    "reasoning_content"
                ]
            for tc in delta.get("tool_calls") or []:
                calls = msg.setdefault("tool_calls", [])
                i = tc.get("index", len(calls))
                if not isinstance(i, int) or not 0 <= i < len(calls):
                    i = len(calls)  # a new call (a huge index must not allocate calls)
                    calls.append({"id": None, "type": "function",
                                  "function": {"name": "", "arguments": ""}})
                call = calls[i]
                if tc.get("id"):
                    call["id"] = tc["id"]
                fn = tc.get("function") or {}
                call["function"]["name"] += fn.get("name") or ""
                call["function"]["arguments"] += fn.get("arguments") or ""
            if ch.get("finish_reason"):
                out["finish_reason"] = ch["finish_reason"]
    if result is None:
        return None
    result["choices"] = [choices[i] for i in sorted(choices)]
    return result


def reassemble_openai_responses(text: str) -> dict[str, Any] | None:
    """An OpenAI Responses stream -> the final ``response`` object."""
    final: dict[str, Any] | None = None
    for ev in _json_events(text):
        if ev.get("type") in ("response.completed", "response.incomplete", "response.failed"):
            final = ev.get("response")
        elif ev.get("type") == "response.created" and final is None:
            final = ev.get("response")
    return final


def reassemble(text: str) -> dict[str, Any] | None:
    """Reassemble any supported stream, recognising it by its events; None when it is
    none of them, or its events hold values of the wrong types (a damaged stream: the
    request stays, without its response)."""
    try:
        return _reassemble(text)
    except (TypeError, AttributeError, ValueError, KeyError):
        return None


def _reassemble(text: str) -> dict[str, Any] | None:
    for ev in _json_events(text):
        kind = str(ev.get("type", ""))
        if kind.startswith("message_") or kind.startswith("content_block") or kind == "ping":
            return reassemble_anthropic(text)
        if kind.startswith("response."):
            return reassemble_openai_responses(text)
        if ev.get("object") == "chat.completion.chunk" or "choices" in ev:
            return reassemble_openai_chat(text)
    return None
