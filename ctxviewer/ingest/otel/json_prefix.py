"""What survives of a JSON object cut off after N characters.

Claude Code logs a request body inline in its OpenTelemetry events cut at 60 KB
(``ingest.otel.reader``): the text is a prefix of a JSON object and no JSON parser
takes it. ``salvage`` keeps what the prefix holds whole:

- every top-level member before the cut, whole;
- of the member the cut falls in, when it is an array, its elements before the
  cut, whole (the element the cut falls in is dropped: never half a message);
- the name of that member (``cut``), so the caller can say what was lost.

Nothing is invented: an element or value the cut falls in is left out, not
completed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
_BROKEN = (json.JSONDecodeError, RecursionError)  # cut, or nested deeper than Python goes


@dataclass
class Salvaged:
    """The whole members of a cut JSON object."""

    fields: dict[str, Any] = field(default_factory=dict)
    cut: str | None = None  # the member the cut falls in (None: the object ended whole)
    kept: int = 0  # elements of ``cut`` kept whole, when it is an array
    partial: bool = False  # ``fields[cut]`` holds those elements (an array cut short)

    @property
    def whole(self) -> bool:
        return self.cut is None


def _skip(text: str, i: int) -> int:
    m = _WS.match(text, i)
    return m.end() if m else i


def salvage(text: str) -> Salvaged:
    """The members of the JSON object ``text`` starts with, up to where it is cut.

    A text that is not the start of a JSON object gives nothing (``cut`` is
    ``""``)."""
    out = Salvaged()
    i = _skip(text, 0)
    if not text.startswith("{", i):
        out.cut = ""
        return out
    i = _skip(text, i + 1)
    if text.startswith("}", i):
        return out
    while True:
        try:
            key, i = _DECODER.raw_decode(text, i)
        except _BROKEN:
            out.cut = ""  # cut inside a member's name: which one is not known
            return out
        if not isinstance(key, str):
            out.cut = ""
            return out
        i = _skip(text, i)
        if not text.startswith(":", i):
            out.cut = key
            return out
        i = _skip(text, i + 1)
        try:
            value, i = _DECODER.raw_decode(text, i)
        except _BROKEN:
            out.cut = key
            if text.startswith("[", i):
                items = _array_prefix(text, i + 1)
                out.fields[key], out.kept, out.partial = items, len(items), True
            return out
        out.fields[key] = value
        i = _skip(text, i)
        if text.startswith(",", i):
            i = _skip(text, i + 1)
            continue
        if not text.startswith("}", i):
            out.cut = ""  # cut right after a whole member: the next one's name is lost
        return out


def _array_prefix(text: str, i: int) -> list[Any]:
    """The whole elements of the array whose ``[`` ends just before ``i``."""
    items: list[Any] = []
    i = _skip(text, i)
    while True:
        try:
            value, i = _DECODER.raw_decode(text, i)
        except _BROKEN:
            return items
        items.append(value)
        i = _skip(text, i)
        if not text.startswith(",", i):
            return items
        i = _skip(text, i + 1)
