"""One proxied API call while it happens, and the recording line it becomes.

The forwarding code only collects raw facts (bytes, headers, times, the first
error); turning them into the documented JSON shape (parsed bodies, a
reassembled stream, normalised usage) happens once, after the client has its
answer, so it never adds latency to the call.
"""

from __future__ import annotations

import codecs
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from ctxviewer.ingest.api.sse import (
    Stream,
    iter_sse,
    json_events,
    reassemble,
    reassemble_anthropic,
    reassemble_gemini,
    reassemble_openai_chat,
    reassemble_openai_responses,
)
from ctxviewer.proxy.inflate import Undecodable, codings, inflate, too_many_values
from ctxviewer.proxy.redact import redact_text
from ctxviewer.proxy.usage import normalise_usage

FORMAT_VERSION = 1
DECODE_CAP = 64 << 20  # bytes of a body inflated and parsed for the recording, at most
RAW_TEXT_MAX = 1 << 20  # bytes of a body that is not JSON kept in the recording

_REASSEMBLERS: dict[str, Callable[[Stream], dict[str, Any] | None]] = {
    "anthropic": reassemble_anthropic,
    "openai-chat": reassemble_openai_chat,
    "openai-responses": reassemble_openai_responses,
    "gemini": reassemble_gemini,
}


def utc_now() -> str:
    """The current time as ISO 8601 UTC with milliseconds, e.g. ``2026-11-22T05:40:00.123Z``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(slots=True)
class Exchange:
    """Raw facts about one call, filled in by the forwarder as they become known."""

    id: str
    api: str
    method: str
    path: str
    upstream: str | None  # full upstream URL, already redacted (None: not forwarded)
    request_headers: dict[str, str]  # already redacted
    request_encoding: str = ""  # the request body's Content-Encoding (forwarded as sent)
    started: str = field(default_factory=utc_now)
    t0: float = field(default_factory=time.perf_counter)
    request_body: bytes = b""
    status: int | None = None
    response_headers: dict[str, str] | None = None  # already redacted
    content_encoding: str = ""
    chunks: list[bytes] = field(default_factory=list)
    first_byte_ms: float | None = None
    total_ms: float | None = None
    error: dict[str, str] | None = None
    conversation: str | None = None  # set when a rewriter is on (``proxy.rewrite``)
    upstream_body: bytes | None = None  # what went upstream, when the proxy rewrote it
    rewrite: dict[str, Any] | None = None  # what the rewriter did, for the recording

    def elapsed_ms(self) -> float:
        return round((time.perf_counter() - self.t0) * 1000, 1)

    def mark_first_byte(self) -> None:
        if self.first_byte_ms is None:
            self.first_byte_ms = self.elapsed_ms()

    def fail(self, kind: str, message: str) -> None:
        """Record what went wrong; the first failure is the cause, later ones are fallout."""
        if self.error is None:
            self.error = {"kind": kind, "message": redact_text(message)}

    def finish(self) -> None:
        if self.total_ms is None:
            self.total_ms = self.elapsed_ms()

    @property
    def stream(self) -> bool:
        ctype = (self.response_headers or {}).get("content-type", "")
        return ctype.lower().startswith("text/event-stream")

    def to_record(self) -> dict[str, Any]:
        """The ``exchange`` line of docs/recording-format.md."""
        response, body = self._response()
        request: dict[str, Any] = {"headers": self.request_headers, "body": self._request_body()}
        if self.upstream_body is not None:
            request["upstream_body"] = parse_json(self.upstream_body)
        record = {
            "ctxviewer": FORMAT_VERSION,
            "type": "exchange",
            "id": self.id,
            "api": self.api,
            "method": self.method,
            "path": self.path,
            "upstream": self.upstream,
            "started": self.started,
            "request": request,
            "response": response,
            "usage": normalise_usage(self.api, body),
            "timing": {"first_byte_ms": self.first_byte_ms, "total_ms": self.total_ms},
            "error": self.error or self._status_error(body),
        }
        if self.conversation is not None:
            record["conversation"] = self.conversation
        if self.rewrite is not None:
            record["rewrite"] = self.rewrite
        return record

    def _request_body(self) -> Any:
        decoded = decode_content(self.request_body, self.request_encoding)
        if isinstance(decoded, str):
            return _not_decoded(len(self.request_body), self.request_encoding, decoded)
        return parse_json(decoded)

    def _response(self) -> tuple[dict[str, Any] | None, Any]:
        if self.status is None:
            return None, None
        body: Any
        if self.stream:
            pieces = _text_pieces(self.chunks, self.content_encoding)
            if isinstance(pieces, str):
                body = self._undecoded(pieces)
            else:
                events = json_events(iter_sse(pieces))
                try:
                    body = _REASSEMBLERS.get(self.api, reassemble)(events)
                except (TypeError, AttributeError, ValueError, KeyError) as e:
                    # a damaged stream (values of the wrong types): the call is recorded,
                    # its answer as not reassembled, as ``sse.reassemble`` does
                    body = {"_raw": f"[a stream that could not be reassembled: {type(e).__name__}]"}
        else:
            decoded = decode_content(b"".join(self.chunks), self.content_encoding)
            body = self._undecoded(decoded) if isinstance(decoded, str) else parse_json(decoded)
        response = {
            "status": self.status,
            "headers": self.response_headers,
            "stream": self.stream,
            "body": body,
        }
        return response, body

    def _undecoded(self, why: str) -> dict[str, str]:
        return _not_decoded(sum(len(c) for c in self.chunks), self.content_encoding, why)

    def _status_error(self, body: Any) -> dict[str, str] | None:
        if self.status is None or self.status < 400:
            return None
        message = f"HTTP {self.status}"
        detail = body.get("error") if isinstance(body, dict) else None
        if isinstance(detail, dict) and detail.get("message"):
            kind = detail.get("type")
            message += f": {kind}: {detail['message']}" if kind else f": {detail['message']}"
        return {"kind": "upstream_status", "message": message}


PIECE = 1 << 16  # characters of a stream handled per step on the writer thread


def _not_decoded(size: int, encoding: str, why: str) -> dict[str, str]:
    return {"_raw": f"[{size} bytes, content-encoding {encoding}, not decoded: {why}]"}


def _text_pieces(chunks: list[bytes], encoding: str) -> Iterator[str] | str:
    """A streamed body as text, piece by piece (a str: why it could not be decoded).

    An identity stream is decoded chunk by chunk as it arrived; a compressed one
    is inflated first (zlib lets other threads run meanwhile), then cut into
    pieces. No step holds the interpreter for long, so recording a huge answer
    does not stall the event loop forwarding other streams.
    """
    if codings(encoding):
        data = decode_content(b"".join(chunks), encoding)
        if isinstance(data, str):
            return data
        chunks = [data[i : i + PIECE] for i in range(0, len(data), PIECE)]
    return _utf8(chunks)


def _utf8(chunks: list[bytes]) -> Iterator[str]:
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    for chunk in chunks:
        for i in range(0, len(chunk), PIECE):
            yield decoder.decode(chunk[i : i + PIECE])
    yield decoder.decode(b"", final=True)


def parse_json(data: bytes) -> Any:
    """A body as JSON; ``{"_raw": text}`` when it is not JSON (its first ``RAW_TEXT_MAX``
    bytes, then a note of its size), or would parse into too many values to hold
    (``too_many_values``); None when empty."""
    if not data:
        return None
    crowded = too_many_values(data) if len(data) <= DECODE_CAP else f"over {DECODE_CAP >> 20} MiB"
    if crowded is not None:
        return {"_raw": f"[{len(data)} bytes, not parsed: {crowded}]"}
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        if len(data) <= RAW_TEXT_MAX:
            return {"_raw": data.decode("utf-8", errors="replace")}
        text = data[:RAW_TEXT_MAX].decode("utf-8", errors="ignore")
        return {"_raw": f"{text}[... cut: {len(data)} bytes in all]"}


def decode_content(data: bytes, encoding: str) -> bytes | str:
    """Undo ``Content-Encoding`` for the recording (``inflate``, within ``DECODE_CAP``);
    a str says why the body was not decoded."""
    try:
        return inflate(data, encoding, DECODE_CAP)
    except Undecodable as e:
        return str(e)
