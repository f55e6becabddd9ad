"""Decode OTLP protobuf export requests into the OTLP/JSON mapping.

A small reader of the protobuf wire format driven by the tables of
``otlp_schema``: no protobuf runtime is needed. The result is what the
OpenTelemetry Collector's ``file`` exporter writes for the same request:

- field names in lowerCamelCase, absent fields left out;
- 64-bit integers as decimal strings, 32-bit ones and enums as numbers;
- ``traceId``, ``spanId``, ``parentSpanId`` as hex, other bytes as base64;
- doubles as numbers (``"NaN"``, ``"Infinity"``, ``"-Infinity"`` as strings).

Unknown fields are skipped, as protobuf does. Malformed input raises
``ValueError``.
"""

from __future__ import annotations

import base64
import math
import struct
from typing import Any

from ctxviewer.proxy.otlp_schema import HEX_FIELDS, MESSAGES, PRESENCE

MAX_DEPTH = 64  # nested values (arrays of key-value lists ...) deeper than this are refused

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5
_WIRE_OF = {"fixed64": _I64, "sfixed64": _I64, "double": _I64, "fixed32": _I32}
_PACKABLE = frozenset(
    {
        "bool",
        "int32",
        "uint32",
        "int64",
        "uint64",
        "sint32",
        "fixed32",
        "fixed64",
        "sfixed64",
        "double",
        "enum",
    }
)


def decode(data: bytes, message: str, max_values: int | None = None) -> dict[str, Any]:
    """``data``, a serialized ``message`` (``"ExportLogsServiceRequest"`` ...), as OTLP JSON.

    ``max_values`` bounds the messages and scalars it decodes into: a byte of a
    packed field becomes a Python object (``"0"``, 50 bytes), so 20 MB of them
    took 1.6 GB."""
    return _message(memoryview(data), message, 0, _Budget(max_values))


class TooManyValues(ValueError):
    """An export request that decodes into more values than allowed."""


class _Budget:
    """Values left to decode; raises ValueError once spent."""

    __slots__ = ("left",)

    def __init__(self, limit: int | None) -> None:
        self.left = limit

    def spend(self, n: int) -> None:
        if self.left is not None:
            self.left -= n
            if self.left < 0:
                raise TooManyValues("the export request decodes into too many values")


def _is_default(value: Any) -> bool:
    """0, false, an empty string or bytes (``"0"``: a 64-bit zero)."""
    return value in ("", "0") if isinstance(value, str) else value == 0


def _varint(buf: memoryview, i: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if i >= len(buf):
            raise ValueError("malformed protobuf: a number runs past the end")
        byte = buf[i]
        i += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, i
        shift += 7
        if shift >= 70:
            raise ValueError("malformed protobuf: a number longer than 10 bytes")


def _take(buf: memoryview, i: int, n: int) -> tuple[memoryview, int]:
    if n < 0 or i + n > len(buf):
        raise ValueError("malformed protobuf: a field runs past the end")
    return buf[i : i + n], i + n


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _double(value: float) -> float | str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def _scalar(kind: str, raw: int | memoryview, name: str) -> Any:
    """One scalar as the JSON mapping writes it; ``raw`` is the varint or the field's bytes."""
    if isinstance(raw, memoryview):
        if kind == "string":
            return bytes(raw).decode("utf-8", errors="replace")
        if kind == "bytes":
            return bytes(raw).hex() if name in HEX_FIELDS else base64.b64encode(raw).decode()
        if kind == "fixed64":
            return str(struct.unpack("<Q", raw)[0])
        if kind == "sfixed64":
            return str(struct.unpack("<q", raw)[0])
        if kind == "double":
            return _double(struct.unpack("<d", raw)[0])
        if kind == "fixed32":
            return struct.unpack("<I", raw)[0]
        raise ValueError(f"malformed protobuf: {name} has the wrong wire type")
    if kind == "bool":
        return raw != 0
    if kind in ("int32", "enum"):
        return _signed(raw, 32)
    if kind == "uint32":
        return raw & 0xFFFFFFFF
    if kind == "int64":
        return str(_signed(raw, 64))
    if kind == "uint64":
        return str(raw & 0xFFFFFFFFFFFFFFFF)
    if kind == "sint32":
        raw &= 0xFFFFFFFF
        return (raw >> 1) ^ -(raw & 1)
    raise ValueError(f"malformed protobuf: {name} has the wrong wire type")


def _packed(kind: str, chunk: memoryview, name: str, budget: _Budget) -> list[Any]:
    out: list[Any] = []
    size = {_I64: 8, _I32: 4}.get(_WIRE_OF.get(kind, _VARINT))
    budget.spend(len(chunk) // (size or 1))  # at most this many
    i = 0
    while i < len(chunk):
        if size is None:
            value, i = _varint(chunk, i)
            out.append(_scalar(kind, value, name))
        else:
            part, i = _take(chunk, i, size)
            out.append(_scalar(kind, part, name))
    return out


def _message(buf: memoryview, message: str, depth: int, budget: _Budget) -> dict[str, Any]:
    if depth > MAX_DEPTH:
        raise ValueError("malformed protobuf: values nested too deep")
    budget.spend(1)
    fields = MESSAGES[message]
    out: dict[str, Any] = {}
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == _VARINT:
            value, i = _varint(buf, i)
        elif wire == _I64:
            value, i = _take(buf, i, 8)
        elif wire == _I32:
            value, i = _take(buf, i, 4)
        elif wire == _LEN:
            size, i = _varint(buf, i)
            value, i = _take(buf, i, size)
        else:
            raise ValueError(f"malformed protobuf: wire type {wire} in {message}")
        spec = fields.get(number)
        if spec is None or number == 0:
            continue  # an unknown field: skipped, as protobuf does
        name, kind, repeated, sub = spec
        if kind == "message":
            if not isinstance(value, memoryview):
                raise ValueError(f"malformed protobuf: {message}.{name} is not a message")
            assert sub is not None
            decoded: Any = _message(value, sub, depth + 1, budget)
        elif repeated and wire == _LEN and kind in _PACKABLE:
            out.setdefault(name, []).extend(_packed(kind, value, name, budget))
            continue
        else:
            budget.spend(1)
            decoded = _scalar(kind, value, name)
            if not repeated and _is_default(decoded) and (message, number) not in PRESENCE:
                out.pop(name, None)  # the default value: left out, as the JSON mapping does
                continue
        if repeated:
            out.setdefault(name, []).append(decoded)
        else:
            out[name] = decoded
    return out
