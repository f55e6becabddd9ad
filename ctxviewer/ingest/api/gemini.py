"""Gemini API shapes -> model objects: Content parts, usage counts and whole
``generateContent`` request and response bodies.

Gemini CLI's chat files store the Content parts the API takes and returns
(text, thoughts, ``functionCall``/``functionResponse``, inline and file data)
and its ``usageMetadata`` counts; qwen-code, a Gemini CLI fork, stores the
same parts. A recorded call (``ctxviewer proxy``) has the request body:
``systemInstruction``, ``tools[].functionDeclarations`` and ``contents``.
"""

from __future__ import annotations

from typing import Any

from ctxviewer.ingest.api.anthropic import DEFAULT_IMAGE_TOKENS, Interner
from ctxviewer.ingest.base import as_int
from ctxviewer.ingest.classify import classify_tool, split_message_text, split_system_text
from ctxviewer.ingest.overflow import error_event as overflow_error_event
from ctxviewer.jsonish import js_dumps
from ctxviewer.model import (
    DOCUMENT,
    IMAGE,
    OTHER,
    THINKING,
    TOOL_RESULT,
    TOOL_USE,
    Block,
    Event,
    Message,
    ToolDef,
    Usage,
)


def gemini_usage(
    raw: dict[str, Any], *, prompt: str, cached: str, output: str, thoughts: str, total: str
) -> Usage:
    """Gemini-style counts (named by the keyword arguments) -> Usage.

    The prompt count includes the cached part. Gemini reports thoughts apart
    from the candidates; OpenAI-compatible backends (qwen-code) may already
    count them in the candidates: the total tells which.
    """
    p, c, o, t, tot = (as_int(raw.get(k)) for k in (prompt, cached, output, thoughts, total))
    c = min(c, p)
    out = o + t if t and (not tot or tot >= p + o + t) else o
    return Usage(
        input_tokens=p - c,
        cache_read_input_tokens=c,
        output_tokens=out,
        reasoning_tokens=min(t, out),
    )


def _as_parts(content: Any) -> list[Any]:
    """A PartListUnion (string, part, or list of both) -> a list of parts."""
    if content is None:
        return []
    if isinstance(content, list):
        return content
    return [content]


def _response_text(response: Any) -> tuple[str, bool]:
    """A functionResponse ``response`` -> (text the model reads, is error)."""
    if isinstance(response, dict) and len(response) == 1:
        ((key, value),) = response.items()
        if key in ("output", "error") and isinstance(value, str):
            return value, key == "error"
    if isinstance(response, str):
        return response, False
    return js_dumps(response), isinstance(response, dict) and "error" in response


def _part_blocks(part: Any, keep_thoughts: bool) -> list[Block]:
    if isinstance(part, str):
        return split_message_text(part) if part else []
    if not isinstance(part, dict):
        return []
    if isinstance(part.get("text"), str):
        if part.get("thought"):
            return [Block(THINKING, part["text"])] if keep_thoughts else []
        return split_message_text(part["text"]) if part["text"] else []
    if isinstance(part.get("functionCall"), dict):
        call = part["functionCall"]
        return [
            Block(
                TOOL_USE,
                js_dumps(call.get("args") or {}),
                name=str(call.get("name", "")),
                ref=call.get("id"),
            )
        ]
    if isinstance(part.get("functionResponse"), dict):
        resp = part["functionResponse"]
        text, err = _response_text(resp.get("response"))
        tag = split_message_text(text)[0].tag if text else None
        return [
            Block(
                TOOL_RESULT, text, tag=tag, name=resp.get("name"), ref=resp.get("id"), is_error=err
            )
        ]
    for key in ("inlineData", "fileData"):
        if isinstance(part.get(key), dict):
            mime = str(part[key].get("mimeType", ""))
            kind = IMAGE if mime.startswith("image/") else DOCUMENT
            return [Block(kind, "", name=mime or None, fixed_tokens=DEFAULT_IMAGE_TOKENS)]
    if part.get("thoughtSignature") and len(part) == 1:
        return []
    return [Block(OTHER, js_dumps(part), name=next(iter(part), None))]


def parts_blocks(content: Any, *, keep_thoughts: bool = False) -> list[Block]:
    """Gemini Content parts (text, functionCall/Response, inline data) -> Blocks."""
    return [b for part in _as_parts(content) for b in _part_blocks(part, keep_thoughts)]


def error_event(text: str, timestamp: str | None) -> Event:
    """An error notice -> a context-overflow event when it says so (with the numbers it
    states), else an API error (``ingest.overflow``)."""
    return overflow_error_event(text, timestamp)


def usage_from_gemini(body: Any) -> Usage | None:
    """A ``generateContent`` response's ``usageMetadata`` -> Usage (None when it has none)."""
    raw = body.get("usageMetadata") if isinstance(body, dict) else None
    if not isinstance(raw, dict) or not raw:
        return None
    return gemini_usage(
        raw,
        prompt="promptTokenCount",
        cached="cachedContentTokenCount",
        output="candidatesTokenCount",
        thoughts="thoughtsTokenCount",
        total="totalTokenCount",
    )


def _text_of(content: Any) -> str:
    """A ``systemInstruction`` (a Content, its parts, or a string) as text."""
    if isinstance(content, dict):
        content = content.get("parts")
    return "\n".join(
        p if isinstance(p, str) else str(p.get("text", ""))
        for p in _as_parts(content)
        if isinstance(p, (str, dict))
    )


def _gemini_tools(raw: Any) -> tuple[ToolDef, ...]:
    out: list[ToolDef] = []
    for tool in raw if isinstance(raw, list) else []:
        if not isinstance(tool, dict):
            continue
        decls = tool.get("functionDeclarations")
        for decl in decls if isinstance(decls, list) else []:
            if isinstance(decl, dict) and decl.get("name"):
                out.append(classify_tool(str(decl["name"]), decl, str(decl.get("description", ""))))
        for key, value in tool.items():  # googleSearch, codeExecution, urlContext, …
            if key != "functionDeclarations":
                out.append(classify_tool(key, {key: value}))
    return tuple(out)


def gemini_request_parts(
    body: dict[str, Any], intern: Interner
) -> tuple[tuple[Block, ...], tuple[ToolDef, ...], tuple[Message, ...]]:
    """(system blocks, tools, messages) of a ``generateContent`` request body."""
    text = _text_of(body.get("systemInstruction", body.get("system_instruction")))
    system = tuple(split_system_text(text)) if text else ()
    messages: list[Message] = []
    contents = body.get("contents")
    memo = intern.contents_memo
    if len(memo) > MEMO_CONTENTS:
        memo.clear()
    for content in contents if isinstance(contents, list) else []:
        if not isinstance(content, dict):
            continue
        done = memo.get(id(content))
        if done is None or done[0] is not content:
            done = memo[id(content)] = (content, intern(_content_message(content)))
        messages.append(done[1])
    return intern(system), intern(_gemini_tools(body.get("tools"))), tuple(messages)


MEMO_CONTENTS = 50_000  # contents remembered by identity (each keeps its raw object alive)


def _content_message(content: dict[str, Any]) -> Message:
    role = "assistant" if content.get("role") == "model" else "user"
    blocks = parts_blocks(content.get("parts"), keep_thoughts=True)
    if role == "user" and blocks and all(b.kind == TOOL_RESULT for b in blocks):
        role = "tool"
    return Message(role, tuple(blocks))


def gemini_response_message(body: Any) -> Message | None:
    """The first candidate of a ``generateContent`` response as a Message."""
    cands = body.get("candidates") if isinstance(body, dict) else None
    if not isinstance(cands, list) or not cands or not isinstance(cands[0], dict):
        return None
    content = cands[0].get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    rid = body.get("responseId")
    return Message(
        "assistant",
        tuple(parts_blocks(parts, keep_thoughts=True)),
        rid if isinstance(rid, str) else None,
    )
