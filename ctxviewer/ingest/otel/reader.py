"""Claude Code's OpenTelemetry events, as OTLP JSON lines: one API call per request.

The OpenTelemetry Collector's ``file`` exporter, and ``ctxviewer otel``, write
one OTLP export request per line (``ingest.otel.records``). Claude Code, with
``CLAUDE_CODE_ENABLE_TELEMETRY=1`` and ``OTEL_LOGS_EXPORTER=otlp``, logs an
event per API call (``docs/otel.md``):

- ``claude_code.api_request_body`` when a call is sent, with its body when
  ``OTEL_LOG_RAW_API_BODIES`` is set (``ingest.otel.body``): no request id;
- ``claude_code.api_request`` when it ended, with the usage and the request id
  (``claude_code.api_error`` when it failed);
- ``claude_code.api_response_body``, the answer, with the request id.

Pairing. A body event goes with the next ``api_request`` (or ``api_error``)
of the same session, prompt (``prompt.id``) and ``query_source``, in
``event.sequence`` order. A body logged twice in a row unchanged before its
``api_request`` is a retried call: the earlier copy is dropped. The answer
joins its call by request id; a call whose body was logged waits for it (at
most ``HOLD`` calls wait: the order of the calls is kept).

Roles come from ``query_source`` the way Claude Code itself sorts them: the
main thread (``repl_main_thread*``, ``sdk``), sub-agents (``agent:*``,
``hook_agent``), every other source a side call.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from ctxviewer.ingest.api.anthropic import (
    Interner,
    messages_from,
    response_message,
    system_from,
    tools_from,
    usage_from,
)
from ctxviewer.ingest.base import ONLY_USAGE, Head, Item, as_int
from ctxviewer.ingest.otel import FORMAT, OTEL_EXPORT_KEYS, is_otel_export, otel
from ctxviewer.ingest.otel.body import (
    LoggedBody,
    logged_body,
    parse_request,
    parse_response,
    redacted_thinking,
)
from ctxviewer.ingest.otel.records import LogEvent, log_events, spans
from ctxviewer.ingest.overflow import error_event
from ctxviewer.jsonish import js_dumps
from ctxviewer.model import (
    API_ERROR,
    AUXILIARY,
    COMPACT_BOUNDARY,
    MAIN,
    SUBAGENT,
    Event,
    Request,
    Skipped,
    Usage,
)

HOLD = 16  # calls waiting for their answer before the oldest is let go without it
SPANS_KEPT = 4096  # the spans' models remembered (a call's span comes before its events)
ONE_MILLION = 1_000_000

NO_BODY_NOTE = f"no request body in the log (OTEL_LOG_RAW_API_BODIES was not set): {ONLY_USAGE}"
RETRY_NOTE = "the body was logged {n} times: the call was retried"
THINKING_NOTE = (
    "the log replaces the thinking of earlier answers by <REDACTED>: the API "
    "counted it, the estimate does not"
)
ORPHAN_DETAIL = (
    "no api_request or api_error event follows this body in the log: the call "
    "was under way when the log ended, or its end was not logged"
)


def role_of(source: str | None) -> str:
    """Claude Code's own sorting of a ``query_source``: main thread, sub-agent, side call."""
    if source is None or source.startswith("repl_main_thread") or source == "sdk":
        return MAIN
    if source.startswith("agent:") or source == "hook_agent":
        return SUBAGENT
    return AUXILIARY


def pairing_source(source: str | None) -> str | None:
    """The ``query_source`` as ``api_request`` names it: a custom agent's name is dropped
    there (``agent:custom:NAME`` -> ``agent:custom``), not in the body event."""
    if source is not None and source.startswith("agent:custom:"):
        return "agent:custom"
    return source


@dataclass
class _Body:
    """A request body event waiting for the call that ended it."""

    event: LogEvent
    body: LoggedBody
    line: int


@dataclass
class _Slot:
    """A call (or an event) in the order it ended; ``ready`` once nothing more is awaited."""

    item: Request | Event
    ready: bool
    request_id: str | None = None


Key = tuple[str | None, str | None, str | None]


def _key(event: LogEvent) -> Key:
    return (
        event.text("session.id"),
        event.text("prompt.id"),
        pairing_source(event.text("query_source")),
    )


class _OtelParser:
    def __init__(self) -> None:
        self.source: str | None = None  # the log's path: body files are looked for beside it
        self.intern = Interner()
        self.pending: dict[Key, list[_Body]] = {}
        self.held: list[_Slot] = []
        self.early: dict[str, dict[str, Any]] = {}  # answers logged before their call ended
        self.span_models: dict[str, str] = {}  # request id -> the model its span names

    def feed(self, line: int, record: Any) -> Iterator[Item]:
        if not is_otel_export(record):
            yield Skipped(line, "not an OTLP export request (" + "/".join(OTEL_EXPORT_KEYS) + ")")
            return
        for span in spans(record):
            rid, model = span.attrs.get("request_id"), span.attrs.get("model")
            if isinstance(rid, str) and isinstance(model, str):
                self.span_models[rid] = model
                if len(self.span_models) > SPANS_KEPT:
                    del self.span_models[next(iter(self.span_models))]
        for event in log_events(record):
            self._event(event, line)
        yield from self._release(force=False)

    def _event(self, event: LogEvent, line: int) -> None:
        name = event.name
        if name == "api_request_body":
            logged = logged_body(event, self._base_dir())
            self.pending.setdefault(_key(event), []).append(_Body(event, logged, line))
        elif name in ("api_request", "api_error"):
            body, retries = self._take(event)
            req = self._request(event, body, retries, line)
            waits = body is not None and name == "api_request"  # its answer is logged too
            slot = _Slot(req, not waits, req.request_id)
            if waits and req.request_id in self.early:
                self._answer(slot, self.early.pop(req.request_id))
            self.held.append(slot)
        elif name == "api_response_body":
            self._response(event)
        elif name == "compaction" and str(event.attrs.get("success")).lower() != "false":
            self.held.append(
                _Slot(
                    Event(
                        COMPACT_BOUNDARY,
                        event.timestamp,
                        pre_tokens=event.number("pre_tokens"),
                        post_tokens=event.number("post_tokens"),
                        trigger=event.text("trigger"),
                        detail="Claude Code's compaction event",
                    ),
                    True,
                )
            )

    def _base_dir(self) -> str | None:
        return os.path.dirname(os.path.abspath(self.source)) if self.source else None

    def _take(self, call: LogEvent) -> tuple[_Body | None, int]:
        """The body event of ``call``: the first one of its key sent before it; an
        unchanged copy right after it means the call was retried (the copy is the one)."""
        bodies = self.pending.get(_key(call))
        if not bodies:
            return None, 0
        seq = call.sequence
        fit = [
            b for b in bodies if seq is None or b.event.sequence is None or b.event.sequence < seq
        ]
        if not fit:
            return None, 0
        retries = 0
        while (
            len(fit) > 1
            and fit[0].body.fingerprint is not None
            and fit[0].body.fingerprint == fit[1].body.fingerprint
        ):
            bodies.remove(fit.pop(0))
            retries += 1
        bodies.remove(fit[0])
        return fit[0], retries

    def _response(self, event: LogEvent) -> None:
        rid = event.text("request_id")
        answer = parse_response(logged_body(event, self._base_dir()))
        if rid is None or answer is None:
            return
        for slot in self.held:
            if slot.request_id == rid and not slot.ready:
                self._answer(slot, answer)
                return
        if len(self.early) < HOLD:
            self.early[rid] = answer

    def _answer(self, slot: _Slot, answer: dict[str, Any]) -> None:
        req = slot.item
        assert isinstance(req, Request)
        usage = req.usage
        told = usage_from(answer.get("usage"))
        if usage is not None and told is not None:
            usage = replace(usage, cache_creation_1h_tokens=told.cache_creation_1h_tokens)
        msg_id = answer.get("id")
        slot.item = replace(
            req,
            usage=usage,
            response=response_message(answer, self.intern),
            message_id=msg_id if isinstance(msg_id, str) else None,
        )
        slot.ready = True

    def _release(self, force: bool) -> Iterator[Request | Event]:
        while self.held and (force or self.held[0].ready or len(self.held) > HOLD):
            yield self.held.pop(0).item

    def _request(self, call: LogEvent, body: _Body | None, retries: int, line: int) -> Request:
        notes: list[str] = []
        parsed = None
        if body is None:
            notes.append(NO_BODY_NOTE)
        else:
            logged = body.body
            parsed = parse_request(logged)
            if logged.missing:
                notes.append(f"{logged.missing}: {ONLY_USAGE}")
            elif parsed is None:
                notes.append(f"the logged request body is not a JSON object: {ONLY_USAGE}")
            else:
                notes += parsed.notes
                if redacted_thinking(parsed.fields):
                    notes.append(THINKING_NOTE)
            if retries:
                notes.append(RETRY_NOTE.format(n=retries + 1))
        fields = parsed.fields if parsed is not None else {}
        complete = parsed is not None and parsed.whole
        raw_messages = fields.get("messages")
        messages = (
            messages_from(raw_messages, self.intern) if isinstance(raw_messages, list) else ()
        )
        # the body event names a custom agent (agent:custom:NAME), api_request does not
        source = (body.event.text("query_source") if body else None) or call.text("query_source")
        role = role_of(source)
        failed = call.name == "api_error"
        model = call.text("model") or (
            fields.get("model") if isinstance(fields.get("model"), str) else None
        )
        return Request(
            index=0,
            model=model,
            timestamp=body.event.timestamp if body is not None else call.timestamp,
            system=self.intern(system_from(fields.get("system"), self.intern)),
            tools=tools_from(fields.get("tools"), self.intern) if complete else (),
            messages=messages,
            usage=None if failed else _usage(call),
            complete=complete,
            sidechain=role == SUBAGENT,
            role=role,
            agent=_agent_id(source, raw_messages) if role == SUBAGENT else None,
            events=(_error(call),) if failed else (),
            request_id=call.text("request_id"),
            window_hint=self._window_hint(call, fields),
            client=_client(call),
            conversation=call.text("session.id"),
            max_tokens=_int(fields.get("max_tokens")),
            status=call.number("status_code") if failed else 200,
            line=line,
            notes=tuple(notes),
        )

    def _window_hint(self, call: LogEvent, fields: dict[str, Any]) -> int | None:
        betas = fields.get("betas")
        if isinstance(betas, list) and any(isinstance(b, str) and "context-1m" in b for b in betas):
            return ONE_MILLION
        model = self.span_models.get(call.text("request_id") or "")
        return ONE_MILLION if model is not None and model.endswith("[1m]") else None

    def _drain(self) -> list[Request | Event]:
        """Everything still waiting: the held calls, then bodies no call ended (by time)."""
        out: list[Request | Event] = [slot.item for slot in self.held]
        orphans = sorted(
            (b for bodies in self.pending.values() for b in bodies),
            key=lambda b: (b.event.timestamp or "", b.line),
        )
        for b in orphans:
            req = self._request(b.event, b, 0, b.line)
            out.append(
                replace(
                    req,
                    usage=None,
                    status=None,
                    request_id=None,
                    events=(Event(API_ERROR, req.timestamp, detail=ORPHAN_DETAIL),),
                )
            )
        return out

    def peek(self) -> list[Request | Event]:
        """What ``finish`` would yield now, without finishing (live follow shows it)."""
        return self._drain()

    def finish(self) -> Iterator[Request | Event]:
        out = self._drain()
        self.held = []
        self.pending = {}
        yield from out


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _usage(call: LogEvent) -> Usage | None:
    keys = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")
    if not any(k in call.attrs for k in keys):
        return None
    return Usage(
        input_tokens=as_int(call.number("input_tokens")),
        cache_creation_input_tokens=as_int(call.number("cache_creation_tokens")),
        cache_read_input_tokens=as_int(call.number("cache_read_tokens")),
        output_tokens=as_int(call.number("output_tokens")),
    )


def _error(call: LogEvent) -> Event:
    status = call.number("status_code")
    what = call.text("error") or "the call failed"
    detail = f"HTTP {status}: {what}" if status else what
    return error_event(what, call.timestamp, detail=detail[:500])


def _client(call: LogEvent) -> str | None:
    """``claude-code/2.1.197``: the service and version the resource names."""
    name, version = call.resource.get("service.name"), call.resource.get("service.version")
    if not isinstance(name, str):
        return None
    return f"{name}/{version}" if isinstance(version, str) else name


def _agent_id(source: str | None, raw_messages: Any) -> str:
    """A sub-agent run: its source and its first message (its task), so that two runs of
    one agent type at once are two conversations."""
    first = raw_messages[0] if isinstance(raw_messages, list) and raw_messages else None
    if first is None:
        return source or "agent"
    digest = zlib.crc32(js_dumps(first).encode("utf-8", "surrogatepass"))
    return f"{source or 'agent'}#{digest:08x}"


class OtelReader:
    name, label = FORMAT.name, FORMAT.label
    description, document = FORMAT.description, FORMAT.document

    def sniff(self, head: Head) -> bool:
        return otel(head)

    def parser(self) -> _OtelParser:
        return _OtelParser()


READER = OtelReader()
