"""Parse API-trace lines that repeat the history of an earlier line.

Every request of a conversation carries the whole history, so a proxy trace
of a long session is mostly the same bytes again and again: request 300
holds requests 1-299's messages before its own. ``HistoryDecoder`` parses
only what is new.

For each conversation it remembers the last line's bytes and where each
element of its ``messages`` (or Responses ``input``) array ends. A new line
whose array starts with byte-identical elements gets those elements cut out
and replaced by a one-token sentinel; ``orjson`` parses the rest, and the
remembered Python objects take the sentinel's place. The result equals
``orjson.loads(line)`` - the same values, the repeated messages even the
same objects, which lets ``messages_from`` reuse their conversions by
identity.

Nothing is trusted that was not checked on bytes: an element is reused only
where the new line holds exactly its bytes (those of the layout's dumps of
the parsed value, found at the element's position), and the sentinel must
come back at the array's path, or the line is parsed whole. Other layouts
(pretty printers) just get no reuse.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

SENTINEL = "\x00ctxviewer-reused\x00"
_SENTINEL_JSON = orjson.dumps(SENTINEL)
KEEP = 8  # conversations remembered (main thread, side calls, sub-agents)
TAIL_TRIES = 4  # elements tried from the end before a binary search
KEEP_WHOLE = 4  # whole values remembered per path (the main thread's, side calls', ...)


def _python_dumps(value: Any) -> tuple[bytes, ...]:
    ascii_ = json.dumps(value).encode()
    if b"\\u" not in ascii_:
        return (ascii_,)
    return ascii_, json.dumps(value, ensure_ascii=False).encode()


@dataclass(frozen=True)
class _Layout:
    """How a writer spaced its JSON: separators, and how values were dumped."""

    colon: bytes  # between a key and its value
    comma: bytes  # between array elements
    dumps: Callable[[Any], tuple[bytes, ...]]  # the candidate bytes of a value


COMPACT = _Layout(b":", b",", lambda value: (orjson.dumps(value),))
PYTHON = _Layout(b": ", b", ", _python_dumps)


@dataclass(eq=False)
class _Array:
    """A JSON array of the previous line, with the byte offsets of its elements."""

    layout: _Layout
    line: bytes  # the line the offsets are in
    start: int  # offset of the array's first element
    ends: list[int]  # offset after each element with verified bytes
    items: list[Any]  # the parsed elements (all of them)


class HistoryDecoder:
    """``decode(line) == orjson.loads(line)``, parsing repeated history once.

    ``arrays`` lists (key, path) pairs: the first ``"key":[`` in a line is the
    array at ``path`` (a tuple of object keys from the root).
    """

    def __init__(self, arrays: tuple[tuple[str, tuple[str, ...]], ...],
                 whole: tuple[tuple[str, tuple[str, ...]], ...] = ()) -> None:
        self._arrays = [(b'"' + key.encode() + b'"' + layout.colon + b"[", path, layout)
                        for key, path in arrays for layout in (COMPACT, PYTHON)]
        self._recent: list[_Array] = []
        # values repeated whole from one line to the next (an agent's tool list): the
        # marker, the path, and the last verified (bytes, parsed value)
        self._whole = [(b'"' + key.encode() + b'":', path) for key, path in whole]
        self._known: dict[tuple[str, ...], list[tuple[bytes, Any]]] = {}
        self.reused_bytes = 0  # bytes not parsed thanks to reuse (for benchmarks, tests)

    def decode(self, line: bytes) -> Any:
        cut, spliced = self._cut_whole(line)
        doc = self._decode_arrays(spliced)
        if cut:
            for path, value in cut:
                parent = _at(doc, path[:-1])
                if not (isinstance(parent, dict) and parent.get(path[-1]) == SENTINEL):
                    # the marker was elsewhere than at its path: parse whole, and forget
                    # what was remembered from the spliced line
                    self._recent.clear()
                    doc = orjson.loads(line)
                    break
                parent[path[-1]] = value
            else:
                self.reused_bytes += len(line) - len(spliced)
        self._remember_whole(line, doc, {path for path, _ in cut})
        return doc

    def _cut_whole(self, line: bytes) -> tuple[list[tuple[tuple[str, ...], Any]], bytes]:
        """``line`` with each whole value seen recently replaced by the sentinel."""
        cut: list[tuple[tuple[str, ...], Any]] = []
        for marker, path in self._whole:
            known = self._known.get(path)
            if not known:
                continue
            pos = line.rfind(marker)  # bodies put the tools after the long history
            if pos < 0:
                continue
            pos += len(marker)
            for raw, value in reversed(known):  # the main thread's and side calls' lists
                if line.startswith(raw, pos):
                    line = line[:pos] + _SENTINEL_JSON + line[pos + len(raw):]
                    cut.append((path, value))
                    break
        return cut, line

    def _remember_whole(self, line: bytes, doc: Any, cut: set[tuple[str, ...]]) -> None:
        for marker, path in self._whole:
            if path in cut:
                continue
            value = _at(doc, path)
            pos = line.rfind(marker)
            if not isinstance(value, list) or not value or pos < 0:
                continue
            try:
                raw = orjson.dumps(value)
            except (TypeError, orjson.JSONEncodeError):
                continue
            if line.startswith(raw, pos + len(marker)):  # the bytes really are these
                known = self._known.setdefault(path, [])
                known.append((raw, value))
                if len(known) > KEEP_WHOLE:
                    del known[0]

    def _decode_arrays(self, line: bytes) -> Any:
        for marker, path, layout in self._arrays:
            pos = line.find(marker)
            if pos >= 0:
                return self._decode(line, pos + len(marker), path, layout)
        return orjson.loads(line)

    def _decode(self, line: bytes, start: int, path: tuple[str, ...], layout: _Layout) -> Any:
        prev = self._conversation(line, start, layout)
        count = _common_elements(prev, line, start) if prev is not None else 0
        doc = None
        if count:
            assert prev is not None
            cut = start + prev.ends[count - 1] - prev.start
            doc = _loads_or_none(line[:start] + _SENTINEL_JSON + line[cut:])
            array = _at(doc, path)
            if array and array[0] == SENTINEL:
                array[0:1] = prev.items[:count]
                self.reused_bytes += cut - start
            else:
                doc, count = None, 0
        if doc is None:
            doc = orjson.loads(line)
        array = _at(doc, path)
        if isinstance(array, list):
            self._remember(line, start, array, prev, count, layout)
        return doc

    def _conversation(self, line: bytes, start: int, layout: _Layout) -> _Array | None:
        """The remembered array whose first element this line's array starts with."""
        for state in reversed(self._recent):
            if state.layout is layout and line.startswith(
                    memoryview(state.line)[state.start:state.ends[0]], start):
                return state
        return None

    def _remember(self, line: bytes, start: int, items: list[Any], prev: _Array | None,
                  count: int, layout: _Layout) -> None:
        if count:
            assert prev is not None
            shift = start - prev.start
            ends = [end + shift for end in prev.ends[:count]]
        else:
            ends = []
        pos = ends[-1] if ends else start
        comma = layout.comma
        for item in items[count:]:
            if ends:
                if not line.startswith(comma, pos):
                    break
                pos += len(comma)
            try:
                raw = next((c for c in layout.dumps(item) if line.startswith(c, pos)), None)
            except (TypeError, ValueError, orjson.JSONEncodeError):
                break
            if raw is None:
                break
            pos += len(raw)
            ends.append(pos)
        if prev is not None:
            self._recent.remove(prev)
        if ends:
            self._recent.append(_Array(layout, line, start, ends, items))
            if len(self._recent) > KEEP:
                del self._recent[0]


def _common_elements(prev: _Array, line: bytes, start: int) -> int:
    """How many leading elements of ``prev`` ``line`` repeats byte for byte at ``start``."""
    old = memoryview(prev.line)
    shift = start - prev.start

    def same_prefix(n: int) -> bool:  # the first n elements are the same bytes
        return line.startswith(old[prev.start:prev.ends[n - 1]], start)

    def same_element(n: int) -> bool:  # element n (1-based) is the same bytes in place
        begin = prev.ends[n - 2] if n > 1 else prev.start
        return line.startswith(old[begin:prev.ends[n - 1]], begin + shift)

    total = len(prev.ends)
    for n in range(total, max(total - TAIL_TRIES, 0), -1):
        if same_element(n):
            return n if same_prefix(n) else _bisect(same_prefix, n - 1)
    return _bisect(same_prefix, total - TAIL_TRIES)


def _bisect(ok: Any, high: int) -> int:
    """The largest n in [0, high] with ``ok(n)`` (``ok`` holds for a prefix of n)."""
    low = 0
    while low < high:
        mid = (low + high + 1) // 2
        if ok(mid):
            low = mid
        else:
            high = mid - 1
    return low


def _loads_or_none(data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


def _at(doc: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(key)
    return doc


# Whole values a trace repeats from request to request: the tool definitions.
TRACE_WHOLE = (
    ("tools", ("request", "body", "tools")),
)

TRACE_ARRAYS = (
    ("messages", ("request", "body", "messages")),  # Anthropic Messages, OpenAI Chat
    ("input", ("request", "body", "input")),  # OpenAI Responses
)
