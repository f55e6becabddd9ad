"""OTLP JSON export requests -> flat log events and spans.

One line of what the OpenTelemetry Collector's ``file`` exporter writes (and
``ctxviewer otel``) is one OTLP export request in the OTLP/JSON mapping:
``{"resourceLogs": [...]}``, ``{"resourceSpans": [...]}`` or
``{"resourceMetrics": [...]}``. Attribute values are ``AnyValue`` objects
(``{"stringValue": ...}``, ``{"intValue": ...}``): 64-bit integers come as
JSON numbers from some exporters and as decimal strings from others (the
Collector), both are read.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ctxviewer.ingest.api.anthropic import iso


@dataclass(frozen=True, slots=True)
class LogEvent:
    """One log record: its event name, attributes and resource attributes, flattened."""

    name: str  # "api_request", "api_request_body" ... (without the "claude_code." prefix)
    attrs: dict[str, Any]
    resource: dict[str, Any]
    timestamp: str | None

    def text(self, key: str) -> str | None:
        value = self.attrs.get(key)
        return value if isinstance(value, str) else None

    def number(self, key: str) -> int | None:
        """An integer attribute, also when it was written as a string (``"80136"``)."""
        value = self.attrs.get(key)
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            return value
        if isinstance(value, float) and math.isfinite(value):
            return int(value)
        if isinstance(value, str):
            try:
                return int(value)
            except ValueError:
                return None
        return None

    @property
    def sequence(self) -> int | None:
        return self.number("event.sequence")


@dataclass(frozen=True, slots=True)
class SpanInfo:
    """What a span says of one API call (Claude Code's ``claude_code.llm_request``)."""

    name: str
    attrs: dict[str, Any]


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` as a plain value (None for an empty or unknown one)."""
    if not isinstance(value, dict):
        return None
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        raw = value["intValue"]
        if isinstance(raw, int) and not isinstance(raw, bool):
            return raw
        try:
            return int(raw)
        except (TypeError, ValueError, OverflowError):
            return None
    if "doubleValue" in value:
        raw = value["doubleValue"]
        try:
            return float(raw)
        except (TypeError, ValueError, OverflowError):
            return None
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        values = (
            value["arrayValue"].get("values") if isinstance(value["arrayValue"], dict) else None
        )
        return [any_value(v) for v in values] if isinstance(values, list) else []
    if "kvlistValue" in value:
        kv = value["kvlistValue"]
        return attributes(kv.get("values") if isinstance(kv, dict) else None)
    if "bytesValue" in value:
        raw = value["bytesValue"]
        return raw if isinstance(raw, str) else None
    return None


def attributes(items: Any) -> dict[str, Any]:
    """A list of OTLP ``KeyValue`` -> a dict."""
    out: dict[str, Any] = {}
    for kv in items if isinstance(items, list) else ():
        if isinstance(kv, dict) and isinstance(kv.get("key"), str):
            out[kv["key"]] = any_value(kv.get("value"))
    return out


def _nanos_iso(value: Any) -> str | None:
    try:
        nanos = int(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return iso(nanos / 1e9) if nanos > 0 else None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def log_events(record: dict[str, Any]) -> Iterator[LogEvent]:
    """The log records of one export request, in the order written."""
    for rl in _list(record.get("resourceLogs")):
        rl = _dict(rl)
        resource = attributes(_dict(rl.get("resource")).get("attributes"))
        for sl in _list(rl.get("scopeLogs")):
            for lr in _list(_dict(sl).get("logRecords")):
                if not isinstance(lr, dict):
                    continue
                attrs = attributes(lr.get("attributes"))
                name = attrs.get("event.name") or lr.get("eventName") or any_value(lr.get("body"))
                if not isinstance(name, str):
                    continue
                stamp = attrs.get("event.timestamp")
                if not isinstance(stamp, str):
                    stamp = _nanos_iso(lr.get("timeUnixNano")) or _nanos_iso(
                        lr.get("observedTimeUnixNano")
                    )
                yield LogEvent(name.removeprefix("claude_code."), attrs, resource, stamp)


def spans(record: dict[str, Any]) -> Iterator[SpanInfo]:
    for rs in _list(record.get("resourceSpans")):
        for ss in _list(_dict(rs).get("scopeSpans")):
            for sp in _list(_dict(ss).get("spans")):
                if isinstance(sp, dict) and isinstance(sp.get("name"), str):
                    yield SpanInfo(sp["name"], attributes(sp.get("attributes")))
