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


def _compact_dumps(value: Any) -> tuple[bytes, ...]:
    return (orjson.dumps(value),)


COMPACT = _Layout(b":", b",", _compact_dumps)  # module functions: a parser's state pickles
PYTHON = _Layout(b": ", b", ", _python_dumps)


@dataclass(eq=False)
class _Array:
    """A JSON array of the previous line, with the byte offsets of its elements."""

    layout: _Layout
    line: bytes  # the line the offsets are in
    start: int  # offset of the array's first element
    ends: list[int]  # offset after each element with verified bytes, from ``start``
    items: list[Any]  # the parsed elements (all of them)


class HistoryDecoder:
    """``decode(line) == orjson.loads(line)``, parsing repeated history once.

    ``arrays`` lists (key, path) pairs: the first ``"key":[`` in a line is the
    array at ``path`` (a tuple of object keys from the root). ``whole`` lists
    values repeated whole from line to line (an agent's tool list). Both kinds
    of repeat are cut out of the line in one splice, so a line is copied once.
    """

    def __init__(
        self,
        arrays: tuple[tuple[str, tuple[str, ...]], ...],
        whole: tuple[tuple[str, tuple[str, ...]], ...] = (),
    ) -> None:
        self._arrays = [
            (b'"' + key.encode() + b'"' + layout.colon + b"[", path, layout)
            for key, path in arrays
            for layout in (COMPACT, PYTHON)
        ]
        self._recent: list[_Array] = []
        # values repeated whole from one line to the next (an agent's tool list): the
        # marker, the path, and the last verified (bytes, parsed value)
        self._whole = [(b'"' + key.encode() + b'":', path) for key, path in whole]
        self._known: dict[tuple[str, ...], list[tuple[bytes, Any]]] = {}
        # per path: how many bytes followed the value in the last line that held it
        # (the next line most often has the same tail: found without a search)
        self._tail: dict[tuple[str, ...], int] = {}
        self.reused_bytes = 0  # bytes not parsed thanks to reuse (for benchmarks, tests)

    def decode(self, line: bytes) -> Any:
        found = self._find_array(line)
        # (begin, end, path, value): the bytes cut out, the sentinel's path, and what
        # replaces it (a whole value; None: the array's first ``count`` remembered items)
        cuts: list[tuple[int, int, tuple[str, ...], Any]] = []
        prev, count = None, 0
        if found is not None:
            start, path, layout = found
            prev = self._conversation(line, start, layout)
            count = _common_elements(prev, line, start) if prev is not None else 0
            if count:
                assert prev is not None
                cuts.append((start, start + prev.ends[count - 1], path, None))
        for marker, wpath in self._whole:
            cut = self._whole_at(line, marker, wpath)
            if cut is not None and all(cut[1] <= b or cut[0] >= e for b, e, _, _ in cuts):
                cuts.append(cut)
        doc = self._spliced(line, cuts) if cuts else None
        if doc is None:
            doc, count, cuts = orjson.loads(line), 0, []
        else:
            for begin, end, cpath, value in cuts:
                if value is None:
                    assert prev is not None
                    _at(doc, cpath)[0:1] = prev.items[:count]
                else:
                    _at(doc, cpath[:-1])[cpath[-1]] = value
                self.reused_bytes += end - begin
        if found is not None:
            array = _at(doc, found[1])
            if isinstance(array, list):
                self._remember(line, found[0], array, prev, count, found[2])
        self._remember_whole(line, doc, {c[2] for c in cuts if c[3] is not None})
        return doc

    def _find_array(self, line: bytes) -> tuple[int, tuple[str, ...], _Layout] | None:
        for marker, path, layout in self._arrays:
            pos = line.find(marker)
            if pos >= 0:
                return pos + len(marker), path, layout
        return None

    def _whole_at(
        self, line: bytes, marker: bytes, path: tuple[str, ...]
    ) -> tuple[int, int, tuple[str, ...], Any] | None:
        """Where ``line`` holds a whole value seen recently, byte for byte."""
        known = self._known.get(path)
        if not known:
            return None
        tail = self._tail.get(path)
        if tail is not None:
            for raw, value in reversed(known):  # where the last line had it
                pos = len(line) - tail - len(raw)
                if (
                    pos >= len(marker)
                    and line.startswith(raw, pos)
                    and line.startswith(marker, pos - len(marker))
                ):
                    return pos, pos + len(raw), path, value
        pos = line.rfind(marker)  # bodies put the tools after the long history
        if pos < 0:
            return None
        pos += len(marker)
        for raw, value in reversed(known):  # the main thread's and side calls' lists
            if line.startswith(raw, pos):
                self._tail[path] = len(line) - pos - len(raw)
                return pos, pos + len(raw), path, value
        return None

    @staticmethod
    def _spliced(line: bytes, cuts: list[tuple[int, int, tuple[str, ...], Any]]) -> Any:
        """The line parsed with each cut replaced by the sentinel; None unless every
        sentinel came back at its path (else the bytes were not what they seemed)."""
        cuts.sort(key=lambda c: c[0])
        pieces: list[bytes] = []
        pos = 0
        for begin, end, _, _ in cuts:
            pieces += (line[pos:begin], _SENTINEL_JSON)
            pos = end
        pieces.append(line[pos:])
        doc = _loads_or_none(b"".join(pieces))
        if doc is None:
            return None
        for _, _, path, value in cuts:
            if value is None:
                array = _at(doc, path)
                if not (isinstance(array, list) and array and array[0] == SENTINEL):
                    return None
            else:
                parent = _at(doc, path[:-1])
                if not (isinstance(parent, dict) and parent.get(path[-1]) == SENTINEL):
                    return None
        return doc

    def _remember_whole(self, line: bytes, doc: Any, cut: set[tuple[str, ...]]) -> None:
        for marker, path in self._whole:
            if path in cut:
                continue
            value = _at(doc, path)
            if not isinstance(value, list) or not value:
                continue
            pos = line.rfind(marker)
            if pos < 0:
                continue
            try:
                raw = orjson.dumps(value)
            except (TypeError, orjson.JSONEncodeError):
                continue
            if line.startswith(raw, pos + len(marker)):  # the bytes really are these
                self._tail[path] = len(line) - pos - len(marker) - len(raw)
                known = self._known.setdefault(path, [])
                known.append((raw, value))
                if len(known) > KEEP_WHOLE:
                    del known[0]

    def _conversation(self, line: bytes, start: int, layout: _Layout) -> _Array | None:
        """The remembered array whose first element this line's array starts with."""
        for state in reversed(self._recent):
            if state.layout is layout and line.startswith(
                memoryview(state.line)[state.start : state.start + state.ends[0]], start
            ):
                return state
        return None

    def _remember(
        self,
        line: bytes,
        start: int,
        items: list[Any],
        prev: _Array | None,
        count: int,
        layout: _Layout,
    ) -> None:
        ends = prev.ends[:count] if count and prev is not None else []
        pos = start + ends[-1] if ends else start
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
            ends.append(pos - start)
        if prev is not None:
            self._recent.remove(prev)
        if ends:
            self._recent.append(_Array(layout, line, start, ends, items))
            if len(self._recent) > KEEP:
                del self._recent[0]


def _common_elements(prev: _Array, line: bytes, start: int) -> int:
    """How many leading elements of ``prev`` ``line`` repeats byte for byte at ``start``."""
    old = memoryview(prev.line)
    base = prev.start

    def same_prefix(n: int) -> bool:  # the first n elements are the same bytes
        return line.startswith(old[base : base + prev.ends[n - 1]], start)

    def same_element(n: int) -> bool:  # element n (1-based) is the same bytes in place
        begin = prev.ends[n - 2] if n > 1 else 0
        return line.startswith(old[base + begin : base + prev.ends[n - 1]], start + begin)

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
TRACE_WHOLE = (("tools", ("request", "body", "tools")),)

TRACE_ARRAYS = (
    ("messages", ("request", "body", "messages")),  # Anthropic Messages, OpenAI Chat
    ("input", ("request", "body", "input")),  # OpenAI Responses
    ("contents", ("request", "body", "contents")),  # Gemini generateContent
)
