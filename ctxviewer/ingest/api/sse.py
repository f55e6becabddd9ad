"""Reassemble streamed (server-sent events) responses into whole response bodies.

Used by the trace readers (claude-trace keeps ``body_raw``) and by the
recording proxy, so a streamed exchange is recorded and read back exactly like
a non-streamed one.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from typing import Any

import orjson

_LINE_END = re.compile(r"\r\n|\r|\n")


def parse_sse(text: str) -> Iterator[tuple[str | None, str]]:
    """Yield (event name, data) for each event in an SSE stream."""
    return iter_sse((text,))


def iter_sse(pieces: Iterable[str]) -> Iterator[tuple[str | None, str]]:
    """``parse_sse`` over a stream arriving in pieces (a line may span pieces).

    Working piece by piece keeps every step small: a proxy recording a 30 MB
    answer on its writer thread never holds the interpreter long enough to
    stall the streams it forwards.
    """
    event: str | None = None
    data: list[str] = []
    rest = ""
    for piece in pieces:
        text = rest + piece
        held = text.endswith("\r")  # maybe the first half of a CRLF
        # Only CR, LF and CRLF end SSE lines; str.splitlines() would also split a
        # JSON string holding U+2028, U+0085 or \x1c, which JSON leaves unescaped.
        whole = text[:-1] if held else text
        lines = _LINE_END.split(whole) if "\r" in whole else whole.split("\n")
        rest = lines.pop() + ("\r" if held else "")
        for line in lines:
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
    rest = rest.rstrip("\r")
    if rest.startswith("data:"):
        data.append(rest[5:].lstrip(" "))
    elif rest.startswith("event:"):
        event = rest[6:].strip()
    if data:
        yield event, "\n".join(data)


def _json_events(text: str) -> Iterator[dict[str, Any]]:
    return json_events(parse_sse(text))


def json_events(events: Iterable[tuple[str | None, str]]) -> Iterator[dict[str, Any]]:
    """The JSON objects among SSE events' data (``[DONE]`` and non-JSON skipped)."""
    for _event, data in events:
        if data.strip() == "[DONE]":
            continue
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            yield value


Stream = str | Iterable[dict[str, Any]]  # a stream's text, or its events already parsed


def _events(stream: Stream) -> Iterable[dict[str, Any]]:
    return _json_events(stream) if isinstance(stream, str) else stream


def reassemble_anthropic(text: Stream) -> dict[str, Any] | None:
    """An Anthropic Messages stream -> the message object a non-streamed call returns."""
    message: dict[str, Any] | None = None
    blocks: dict[int, dict[str, Any]] = {}
    # the pieces of each block's streamed fields (text, thinking, signature,
    # partial_json), joined once at the end: a long answer comes in thousands
    parts: dict[tuple[int, str], list[str]] = {}
    error: dict[str, Any] | None = None
    for ev in _events(text):
        kind = ev.get("type")
        if kind == "content_block_delta":
            idx = ev.get("index", 0)
            if idx not in blocks:
                blocks[idx] = {"type": "text", "text": ""}
            delta: Any = ev.get("delta") or {}  # JSON: not always an object
            field = _DELTA_FIELDS.get(delta.get("type"))
            if field is not None:
                piece = delta.get(field[1], "")
                key = (idx, field[0])
                pieces = parts.get(key)
                if pieces is None:
                    pieces = parts[key] = (
                        [str(blocks[idx].get(field[0], ""))] if field[0] != "input" else []
                    )
                pieces.append(piece if isinstance(piece, str) else str(piece))
            elif delta.get("type") == "citations_delta":
                blocks[idx].setdefault("citations", []).append(delta.get("citation"))
        elif kind == "message_start" and isinstance(ev.get("message"), dict):
            message = dict(ev["message"])
            message["usage"] = dict(message.get("usage") or {})
        elif kind == "content_block_start":
            idx = ev.get("index", len(blocks))
            blocks[idx] = dict(ev.get("content_block") or {})
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
    for (idx, name), pieces in parts.items():
        joined = "".join(pieces)
        if name != "input":
            blocks[idx][name] = joined
            continue
        try:
            blocks[idx]["input"] = orjson.loads(joined) if joined else {}
        except orjson.JSONDecodeError:
            blocks[idx]["input"] = joined
    message["content"] = [blocks[i] for i in sorted(blocks)]
    if error:
        message["error"] = error
    return message


# delta type -> (the block's field it extends, the delta's field holding the piece)
_DELTA_FIELDS = {
    "text_delta": ("text", "text"),
    "thinking_delta": ("thinking", "thinking"),
    "signature_delta": ("signature", "signature"),
    "input_json_delta": ("input", "partial_json"),
}


def reassemble_openai_chat(text: Stream) -> dict[str, Any] | None:
    """An OpenAI Chat Completions stream -> a ``chat.completion`` object."""
    result: dict[str, Any] | None = None
    choices: dict[int, dict[str, Any]] = {}
    for ev in _events(text):
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
                msg["reasoning_content"] = (
                    msg.get("reasoning_content", "") + delta["reasoning_content"]
                )
            for tc in delta.get("tool_calls") or []:
                calls = msg.setdefault("tool_calls", [])
                i = tc.get("index", len(calls))
                if not isinstance(i, int) or not 0 <= i < len(calls):
                    i = len(calls)  # a new call (a huge index must not allocate calls)
                    calls.append(
                        {"id": None, "type": "function", "function": {"name": "", "arguments": ""}}
                    )
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


def reassemble_openai_responses(text: Stream) -> dict[str, Any] | None:
    """An OpenAI Responses stream -> the final ``response`` object."""
    final: dict[str, Any] | None = None
    for ev in _events(text):
        if ev.get("type") in ("response.completed", "response.incomplete", "response.failed"):
            final = ev.get("response")
        elif ev.get("type") == "response.created" and final is None:
            final = ev.get("response")
    return final


def reassemble_gemini(text: Stream) -> dict[str, Any] | None:
    """A Gemini ``streamGenerateContent?alt=sse`` stream (each event a
    ``GenerateContentResponse`` chunk) -> the response a ``generateContent`` call returns:
    each candidate's parts joined (consecutive text of the same kind in one part), the
    last ``usageMetadata``."""
    result: dict[str, Any] | None = None
    candidates: dict[int, dict[str, Any]] = {}
    for ev in _events(text):
        if result is None:
            result = {}
        for key in ("usageMetadata", "modelVersion", "responseId", "promptFeedback"):
            if key in ev:
                result[key] = ev[key]
        for cand in ev.get("candidates") or []:
            if not isinstance(cand, dict):
                continue
            idx = cand.get("index", 0)
            out = candidates.setdefault(
                idx, {"content": {"role": "model", "parts": []}, "index": idx}
            )
            for key, value in cand.items():
                if key not in ("content", "index"):
                    out[key] = value
            content = cand.get("content")
            parts = content.get("parts") if isinstance(content, dict) else None
            for part in parts if isinstance(parts, list) else []:
                _add_part(out["content"]["parts"], part)
    if result is None:
        return None
    result["candidates"] = [candidates[i] for i in sorted(candidates)]
    return result


def _add_part(parts: list[Any], part: Any) -> None:
    """Append a streamed part, joining text to the text part before it of the same kind."""
    last = parts[-1] if parts else None
    if (
        isinstance(part, dict)
        and isinstance(part.get("text"), str)
        and isinstance(last, dict)
        and isinstance(last.get("text"), str)
        and bool(last.get("thought")) == bool(part.get("thought"))
    ):
        last["text"] += part["text"]
        if part.get("thoughtSignature"):
            last["thoughtSignature"] = part["thoughtSignature"]
        return
    parts.append(dict(part) if isinstance(part, dict) else part)


def reassemble(text: Stream) -> dict[str, Any] | None:
    """Reassemble any supported stream, recognising it by its events; None when it is
    none of them, or its events hold values of the wrong types (a damaged stream: the
    request stays, without its response)."""
    try:
        return _reassemble(text)
    except (TypeError, AttributeError, ValueError, KeyError):
        return None


def _reassemble(text: Stream) -> dict[str, Any] | None:
    events = iter(_events(text))
    seen: list[dict[str, Any]] = []
    for ev in events:
        seen.append(ev)
        kind = str(ev.get("type", ""))
        if kind.startswith(("message_", "content_block")) or kind == "ping":
            return reassemble_anthropic(itertools.chain(seen, events))
        if kind.startswith("response."):
            return reassemble_openai_responses(itertools.chain(seen, events))
        if ev.get("object") == "chat.completion.chunk" or "choices" in ev:
            return reassemble_openai_chat(itertools.chain(seen, events))
        if "candidates" in ev or "usageMetadata" in ev:
            return reassemble_gemini(itertools.chain(seen, events))
    return None
