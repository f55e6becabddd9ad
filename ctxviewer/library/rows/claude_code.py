"""The requests of a Claude Code transcript, for its row: ``ingest.claude.transcript``'s,
without their messages.

Only the lines that can hold a request or an event are parsed: an assistant record
with ``usage`` (each API call, streamed as several records with one message id), a
``progress`` record of a sub-agent's call (``ingest.claude.progress``), a compaction
boundary. The rest (the user's messages, tool results: most of the bytes) only makes
up the messages, which a row does not need; a bytes search skips them unparsed. An
API error or a synthetic message (``ingest.claude.transcript`` makes an overflow event of
its text) declines.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

from ctxviewer.ingest.api.anthropic import usage_from
from ctxviewer.ingest.base import MAX_TOKENS, Item
from ctxviewer.ingest.claude.progress import NOTE as PROGRESS_NOTE
from ctxviewer.ingest.claude.transcript import compact_event, record_client
from ctxviewer.ingest.loader import BOM, iter_lines
from ctxviewer.library.rows import Declined, Numbering, parse
from ctxviewer.model import MAIN, SUBAGENT, Request, Usage


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def items(path: str) -> Iterator[Item]:
    seen: set[tuple[str, str]] = set()
    number = Numbering()
    for lineno, raw, _ in iter_lines(path):
        if b'"usage"' not in raw and b"compact_boundary" not in raw:
            continue
        if b"isApiErrorMessage" in raw or b"<synthetic>" in raw:
            raise Declined("an API error or a synthetic message")
        record = parse(raw if lineno > 1 else raw.removeprefix(BOM))
        if not isinstance(record, dict):
            continue
        kind = record.get("type")
        message = record.get("message")
        if kind == "assistant" and isinstance(message, dict):
            req = _call(lineno, record, message, seen, number)
            if req is not None:
                yield req
        elif kind == "progress":
            req = _progress_call(lineno, record, seen, number)
            if req is not None:
                yield req
        elif kind == "system" and record.get("subtype") == "compact_boundary":
            yield compact_event(record)


def _usage(raw: Any) -> Usage | None:
    """``usage_from(raw)``, faster for the usual record: every count a plain int."""
    if raw.__class__ is dict:
        counts = (
            raw.get("input_tokens"),
            raw.get("cache_creation_input_tokens"),
            raw.get("cache_read_input_tokens"),
            raw.get("output_tokens"),
        )
        creation = raw.get("cache_creation")
        hour = (
            creation.get("ephemeral_1h_input_tokens", 0)
            if creation.__class__ is dict
            else 0
            if creation is None
            else -1
        )
        if all(c.__class__ is int and 0 <= c <= MAX_TOKENS for c in (*counts, hour)):
            i, write, read, out = cast("tuple[int, int, int, int]", counts)
            return Usage(i, write, read, out, hour)
    return usage_from(raw)


def _call(
    line: int,
    record: dict[str, Any],
    raw: dict[str, Any],
    seen: set[tuple[str, str]],
    number: Numbering,
) -> Request | None:
    usage = _usage(raw.get("usage"))
    if usage is None:
        return None
    msg_id = raw.get("id") if isinstance(raw.get("id"), str) else None
    request_id = record.get("requestId")
    seen.add((msg_id or "", request_id if isinstance(request_id, str) else ""))
    sidechain = bool(record.get("isSidechain"))
    return Request(
        index=number(msg_id, _str(request_id)),
        model=_str(raw.get("model")),
        timestamp=record.get("timestamp"),
        system=(),
        tools=(),
        messages=(),
        usage=usage,
        complete=False,
        sidechain=sidechain,
        role=SUBAGENT if sidechain else MAIN,
        agent=_str(record.get("agentId")),
        api="anthropic",
        message_id=msg_id,
        request_id=_str(request_id),
        line=line,
        client=record_client(record),
        conversation=_str(record.get("sessionId")),
    )


def _progress_call(
    line: int, record: dict[str, Any], seen: set[tuple[str, str]], number: Numbering
) -> Request | None:
    """``ProgressAgents.feed``'s request, without its context (None as well for one the
    transcript had already: ``ingest.claude.transcript`` keeps the first)."""
    data = record.get("data")
    if not isinstance(data, dict) or data.get("type") != "agent_progress":
        return None
    agent, wrapped = _str(data.get("agentId")), data.get("message")
    if (
        agent is None
        or not isinstance(wrapped, dict)
        or not isinstance(wrapped.get("message"), dict)
        or wrapped.get("type") != "assistant"
    ):
        return None
    raw = wrapped["message"]
    usage = _usage(raw.get("usage"))
    if usage is None:
        return None
    msg_id, request_id = _str(raw.get("id")), _str(wrapped.get("requestId"))
    key = (msg_id or "", request_id or "")
    if key in seen:
        return None
    seen.add(key)
    return Request(
        index=number(msg_id, request_id),
        model=_str(raw.get("model")),
        timestamp=_str(wrapped.get("timestamp")) or _str(record.get("timestamp")),
        system=(),
        tools=(),
        messages=(),
        usage=usage,
        complete=False,
        sidechain=True,
        role=SUBAGENT,
        agent=agent,
        api="anthropic",
        message_id=msg_id,
        request_id=request_id,
        line=line,
        notes=(PROGRESS_NOTE,),
        client=record_client(record),
        conversation=_str(record.get("sessionId")),
    )
