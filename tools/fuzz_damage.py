"""Ways a real log gets damaged, for tools/fuzz_logs.py.

Each damage takes a ``random.Random`` and the bytes of a real log (decompressed)
and returns the bytes of a damaged copy, or None when it does not apply to that
log. Everything is replayable from the RNG's seed.
"""

from __future__ import annotations

import gzip
import json
import lzma
import random
from collections.abc import Callable
from typing import Any

Damage = Callable[[random.Random, bytes], "bytes | None"]


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def truncate_anywhere(rnd: random.Random, data: bytes) -> bytes | None:
    """Cut at a random byte: a write interrupted anywhere."""
    return data[: rnd.randrange(len(data))] if data else None


def truncate_inside_line(rnd: random.Random, data: bytes) -> bytes | None:
    """Cut inside a random line (never at its end): the last record half written."""
    lines = _lines(data)
    if not lines:
        return None
    i = rnd.randrange(len(lines))
    start = sum(len(x) for x in lines[:i])
    return data[: start + rnd.randrange(1, max(len(lines[i]) - 1, 2))]


def truncate_inside_utf8(rnd: random.Random, data: bytes) -> bytes | None:
    """Cut after the first byte of a multi-byte UTF-8 character."""
    starts = (
        [i for i in range(len(data)) if data[i] >= 0xC0]
        if len(data) < 4_000_000
        else [i for i in rnd.sample(range(len(data)), 200_000) if data[i] >= 0xC0]
    )
    if not starts:
        return None
    return data[: rnd.choice(starts) + 1]


def flip_bytes(rnd: random.Random, data: bytes) -> bytes | None:
    """A few random bytes replaced by random values: a disk or transfer error."""
    if not data:
        return None
    out = bytearray(data)
    for _ in range(rnd.randint(1, 8)):
        out[rnd.randrange(len(out))] = rnd.randrange(256)
    return bytes(out)


def zero_block(rnd: random.Random, data: bytes) -> bytes | None:
    """A block of NULs in the middle: a file system that lost a page."""
    if len(data) < 64:
        return None
    at = rnd.randrange(len(data))
    n = min(rnd.choice([512, 4096, 65536]), len(data) - at)
    return data[:at] + b"\0" * n + data[at + n :]


def delete_line(rnd: random.Random, data: bytes) -> bytes | None:
    lines = _lines(data)
    if len(lines) < 2:
        return None
    del lines[rnd.randrange(len(lines))]
    return b"".join(lines)


def duplicate_line(rnd: random.Random, data: bytes) -> bytes | None:
    lines = _lines(data)
    if not lines:
        return None
    i = rnd.randrange(len(lines))
    line = lines[i] if lines[i].endswith(b"\n") else lines[i] + b"\n"
    lines.insert(i + rnd.choice([0, 1, 2]), line)
    return b"".join(lines)


def shuffle_lines(rnd: random.Random, data: bytes) -> bytes | None:
    lines = [x if x.endswith(b"\n") else x + b"\n" for x in _lines(data)]
    if len(lines) < 3:
        return None
    if rnd.random() < 0.5:
        rnd.shuffle(lines)
    else:  # a few swaps: records out of order, mostly in place
        for _ in range(rnd.randint(1, 4)):
            i, j = rnd.randrange(len(lines)), rnd.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
    return b"".join(lines)


NUMBERISH = (
    "token",
    "count",
    "usage",
    "index",
    "size",
    "total",
    "input",
    "output",
    "cache",
    "window",
    "limit",
    "line",
    "ms",
    "time",
    "duration",
    "cost",
)


def _nodes(value: Any, out: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """(container, key) of every value under ``value``."""
    if isinstance(value, dict):
        for k, v in value.items():
            out.append((value, k))
            _nodes(v, out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.append((value, i))
            _nodes(v, out)
    return out


def _other_type(rnd: random.Random, old: Any) -> Any:
    """A value of another JSON type than ``old``, or an awkward one of the same."""
    choices: list[Any] = [
        None,
        True,
        "NaN",
        "Infinity",
        "-inf",
        "1e999",
        "",
        "12",
        -1,
        -(10**9),
        10**30,
        2**64,
        2**63,
        -(2**63) - 1,
        1.5,
        -0.0,
        1e308,
        [],
        {},
        [old],
        {"value": old},
    ]
    if isinstance(old, str):
        choices += [len(old), rnd.randint(-5, 5), 3.25]
    if isinstance(old, dict):
        choices += [list(old.values()), list(old.items())[:3]]
    if isinstance(old, list):
        choices += [dict(enumerate(old)) if len(old) < 50 else {}, "[]", len(old)]
    if isinstance(old, (int, float)) and not isinstance(old, bool):
        choices += [str(old), -old, old * 10**12, [old], {"n": old}]
    new = rnd.choice(choices)
    return {str(k): v for k, v in new.items()} if isinstance(new, dict) else new


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode()


def change_field_type(rnd: random.Random, data: bytes) -> bytes | None:
    """One value of one record changed to another JSON type (a hand edit, another
    version of the agent): string to number, object to list, null, a huge or negative
    number, a NaN-like string. Counts and tokens are picked more often."""
    lines = _lines(data)
    stripped = data.lstrip()
    document = stripped[:1] in (b"{", b"[") and len(lines) > 1 and not _is_json(lines[0])
    targets = [None] if document else [i for i, x in enumerate(lines) if x.strip()[:1] == b"{"]
    if not targets:
        return None
    i = rnd.choice(targets)
    try:
        record = json.loads(data if i is None else lines[i])
    except ValueError:
        return None
    for _ in range(rnd.choice([1, 1, 1, 2, 3])):
        nodes = _nodes(record, [])
        if not nodes:
            return None
        numeric = [
            (c, k)
            for c, k in nodes
            if isinstance(k, str) and any(w in k.lower() for w in NUMBERISH)
        ]
        container, key = rnd.choice(numeric if numeric and rnd.random() < 0.5 else nodes)
        container[key] = _other_type(rnd, container[key])
    if i is None:
        return _dumps(record) + b"\n"
    lines[i] = _dumps(record) + (b"\n" if lines[i].endswith(b"\n") else b"")
    return b"".join(lines)


def _is_json(raw: bytes) -> bool:
    try:
        json.loads(raw)
        return True
    except ValueError:
        return False


def parent_cycle(rnd: random.Random, data: bytes) -> bytes | None:
    """A record's ``parentUuid`` pointed back into its own chain (Claude Code, qwen-code):
    at itself, or at a record that hangs below it, so that walking up from there never
    reaches a root. None when the log has no records linked by ``parentUuid``."""
    lines = _lines(data)
    records: dict[int, dict[str, Any]] = {}
    for i, raw in enumerate(lines):
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("uuid"), str):
            records[i] = record
    if not records:
        return None
    children: dict[Any, list[str]] = {}
    for r in records.values():
        children.setdefault(r.get("parentUuid"), []).append(r["uuid"])
    for _ in range(rnd.choice([1, 1, 2, 5])):
        at = rnd.choice(list(records))
        record = records[at]
        below, todo = [], list(children.get(record["uuid"], ()))
        while todo and len(below) < 10_000:
            below.append(todo.pop())
            todo += children.get(below[-1], ())
        record["parentUuid"] = rnd.choice(below) if below and rnd.random() < 0.7 else record["uuid"]
        lines[at] = _dumps(record) + (b"\n" if lines[at].endswith(b"\n") else b"")
    return b"".join(lines)


def compressed_cut(rnd: random.Random, data: bytes) -> bytes | None:
    """The log gzip- or xz-compressed, then cut short."""
    packed = gzip.compress(data, mtime=0) if rnd.random() < 0.5 else lzma.compress(data)
    return packed[: rnd.randrange(1, len(packed))]


def compressed_flip(rnd: random.Random, data: bytes) -> bytes | None:
    """The log compressed, with a few bytes of the compressed stream changed."""
    packed = gzip.compress(data, mtime=0) if rnd.random() < 0.5 else lzma.compress(data)
    return packed[:6] + (flip_bytes(rnd, packed[6:]) or b"")  # the magic kept: still "compressed"


def empty(rnd: random.Random, data: bytes) -> bytes | None:
    return rnd.choice([b"", b"\n", b"\n\n\n", b"   \n\t\n", b"\xef\xbb\xbf"])


def nuls(rnd: random.Random, data: bytes) -> bytes | None:
    """A file of NULs (a preallocated file never written), its size the log's or less."""
    return b"\0" * rnd.choice([1, 100, 4096, min(len(data), 1 << 20) or 1])


def huge_line(rnd: random.Random, data: bytes) -> bytes | None:
    """A huge single line: the log's records joined without newlines, or one 20-70 MB
    line (a string, or garbage) before or after them."""
    kind = rnd.choice(["joined", "string", "garbage"])
    if kind == "joined":
        return data.replace(b"\n", b" ")
    size = rnd.randint(20, 70) << 20
    if kind == "string":
        line = b'{"type": "user", "message": {"role": "user", "content": "' + b"x" * size + b'"}}\n'
    else:
        line = bytes(rnd.randrange(32, 127) for _ in range(4096)) * (size // 4096)
    return line + data if rnd.random() < 0.5 else data + b"\n" + line


def change_many_fields(rnd: random.Random, data: bytes) -> bytes | None:
    """``change_field_type`` 2 to 20 times, on the same or other records."""
    for _ in range(rnd.randint(2, 20)):
        data = change_field_type(rnd, data) or data
    return data


def byte_order_mark(rnd: random.Random, data: bytes) -> bytes | None:
    """A UTF-8 byte order mark before the first record (an editor saved the file)."""
    return b"\xef\xbb\xbf" + data


def crlf(rnd: random.Random, data: bytes) -> bytes | None:
    """Windows line ends (an editor saved the file)."""
    return data.replace(b"\n", b"\r\n")


def utf16(rnd: random.Random, data: bytes) -> bytes | None:
    """The log re-encoded as UTF-16 (an editor saved it so)."""
    return data.decode("utf-8", errors="replace").encode(rnd.choice(["utf-16", "utf-16-le"]))


def two_damages(rnd: random.Random, data: bytes) -> bytes | None:
    """Two damages one after the other (a hand edit, then a cut)."""
    for _ in range(2):
        name = pick(rnd, [n for n in DAMAGES if n not in ("two", "huge-line")])
        data = DAMAGES[name](rnd, data) or data
    return data


def foreign(rnd: random.Random, data: bytes) -> bytes | None:
    """Another tool's file with the same extension: JSON lines of a web server's log,
    a package lock, a JSON array of numbers, a CSV."""
    kind = rnd.choice(["jsonlog", "lock", "array", "csv", "html"])
    if kind == "jsonlog":
        return b"".join(
            _dumps(
                {
                    "level": rnd.choice(["info", "warn"]),
                    "ts": 1.7e9 + i,
                    "msg": f"GET /api/{i}",
                    "status": 200,
                }
            )
            + b"\n"
            for i in range(rnd.randint(1, 500))
        )
    if kind == "lock":
        return _dumps({"name": "x", "lockfileVersion": 3, "packages": {"": {"version": "1"}}})
    if kind == "array":
        return _dumps(list(range(rnd.randint(0, 1000))))
    if kind == "csv":
        return b"timestamp,tokens\n" + b"".join(b"%d,%d\n" % (i, i * 7) for i in range(100))
    return b"<!doctype html><html><body>404</body></html>\n"


DAMAGES: dict[str, Damage] = {
    "truncate": truncate_anywhere,
    "truncate-line": truncate_inside_line,
    "truncate-utf8": truncate_inside_utf8,
    "flip": flip_bytes,
    "zero-block": zero_block,
    "delete-line": delete_line,
    "duplicate-line": duplicate_line,
    "shuffle": shuffle_lines,
    "cycle": parent_cycle,
    "field-type": change_field_type,
    "field-types": change_many_fields,
    "bom": byte_order_mark,
    "crlf": crlf,
    "utf16": utf16,
    "two": two_damages,
    "gz/xz-cut": compressed_cut,
    "gz/xz-flip": compressed_flip,
    "empty": empty,
    "nuls": nuls,
    "huge-line": huge_line,
    "foreign": foreign,
}
# how often each is drawn: the cheap, varied ones most; huge lines rarely (each is MBs)
WEIGHTS = {
    "field-type": 6,
    "field-types": 3,
    "two": 3,
    "bom": 0.3,
    "crlf": 0.3,
    "utf16": 0.2,
    "truncate": 3,
    "truncate-line": 3,
    "flip": 3,
    "huge-line": 0.15,
    "empty": 0.3,
    "nuls": 0.3,
    "foreign": 0.5,
}


def pick(rnd: random.Random, only: list[str] | None = None) -> str:
    names = only or list(DAMAGES)
    return rnd.choices(names, weights=[WEIGHTS.get(n, 1.0) for n in names])[0]
