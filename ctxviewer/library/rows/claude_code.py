"""The requests of a Claude Code transcript, for its row: ``ingest.claude.transcript``'s,
without their messages.

Only the lines that can hold a request or an event are parsed: an assistant record
with ``usage`` (each API call, streamed as several records with one message id), a
``progress`` record of a sub-agent's call (``ingest.claude.progress``), a compaction
boundary. The rest (the user's messages, tool results: most of the bytes) only makes
up the messages, which a row does not need; a bytes search skips them unparsed. An
API error or a synthetic message (``ingest.claude.transcript`` makes an overflow event of
its text) declines.

The records of one streamed call (one per content block, each with the call's usage so
far) are one request, as ``SessionBuilder`` makes them: the first record's, with the
largest usage. Here they are merged as they are read, so that a request is made once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ctxviewer.ingest.api.anthropic import Interner, usage_from
from ctxviewer.ingest.base import MAX_TOKENS, Item, request_with
from ctxviewer.ingest.claude.progress import NOTE as PROGRESS_NOTE
from ctxviewer.ingest.claude.prompt_records import NOTE as PROMPT_NOTE
from ctxviewer.ingest.claude.prompt_records import RecordedPrompts, SentPrompt
from ctxviewer.ingest.claude.transcript import compact_event, record_client
from ctxviewer.ingest.loader import BOM, iter_lines
from ctxviewer.library.rows import Declined, parse
from ctxviewer.model import MAIN, SUBAGENT, Request, Usage


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


Key = tuple[str, str]


class _Calls:
    """The requests read so far, in order, each streamed call once (``SessionBuilder``'s
    rule: the first record's request, with the largest usage)."""

    def __init__(self) -> None:
        self.items: list[Item] = []
        self.at: dict[Key, int] = {}  # a call's key -> where its request is in ``items``
        self.seen: set[Key] = set()  # the transcript reader's: every call's key so far
        self.count = 0  # requests so far: the next one's index
        self.clients: dict[tuple[Any, Any], str | None] = {}
        self.refs: list[tuple[int, str, int]] = []  # (where, requestRef, line) of a call

    def client(self, record: dict[str, Any]) -> str | None:
        """``record_client(record)``, made once per version and entrypoint."""
        key = (record.get("version"), record.get("entrypoint"))
        try:
            return self.clients[key]
        except KeyError:
            made = self.clients[key] = record_client(record)
            return made
        except TypeError:  # a list or an object where odd JSON had text
            return record_client(record)


def items(path: str) -> Iterator[Item]:
    calls = _Calls()
    for lineno, raw, _ in iter_lines(path):
        if b'"usage"' not in raw and b"compact_boundary" not in raw:
            continue
        if b"isApiErrorMessage" in raw or b"<synthetic>" in raw:
            raise Declined("an API error or a synthetic message")
        record = parse(raw if lineno > 1 else raw.removeprefix(BOM))
        if not isinstance(record, dict):
            continue
        kind = record.get("type")
        if kind == "assistant":
            message = record.get("message")
            if isinstance(message, dict):
                _call(lineno, record, message, calls)
        elif kind == "progress":
            _progress_call(lineno, record, calls)
        elif kind == "system" and record.get("subtype") == "compact_boundary":
            calls.items.append(compact_event(record))
    if calls.refs:
        _with_sent_prompts(path, calls)
    yield from calls.items


def _with_sent_prompts(path: str, calls: _Calls) -> None:
    """Give the calls that name the prompt they sent (2.1.332's ``requestRef``) what
    ``ingest.claude.transcript`` takes of it: the system prompt, the tools, the output
    cap, the context-1m beta. A second look at the file, for its ``api-request``
    records only, each call taking the record written before it."""
    prompts = RecordedPrompts(Interner())
    sent: dict[str, list[tuple[int, SentPrompt]]] = {}  # per call id, as the file went
    for lineno, raw, _ in iter_lines(path):
        if b"api-request" not in raw:
            continue
        record = parse(raw if lineno > 1 else raw.removeprefix(BOM))
        if not isinstance(record, dict) or record.get("type") in ("user", "assistant"):
            continue
        if prompts.feed(record) and record.get("type") == "api-request":
            key = record.get("id")
            if isinstance(key, str) and key in prompts.calls:
                sent.setdefault(key, []).append((lineno, prompts.calls[key]))
    for where, ref, line in calls.refs:
        before = [p for at, p in sent.get(ref, ()) if at < line]
        if before:
            p, req = before[-1], calls.items[where]
            assert isinstance(req, Request)
            calls.items[where] = request_with(
                req,
                system=p.system,
                tools=p.tools,
                max_tokens=p.max_tokens,
                window_hint=p.window_hint,
                notes=(PROMPT_NOTE,),
            )


def _usage(raw: Any) -> Usage | None:
    """``usage_from(raw)``, faster for the usual record: every count a plain int."""
    if raw.__class__ is dict:
        i = raw.get("input_tokens")
        write = raw.get("cache_creation_input_tokens")
        read = raw.get("cache_read_input_tokens")
        out = raw.get("output_tokens")
        creation = raw.get("cache_creation")
        hour = (
            creation.get("ephemeral_1h_input_tokens", 0)
            if creation.__class__ is dict
            else 0
            if creation is None
            else -1
        )
        if (
            i.__class__ is int
            and write.__class__ is int
            and read.__class__ is int
            and out.__class__ is int
            and hour.__class__ is int
            and 0 <= i <= MAX_TOKENS
            and 0 <= write <= MAX_TOKENS
            and 0 <= read <= MAX_TOKENS
            and 0 <= out <= MAX_TOKENS
            and 0 <= hour <= MAX_TOKENS
        ):
            return Usage(i, write, read, out, hour)
    return usage_from(raw)


def _size(u: Usage) -> tuple[int, int]:
    return (u.prompt_tokens, u.output_tokens)


def _call(line: int, record: dict[str, Any], raw: dict[str, Any], calls: _Calls) -> None:
    usage = _usage(raw.get("usage"))
    if usage is None:
        return
    msg_id, request_id = _str(raw.get("id")), _str(record.get("requestId"))
    key = (msg_id or "", request_id or "")
    calls.seen.add(key)
    if key in calls.at:  # another record of a call already read
        pos = calls.at[key]
        old = calls.items[pos]
        assert isinstance(old, Request) and old.usage is not None
        if _size(usage) > _size(old.usage):
            calls.items[pos] = request_with(old, usage=usage)
        return
    sidechain = bool(record.get("isSidechain"))
    if msg_id is not None or request_id is not None:  # else no call to join records to
        calls.at[key] = len(calls.items)
    ref = record.get("requestRef")
    if isinstance(ref, str):
        calls.refs.append((len(calls.items), ref, line))
    calls.items.append(
        Request(
            index=calls.count,
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
            request_id=request_id,
            line=line,
            client=calls.client(record),
            conversation=_str(record.get("sessionId")),
        )
    )
    calls.count += 1


def _progress_call(line: int, record: dict[str, Any], calls: _Calls) -> None:
    """``ProgressAgents.feed``'s request, without its context (none for a call already
    read: ``ingest.claude.transcript`` keeps the first)."""
    data = record.get("data")
    if not isinstance(data, dict) or data.get("type") != "agent_progress":
        return
    agent, wrapped = _str(data.get("agentId")), data.get("message")
    if (
        agent is None
        or not isinstance(wrapped, dict)
        or not isinstance(wrapped.get("message"), dict)
        or wrapped.get("type") != "assistant"
    ):
        return
    raw = wrapped["message"]
    usage = _usage(raw.get("usage"))
    if usage is None:
        return
    msg_id, request_id = _str(raw.get("id")), _str(wrapped.get("requestId"))
    key = (msg_id or "", request_id or "")
    if key in calls.seen:
        return
    calls.seen.add(key)
    if msg_id is not None or request_id is not None:
        calls.at[key] = len(calls.items)
    calls.items.append(
        Request(
            index=calls.count,
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
            client=calls.client(record),
            conversation=_str(record.get("sessionId")),
        )
    )
    calls.count += 1
