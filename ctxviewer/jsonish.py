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
