"""API traces: ctxviewer's own recordings and claude-trace files, one exchange
(request + response) a line. The tests that recognise them; the reader is
``trace.reader``."""

from __future__ import annotations

from ctxviewer.ingest.base import Format, Head


def recording(head: Head) -> bool:
    return any(r.get("ctxviewer") == 1 for r in head.records[:3])


def claude_trace(head: Head) -> bool:
    return any(
        isinstance(r.get("request"), dict)
        and "response" in r
        and isinstance(r["request"].get("body"), (dict, type(None)))
        for r in head.records[:5]
    )


RECORDING = Format(
    "recording",
    "ctxviewer recording",
    "ctxviewer proxy recordings (docs/recording-format.md)",
    False,
    recording,
    "ctxviewer.ingest.trace.reader",
    "RECORDING",
)
CLAUDE_TRACE = Format(
    "claude-trace",
    "claude-trace / API trace",
    "request/response pairs (claude-trace and compatible proxies): Anthropic and OpenAI",
    False,
    claude_trace,
    "ctxviewer.ingest.trace.reader",
    "CLAUDE_TRACE",
)
