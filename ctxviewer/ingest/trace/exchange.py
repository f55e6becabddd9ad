"""One recorded API exchange (request body + response) -> a ``Request``.

Used by the claude-trace reader and the ctxviewer recording reader: both see
full request bodies, for Anthropic Messages, OpenAI Chat Completions and
OpenAI Responses alike.
"""

from __future__ import annotations

from typing import Any

import orjson

from ctxviewer.ingest.api.anthropic import (
    Interner,
    is_anthropic_body,
    messages_from,
    response_message,
    system_from,
    tools_from,
    usage_from,
)
from ctxviewer.ingest.api.gemini import (
    gemini_request_parts,
    gemini_response_message,
    usage_from_gemini,
)
from ctxviewer.ingest.api.openai import (
    chat_request_parts,
    chat_response_message,
    responses_request_parts,
    usage_from_openai,
)
from ctxviewer.ingest.overflow import error_event
from ctxviewer.model import API_ERROR, AUXILIARY, MAIN, Event, Request, TokenCount


def api_of(path: str, body: Any) -> str | None:
    """Which API an exchange speaks, from its URL path and body; None if not a model call."""
    if "count_tokens" in path or path.endswith(":countTokens"):
        return None
    if path.endswith((":generateContent", ":streamGenerateContent")):
        return "gemini"
    if path.endswith("/responses") or (
        isinstance(body, dict) and "input" in body and "messages" not in body
    ):
        return "openai-responses"
    if "chat/completions" in path:
        return "openai-chat"
    if isinstance(body, dict) and isinstance(body.get("messages"), list):
        return "anthropic" if ("/messages" in path or is_anthropic_body(body)) else "openai-chat"
    return None


def _lowered(headers: Any) -> dict[str, str]:
    """String headers by lower-cased name (recordings lower-case them, claude-trace not)."""
    if not isinstance(headers, dict):
        return {}
    return {str(k).lower(): v for k, v in headers.items() if isinstance(v, str)}


def _window_hint(headers: dict[str, str]) -> int | None:
    """The window the request asked for: Anthropic's 1M-context beta header.

    Whether the agent *uses* that window is the agent profile's call (Claude
    Code's print mode sends the header and works with 200k)."""
    if "context-1m" in (headers.get("anthropic-beta") or ""):
        return 1_000_000
    return None


# Headers agents put their own session id in (Claude Code; qwen-code sends none).
_SESSION_HEADERS = ("x-claude-code-session-id", "session_id", "x-session-id")


def _conversation(headers: dict[str, str]) -> str | None:
    return next((v for h in _SESSION_HEADERS if (v := headers.get(h))), None)


def _side_call(headers: dict[str, str]) -> str | None:
    """Why a call is no turn of the conversation, from what the agent says of it: Codex
    names each request's kind in ``x-codex-turn-metadata`` (``turn``, ``compaction``) and
    a turn's trigger (``user``, ``exec``); its title call is a turn without a trigger."""
    raw = headers.get("x-codex-turn-metadata")
    if not raw:
        return None
    try:
        meta = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(meta, dict):
        return None
    kind = meta.get("request_kind")
    if isinstance(kind, str) and kind != "turn":
        return f"Codex's {kind} call (x-codex-turn-metadata request_kind {kind!r})"
    if kind == "turn" and not meta.get("turn_trigger"):
        return "a Codex call outside the conversation's turns (no turn_trigger: its title)"
    return None


def _max_tokens(body: dict[str, Any]) -> int | None:
    config = body.get("generationConfig")
    caps = config if isinstance(config, dict) else {}
    for key in ("max_tokens", "max_completion_tokens", "max_output_tokens"):
        value = body.get(key, caps.get("maxOutputTokens") if key == "max_tokens" else None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _token_count(
    body: dict[str, Any],
    response: Any,
    status: int | None,
    timestamp: str | None,
    line: int,
    headers: Any,
    intern: Interner,
) -> TokenCount:
    """A count_tokens call: what was counted and the answer (None when it failed)."""
    texts: list[str] = [b.text for b in system_from(body.get("system"), intern)]
    for m in body.get("messages") or ():
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts.append("".join(str(p.get("text", "")) for p in content if isinstance(p, dict)))
    answer = response.get("input_tokens") if isinstance(response, dict) else None
    ok = isinstance(answer, int) and not isinstance(answer, bool) and (status or 200) < 400
    return TokenCount(
        line,
        timestamp,
        str(body["model"]) if body.get("model") else None,
        tuple(texts),
        tools_from(body.get("tools"), intern),
        answer if ok else None,
        _conversation(headers),
    )


def _error_events(
    status: int | None, body: Any, timestamp: str | None, error: Any = None
) -> tuple[Event, ...]:
    if not isinstance(status, int):  # no answer at all: the recording says why
        if isinstance(error, dict) and error.get("kind"):
            detail = f"{error['kind']}: {error.get('message') or ''}".rstrip(": ")
            return (Event(API_ERROR, timestamp, detail=detail[:500]),)
        return ()
    if status < 400:
        return ()
    text = str(body)[:500]
    return (error_event(text, timestamp, detail=f"HTTP {status}: {text}"),)


def request_from_exchange(
    *,
    body: dict[str, Any],
    path: str,
    response: Any,
    status: int | None,
    timestamp: str | None,
    line: int,
    intern: Interner,
    headers: Any = None,
    error: Any = None,
    exchange: str | None = None,
) -> Request | TokenCount | None:
    """The Request of one exchange, a TokenCount for a count_tokens call, or None
    when it is neither. ``exchange`` names the exchange in its log: each is one call,
    whatever its response's id (a gateway or a mock may give every answer the same),
    so it is the request's ``request_id`` and no two exchanges merge as one call's
    records."""
    headers = _lowered(headers)
    if path.endswith("/count_tokens"):
        return _token_count(body, response, status, timestamp, line, headers, intern)
    api = api_of(path, body)
    if api is None:
        return None
    model = body.get("model")
    if api == "anthropic":
        system = system_from(body.get("system"), intern)
        tools = tools_from(body.get("tools"), intern)
        messages = messages_from(body["messages"], intern)
        usage = usage_from(response.get("usage")) if isinstance(response, dict) else None
        reply = response_message(response, intern)
    elif api == "gemini":  # the model is in the path: /v1beta/models/<model>:<method>
        system, tools, messages = gemini_request_parts(body, intern)
        usage = usage_from_gemini(response)
        reply = gemini_response_message(response)
        model = path.rsplit("/", 1)[-1].split(":", 1)[0]
    else:
        parts = chat_request_parts if api == "openai-chat" else responses_request_parts
        system, tools, messages = parts(body, intern)
        usage = usage_from_openai(response.get("usage")) if isinstance(response, dict) else None
        reply = chat_response_message(response)
    msg_id = response.get("id") if isinstance(response, dict) else None
    side = _side_call(headers)
    return Request(
        index=0,
        model=str(model) if model else None,
        timestamp=timestamp,
        system=intern(system),
        tools=tools,
        messages=messages,
        usage=usage,
        complete=True,
        api=api,
        events=_error_events(status, response, timestamp, error),
        response=reply,
        message_id=msg_id if isinstance(msg_id, str) else None,
        request_id=exchange,
        window_hint=_window_hint(headers),
        client=headers.get("user-agent"),
        conversation=_conversation(headers),
        max_tokens=_max_tokens(body),
        status=status,
        line=line,
        role=AUXILIARY if side else MAIN,
        notes=(side,) if side else (),
    )
