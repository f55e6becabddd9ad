"""JSON helpers shared by the core.

``js_dumps`` serializes the way JavaScript's ``JSON.stringify`` does (no
spaces after ``,`` and ``:``, non-ASCII kept as is, key order preserved), since
that is the text qwen-code and Claude Code estimate tool schemas and tool
calls on.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def js_dumps(value: Any) -> str:
    """Compact JSON like ``JSON.stringify(value)``."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # integers beyond 64 bits, exotic types
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def pretty(value: Any) -> str:
    """Indented JSON for people."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except TypeError:
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def loads(data: bytes | str) -> Any:
    return orjson.loads(data)


def printable(value: Any) -> Any:
    """``value`` with every string made valid Unicode: a file name's bytes that are no
    UTF-8 (held as lone surrogates, which JSON and Qt cannot carry) shown as ``\\xe9``."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            try:
                raw = value.encode("utf-8", "surrogateescape")
            except UnicodeEncodeError:  # a surrogate no byte stands for
                return value.encode("utf-8", "replace").decode()
            return raw.decode("utf-8", "backslashreplace")
        return value
    if isinstance(value, dict):
        return {printable(k): printable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [printable(v) for v in value]
    return value
