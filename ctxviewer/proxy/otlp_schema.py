"""The OTLP protobuf messages ``ctxviewer otel`` decodes, as tables.

Each message maps a field number to ``(json name, kind, repeated, message)``,
as ``opentelemetry-proto`` (v1.9) declares them; ``tests/proxy/test_otlp.py``
checks every row against the descriptors of the ``opentelemetry-proto``
package. ``otlp_proto`` decodes the wire format with these tables into the
OTLP/JSON mapping. Kinds are protobuf's scalar types (``string``, ``bytes``,
``bool``, ``int32``, ``uint32``, ``int64``, ``uint64``, ``sint32``,
``fixed32``, ``fixed64``, ``sfixed64``, ``double``, ``enum``) or
``message``.
"""

from __future__ import annotations

Field = tuple[str, str, bool, str | None]  # json name, kind, repeated, message name

_KV: Field = ("attributes", "message", True, "KeyValue")
_SCOPE: Field = ("scope", "message", False, "InstrumentationScope")
_RESOURCE: Field = ("resource", "message", False, "Resource")
_SCHEMA: Field = ("schemaUrl", "string", False, None)
_DROPPED: Field = ("droppedAttributesCount", "uint32", False, None)


def _points(message: str) -> dict[int, Field]:
    return {1: ("dataPoints", "message", True, message)}


MESSAGES: dict[str, dict[int, Field]] = {
    # the three export requests
    "ExportLogsServiceRequest": {1: ("resourceLogs", "message", True, "ResourceLogs")},
    "ExportTraceServiceRequest": {1: ("resourceSpans", "message", True, "ResourceSpans")},
    "ExportMetricsServiceRequest": {1: ("resourceMetrics", "message", True, "ResourceMetrics")},
    # common
    "Resource": {1: _KV, 2: _DROPPED, 3: ("entityRefs", "message", True, "EntityRef")},
    "EntityRef": {
        1: _SCHEMA,
        2: ("type", "string", False, None),
        3: ("idKeys", "string", True, None),
        4: ("descriptionKeys", "string", True, None),
    },
    "InstrumentationScope": {
        1: ("name", "string", False, None),
        2: ("version", "string", False, None),
        3: _KV,
        4: _DROPPED,
    },
    "KeyValue": {
        1: ("key", "string", False, None),
        2: ("value", "message", False, "AnyValue"),
        3: ("keyStrindex", "int32", False, None),
    },
    "AnyValue": {
        1: ("stringValue", "string", False, None),
        2: ("boolValue", "bool", False, None),
        3: ("intValue", "int64", False, None),
        4: ("doubleValue", "double", False, None),
        5: ("arrayValue", "message", False, "ArrayValue"),
        6: ("kvlistValue", "message", False, "KeyValueList"),
        7: ("bytesValue", "bytes", False, None),
        8: ("stringValueStrindex", "int32", False, None),
    },
    "ArrayValue": {1: ("values", "message", True, "AnyValue")},
    "KeyValueList": {1: ("values", "message", True, "KeyValue")},
    # logs
    "ResourceLogs": {1: _RESOURCE, 2: ("scopeLogs", "message", True, "ScopeLogs"), 3: _SCHEMA},
    "ScopeLogs": {1: _SCOPE, 2: ("logRecords", "message", True, "LogRecord"), 3: _SCHEMA},
    "LogRecord": {
        1: ("timeUnixNano", "fixed64", False, None),
        11: ("observedTimeUnixNano", "fixed64", False, None),
        2: ("severityNumber", "enum", False, None),
        3: ("severityText", "string", False, None),
        5: ("body", "message", False, "AnyValue"),
        6: _KV,
        7: _DROPPED,
        8: ("flags", "fixed32", False, None),
        9: ("traceId", "bytes", False, None),
        10: ("spanId", "bytes", False, None),
        12: ("eventName", "string", False, None),
    },
    # traces
    "ResourceSpans": {1: _RESOURCE, 2: ("scopeSpans", "message", True, "ScopeSpans"), 3: _SCHEMA},
    "ScopeSpans": {1: _SCOPE, 2: ("spans", "message", True, "Span"), 3: _SCHEMA},
    "Span": {
        1: ("traceId", "bytes", False, None),
        2: ("spanId", "bytes", False, None),
        3: ("traceState", "string", False, None),
        4: ("parentSpanId", "bytes", False, None),
        16: ("flags", "fixed32", False, None),
        5: ("name", "string", False, None),
        6: ("kind", "enum", False, None),
        7: ("startTimeUnixNano", "fixed64", False, None),
        8: ("endTimeUnixNano", "fixed64", False, None),
        9: _KV,
        10: _DROPPED,
        11: ("events", "message", True, "Span.Event"),
        12: ("droppedEventsCount", "uint32", False, None),
        13: ("links", "message", True, "Span.Link"),
        14: ("droppedLinksCount", "uint32", False, None),
        15: ("status", "message", False, "Status"),
    },
    "Span.Event": {
        1: ("timeUnixNano", "fixed64", False, None),
        2: ("name", "string", False, None),
        3: _KV,
        4: _DROPPED,
    },
    "Span.Link": {
        1: ("traceId", "bytes", False, None),
        2: ("spanId", "bytes", False, None),
        3: ("traceState", "string", False, None),
        4: _KV,
        5: _DROPPED,
        6: ("flags", "fixed32", False, None),
    },
    "Status": {2: ("message", "string", False, None), 3: ("code", "enum", False, None)},
    # metrics
    "ResourceMetrics": {
        1: _RESOURCE,
        2: ("scopeMetrics", "message", True, "ScopeMetrics"),
        3: _SCHEMA,
    },
    "ScopeMetrics": {1: _SCOPE, 2: ("metrics", "message", True, "Metric"), 3: _SCHEMA},
    "Metric": {
        1: ("name", "string", False, None),
        2: ("description", "string", False, None),
        3: ("unit", "string", False, None),
        5: ("gauge", "message", False, "Gauge"),
        7: ("sum", "message", False, "Sum"),
        9: ("histogram", "message", False, "Histogram"),
        10: ("exponentialHistogram", "message", False, "ExponentialHistogram"),
        11: ("summary", "message", False, "Summary"),
        12: ("metadata", "message", True, "KeyValue"),
    },
    "Gauge": _points("NumberDataPoint"),
    "Sum": {
        **_points("NumberDataPoint"),
        2: ("aggregationTemporality", "enum", False, None),
        3: ("isMonotonic", "bool", False, None),
    },
    "Histogram": {
        **_points("HistogramDataPoint"),
        2: ("aggregationTemporality", "enum", False, None),
    },
    "ExponentialHistogram": {
        **_points("ExponentialHistogramDataPoint"),
        2: ("aggregationTemporality", "enum", False, None),
    },
    "Summary": _points("SummaryDataPoint"),
    "NumberDataPoint": {
        7: _KV,
        2: ("startTimeUnixNano", "fixed64", False, None),
        3: ("timeUnixNano", "fixed64", False, None),
        4: ("asDouble", "double", False, None),
        6: ("asInt", "sfixed64", False, None),
        5: ("exemplars", "message", True, "Exemplar"),
        8: ("flags", "uint32", False, None),
    },
    "Exemplar": {
        7: ("filteredAttributes", "message", True, "KeyValue"),
        2: ("timeUnixNano", "fixed64", False, None),
        3: ("asDouble", "double", False, None),
        6: ("asInt", "sfixed64", False, None),
        4: ("spanId", "bytes", False, None),
        5: ("traceId", "bytes", False, None),
    },
    "HistogramDataPoint": {
        9: _KV,
        2: ("startTimeUnixNano", "fixed64", False, None),
        3: ("timeUnixNano", "fixed64", False, None),
        4: ("count", "fixed64", False, None),
        5: ("sum", "double", False, None),
        6: ("bucketCounts", "fixed64", True, None),
        7: ("explicitBounds", "double", True, None),
        8: ("exemplars", "message", True, "Exemplar"),
        10: ("flags", "uint32", False, None),
        11: ("min", "double", False, None),
        12: ("max", "double", False, None),
    },
    "ExponentialHistogramDataPoint": {
        1: _KV,
        2: ("startTimeUnixNano", "fixed64", False, None),
        3: ("timeUnixNano", "fixed64", False, None),
        4: ("count", "fixed64", False, None),
        5: ("sum", "double", False, None),
        6: ("scale", "sint32", False, None),
        7: ("zeroCount", "fixed64", False, None),
        8: ("positive", "message", False, "ExponentialHistogramDataPoint.Buckets"),
        9: ("negative", "message", False, "ExponentialHistogramDataPoint.Buckets"),
        10: ("flags", "uint32", False, None),
        11: ("exemplars", "message", True, "Exemplar"),
        12: ("min", "double", False, None),
        13: ("max", "double", False, None),
        14: ("zeroThreshold", "double", False, None),
    },
    "ExponentialHistogramDataPoint.Buckets": {
        1: ("offset", "sint32", False, None),
        2: ("bucketCounts", "uint64", True, None),
    },
    "SummaryDataPoint": {
        7: _KV,
        2: ("startTimeUnixNano", "fixed64", False, None),
        3: ("timeUnixNano", "fixed64", False, None),
        4: ("count", "fixed64", False, None),
        5: ("sum", "double", False, None),
        6: ("quantileValues", "message", True, "SummaryDataPoint.ValueAtQuantile"),
        8: ("flags", "uint32", False, None),
    },
    "SummaryDataPoint.ValueAtQuantile": {
        1: ("quantile", "double", False, None),
        2: ("value", "double", False, None),
    },
}

# Fields with presence (a oneof member, a proto3 ``optional``): kept when they hold the
# default value. Every other scalar equal to its default is left out, as protobuf's JSON
# mapping (and the Collector) does.
PRESENCE = frozenset(
    [("AnyValue", n) for n in MESSAGES["AnyValue"]]
    + [(m, n) for m in ("NumberDataPoint", "Exemplar") for n in (4, 6) if n in MESSAGES[m]]
    + [("Exemplar", 3)]
    + [("HistogramDataPoint", n) for n in (5, 11, 12)]
    + [("ExponentialHistogramDataPoint", n) for n in (5, 12, 13)]
)

# Where each signal is posted, and the export request it carries.
SIGNALS = {
    "/v1/logs": "ExportLogsServiceRequest",
    "/v1/traces": "ExportTraceServiceRequest",
    "/v1/metrics": "ExportMetricsServiceRequest",
}
# bytes fields the OTLP/JSON mapping writes as hex instead of base64
HEX_FIELDS = frozenset({"traceId", "spanId", "parentSpanId"})
