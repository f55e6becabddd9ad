"""What the OTLP receiver keeps of an export request: its shape checked, its secrets out.

An export posted as JSON is written as sent, so its shape is checked first
against the tables of ``otlp_schema``: every field the OTLP messages declare
must hold what they declare (a list for a repeated field, an object for a
message, a string or number for a scalar). Unknown fields are kept, as a newer
OTLP may add some. ``{"resourceLogs": 5}`` is refused (400) rather than written
and then choked on.

Attributes whose key names a credential (``api_key``, ``authorization``,
``http.request.header.x-api-key``: ``redact.is_secret``) have their value
replaced; key shapes inside any text (a logged request body) are replaced when
the line is written (``redact.redact_line``).
"""

from __future__ import annotations

from typing import Any

from ctxviewer.proxy.otlp_schema import MESSAGES
from ctxviewer.proxy.redact import REDACTED, is_secret

MAX_DEPTH = 64  # nested messages and values deeper than this are refused

_INTS = frozenset(
    {"int32", "uint32", "int64", "uint64", "sint32", "fixed32", "fixed64", "sfixed64", "enum"}
)
# message name -> json field name -> (kind, repeated, message)
_FIELDS: dict[str, dict[str, tuple[str, bool, str | None]]] = {
    message: {name: (kind, repeated, sub) for name, kind, repeated, sub in fields.values()}
    for message, fields in MESSAGES.items()
}


class BadShape(ValueError):
    """An export request whose fields do not hold what OTLP declares (the message says
    where)."""


def check_and_redact(export: dict[str, Any], message: str) -> None:
    """Check ``export`` (an OTLP JSON ``message``) and redact its secret attributes in
    place. Raises ``BadShape``."""
    _message(export, message, 0, message)


def _message(value: Any, message: str, depth: int, where: str) -> None:
    if depth > MAX_DEPTH:
        raise BadShape(f"{where}: nested deeper than {MAX_DEPTH}")
    if not isinstance(value, dict):
        raise BadShape(f"{where}: not an object")
    fields = _FIELDS[message]
    for name, item in value.items():
        spec = fields.get(name)
        if spec is None or item is None:  # unknown (kept as sent), or null (the default)
            continue
        kind, repeated, sub = spec
        at = f"{where}.{name}"
        if not repeated:
            _field(item, kind, sub, depth, at)
        elif not isinstance(item, list):
            raise BadShape(f"{at}: not a list")
        else:
            for i, one in enumerate(item):
                _field(one, kind, sub, depth, f"{at}[{i}]")
    if (
        message == "KeyValue"
        and is_secret(str(value.get("key", "")))
        and value.get("value") is not None
    ):
        value["value"] = {"stringValue": REDACTED}


def _field(value: Any, kind: str, sub: str | None, depth: int, where: str) -> None:
    if sub is not None:
        _message(value, sub, depth + 1, where)
    elif not _scalar_ok(value, kind):
        raise BadShape(f"{where}: not a {kind}")


def _scalar_ok(value: Any, kind: str) -> bool:
    """Whether ``value`` is what protobuf's JSON mapping accepts for a ``kind``
    (64-bit integers and enums also as strings, doubles also as "NaN"...)."""
    if value is None:
        return True
    if kind in ("string", "bytes"):
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind in _INTS:
        return isinstance(value, int | str)
    return isinstance(value, int | float | str)  # double
