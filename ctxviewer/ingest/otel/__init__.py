"""OpenTelemetry: OTLP JSON logs of Claude Code's API events and their bodies. The
test that recognises them; the reader is ``otel.reader``."""

from __future__ import annotations

from typing import Any

from ctxviewer.ingest.base import Format, Head

# -- OpenTelemetry: one OTLP export request per line (the Collector's file exporter)
OTEL_EXPORT_KEYS = ("resourceLogs", "resourceSpans", "resourceMetrics")


def is_otel_export(record: Any) -> bool:
    """An OTLP export request (logs, spans or metrics)."""
    return isinstance(record, dict) and any(
        isinstance(record.get(k), list) for k in OTEL_EXPORT_KEYS
    )


def otel(head: Head) -> bool:
    start = head.text.lstrip()[:40]
    if start.startswith(tuple('{"' + k + '"' for k in OTEL_EXPORT_KEYS)):
        return True
    return any(is_otel_export(r) for r in head.records[:3])


FORMAT = Format(
    "otel",
    "OpenTelemetry (OTLP JSON)",
    "OTLP JSON lines, as the OpenTelemetry Collector's file exporter and "
    "`ctxviewer otel` write them: Claude Code's API events (docs/otel.md)",
    False,
    otel,
    "ctxviewer.ingest.otel.reader",
)
