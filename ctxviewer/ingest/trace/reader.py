"""claude-trace logs and ctxviewer recordings: full request bodies, one exchange per line.

claude-trace: ``{"request": {"timestamp", "url", "headers", "body"},
"response": {"status_code", "body" | "body_raw" (SSE)}, "logged_at"}``. The
same envelope is used by other proxies for OpenAI Chat Completions and
Responses calls; each line is recognised by its URL and body.

ctxviewer recordings: see ``docs/recording-format.md``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from ctxviewer.ingest.api.anthropic import Interner, iso
from ctxviewer.ingest.api.sse import reassemble
from ctxviewer.ingest.base import Head, Item, as_dict
from ctxviewer.ingest.trace import CLAUDE_TRACE as CLAUDE_TRACE_FORMAT
from ctxviewer.ingest.trace import RECORDING as RECORDING_FORMAT
from ctxviewer.ingest.trace import claude_trace, recording
from ctxviewer.ingest.trace.delta import TRACE_ARRAYS, TRACE_WHOLE, HistoryDecoder
from ctxviewer.ingest.trace.exchange import request_from_exchange
from ctxviewer.model import COMPACT_BOUNDARY, PROXY_UNDO, Event, Request, Skipped


def _response_body(response: dict[str, Any]) -> Any:
    body = response.get("body")
    if isinstance(body, dict):
        return body
    raw = response.get("body_raw")
    if isinstance(raw, str) and raw:
        return reassemble(raw)
    events = response.get("events")
    if isinstance(events, list):  # some forks keep parsed SSE events
        from ctxviewer.jsonish import js_dumps

        return reassemble("\n\n".join(f"data: {js_dumps(e)}" for e in events) + "\n\n")
    return body


class _TraceParser:
    def __init__(self) -> None:
        self.intern = Interner()
        self.decode = HistoryDecoder(TRACE_ARRAYS, TRACE_WHOLE).decode

    def feed(self, line: int, record: Any) -> Iterator[Item]:
        if not isinstance(record, dict) or not isinstance(record.get("request"), dict):
            yield Skipped(line, "not a request/response record")
            return
        req = record["request"]
        body = req.get("body")
        if not isinstance(body, dict):
            yield Skipped(line, "request without a JSON body")
            return
        resp = as_dict(record.get("response"))
        result = request_from_exchange(
            body=body,
            path=urlsplit(str(req.get("url", ""))).path,
            response=_response_body(resp),
            status=resp.get("status_code"),
            timestamp=iso(req.get("timestamp")) or iso(record.get("logged_at")),
            line=line,
            intern=self.intern,
            headers=req.get("headers"),
            exchange=f"line {line}",
        )
        if result is None:
            yield Skipped(line, "not a model call (e.g. count_tokens)")
        else:
            yield result

    def finish(self) -> Iterator[Item]:
        return iter(())


class ClaudeTraceReader:
    name, label = CLAUDE_TRACE_FORMAT.name, CLAUDE_TRACE_FORMAT.label
    description, document = CLAUDE_TRACE_FORMAT.description, CLAUDE_TRACE_FORMAT.document

    def sniff(self, head: Head) -> bool:
        return claude_trace(head)

    def parser(self) -> _TraceParser:
        return _TraceParser()


class _RecordingParser:
    def __init__(self) -> None:
        self.intern = Interner()
        self.decode = HistoryDecoder(TRACE_ARRAYS, TRACE_WHOLE).decode
        self.rewriting: set[str] = set()  # conversations whose last request was rewritten

    def feed(self, line: int, record: Any) -> Iterator[Item]:
        if not isinstance(record, dict) or record.get("type") != "exchange":
            if not (isinstance(record, dict) and record.get("type") == "meta"):
                yield Skipped(
                    line,
                    f"unknown record type {record.get('type')!r}"
                    if isinstance(record, dict)
                    else "not a JSON object",
                )
            return
        req = record.get("request") or {}
        resp = record.get("response") or {}
        # what the model saw: the body the proxy sent upstream when it rewrote the request
        upstream = req.get("upstream_body")
        rewritten = isinstance(upstream, dict) and "_raw" not in upstream
        body = upstream if rewritten else req.get("body")
        if not isinstance(body, dict) or "_raw" in body:
            yield Skipped(line, "exchange without a JSON request body")
            return
        result = request_from_exchange(
            body=body,
            path=str(record.get("path", "")),
            response=resp.get("body"),
            status=resp.get("status"),
            timestamp=iso(record.get("started")),
            line=line,
            intern=self.intern,
            headers=req.get("headers"),
            error=record.get("error"),
            exchange=f"line {line}",  # exchange ids start again with each proxy run
        )
        if result is None:
            yield Skipped(line, f"not a model call ({record.get('api')})")
            return
        rewrite = record.get("rewrite")
        note = _rewrite_note(rewrite, rewritten)
        if note and isinstance(result, Request):
            result = replace(result, notes=(*result.notes, note))
        if isinstance(result, Request) and isinstance(rewrite, dict):
            yield from self._rewrite_events(rewrite, rewritten, result.timestamp)
        yield result

    def _rewrite_events(
        self, rewrite: dict[str, Any], rewritten: bool, timestamp: str | None
    ) -> Iterator[Event]:
        """A live compaction as the compaction it is (trigger ``proxy``, the plan's
        tokens before and after); the end of one (undone, or the upstream refused the
        rewrite) as a ``PROXY_UNDO``."""
        conv = rewrite.get("conversation")
        if not isinstance(conv, str):
            return
        planned = rewrite.get("plan")
        planned = planned if isinstance(planned, dict) else {}
        if rewritten and (planned or conv not in self.rewriting):
            # an automatic compaction records its plan; one made from the window does not:
            # its sizes are then the requests' around it
            before, after = planned.get("tokens_before"), planned.get("tokens_after")
            yield Event(
                COMPACT_BOUNDARY,
                timestamp,
                pre_tokens=before if isinstance(before, int) else None,
                post_tokens=after if isinstance(after, int) else None,
                trigger="proxy",
                detail=f"compacted live by ctxviewer's proxy "
                f"({planned.get('rule') or rewrite.get('rule')})",
            )
        if rewritten:
            self.rewriting.add(conv)
        elif conv in self.rewriting:
            self.rewriting.discard(conv)
            why = rewrite.get("fallback") or rewrite.get("note") or "rewriting stopped"
            yield Event(
                PROXY_UNDO,
                timestamp,
                trigger="proxy",
                detail=f"the proxy sent the whole history again: {why}"[:300],
            )

    def finish(self) -> Iterator[Item]:
        return iter(())


REWRITTEN_NOTE = "rewritten by the proxy"


def _rewrite_note(rewrite: Any, rewritten: bool) -> str:
    """A request note saying what the proxy's rewriter did (empty: nothing)."""
    if not isinstance(rewrite, dict):
        return ""
    if rewritten:
        return f"{REWRITTEN_NOTE} ({rewrite.get('rule')}): the agent sent a longer history"
    said = rewrite.get("fallback") or rewrite.get("note")
    return f"proxy rewrite: {said}" if said else ""


class RecordingReader:
    name, label = RECORDING_FORMAT.name, RECORDING_FORMAT.label
    description, document = RECORDING_FORMAT.description, RECORDING_FORMAT.document

    def sniff(self, head: Head) -> bool:
        return recording(head)

    def parser(self) -> _RecordingParser:
        return _RecordingParser()


CLAUDE_TRACE = ClaudeTraceReader()
RECORDING = RecordingReader()
