"""Inputs for fuzzing the readers: seed records from real files and ways to break them.

Shared by ``tests/core/test_fuzz_readers.py`` (hypothesis, quick) and
``tests/fuzz/fuzz_readers.py`` (long random campaigns). Pure standard library
plus orjson; every function takes a ``random.Random`` so runs are replayable.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import orjson

TESTS = Path(__file__).resolve().parents[1]
DATA = TESTS / "data"
CORPUS = TESTS.parents[1] / "shared" / "corpus"
MAX_RECORDS = 40  # per seed file
MAX_STRING = 3_000  # long strings are cut so fuzz files stay small


def _shrink(value: Any) -> Any:
    if isinstance(value, str):
        return value[:MAX_STRING]
    if isinstance(value, list):
        return [_shrink(v) for v in value[:50]]
    if isinstance(value, dict):
        return {k: _shrink(v) for k, v in value.items()}
    return value


def _records(path: Path) -> tuple[bool, list[Any]]:
    """(is one JSON document, records) of a seed file."""
    data = path.read_bytes()
    if path.suffix == ".json":
        try:
            return True, [_shrink(orjson.loads(data))]
        except orjson.JSONDecodeError:
            return True, []
    out = []
    for raw in data.splitlines():
        try:
            out.append(_shrink(orjson.loads(raw)))
        except orjson.JSONDecodeError:
            continue
        if len(out) >= MAX_RECORDS:
            break
    return False, out


def seed_files() -> list[Path]:
    files = sorted(DATA.glob("*.json*"))
    if CORPUS.is_dir():
        files += sorted(p for p in CORPUS.glob("*/*") if p.suffix in (".json", ".jsonl"))
    return files


_SEEDS: list[tuple[str, bool, list[Any]]] | None = None


def seeds() -> list[tuple[str, bool, list[Any]]]:
    """(file name, is a document, records) for every seed file with records."""
    global _SEEDS
    if _SEEDS is None:
        _SEEDS = []
        for path in seed_files():
            doc, recs = _records(path)
            if recs:
                _SEEDS.append((path.name, doc, recs))
    return _SEEDS


def random_json(rnd: random.Random, depth: int = 0) -> Any:
    kinds = ["null", "bool", "int", "float", "str", "bigint"]
    if depth < 4:
        kinds += ["list", "dict", "dict"]
    kind = rnd.choice(kinds)
    if kind == "null":
        return None
    if kind == "bool":
        return rnd.random() < 0.5
    if kind == "int":
        return rnd.choice([0, 1, -1, 7, 2**31, -(2**40), rnd.randint(-(10**6), 10**6)])
    if kind == "bigint":
        return rnd.choice([2**63 - 1, -(2**63), 2**64 - 1])
    if kind == "float":
        return rnd.choice([0.0, -0.5, 1.5, 1e300, -1e300, 1e-300, rnd.random()])
    if kind == "str":
        return rnd.choice(
            [
                "",
                "x",
                "user",
                "assistant",
                "tool_use",
                "text",
                "message",
                "2025-01-01T00:00:00Z",
                "not a date",
                "\u2028",
                "é中文",
                "<system-reminder>Contents of /a/CLAUDE.md:\nx</system-reminder>",
                "mcp__srv__tool",
                "data: {}\n\n",
                "event: message_start\n",
            ]
        )
    if kind == "list":
        return [random_json(rnd, depth + 1) for _ in range(rnd.randint(0, 3))]
    keys = [
        "type",
        "role",
        "content",
        "text",
        "message",
        "usage",
        "id",
        "timestamp",
        "payload",
        "request",
        "response",
        "body",
        "messages",
        "tools",
        "name",
        "input_tokens",
        "output_tokens",
        "model",
        "parts",
        "info",
        "tokens",
    ]
    return {rnd.choice(keys): random_json(rnd, depth + 1) for _ in range(rnd.randint(0, 4))}


def _containers(value: Any, out: list[Any]) -> list[Any]:
    if isinstance(value, (dict, list)):
        out.append(value)
        for child in value.values() if isinstance(value, dict) else value:
            _containers(child, out)
    return out


def _new_value(rnd: random.Random, old: Any) -> Any:
    op = rnd.randrange(6)
    if op == 0:
        return None
    if op == 1 and isinstance(old, str):
        return old[: rnd.randint(0, len(old))]
    if op == 2:
        return [old]
    if op == 3 and isinstance(old, (dict, list)) and old:
        return rnd.choice(list(old.values()) if isinstance(old, dict) else old)
    if op == 4:
        return str(old)[:50]
    return random_json(rnd)


def mutate(value: Any, rnd: random.Random, ops: int = 3) -> Any:
    """A deep copy of ``value`` with ``ops`` random edits: keys deleted, types changed,
    strings truncated, values wrapped in lists or nulled."""
    value = copy.deepcopy(value)
    for _ in range(ops):
        nodes = _containers(value, [])
        if not nodes:
            return random_json(rnd) if rnd.random() < 0.5 else _new_value(rnd, value)
        node = rnd.choice(nodes)
        if isinstance(node, dict) and node:
            key = rnd.choice(list(node))
            if rnd.random() < 0.3:
                del node[key]
            else:
                node[key] = _new_value(rnd, node[key])
        elif isinstance(node, list) and node:
            i = rnd.randrange(len(node))
            if rnd.random() < 0.2:
                del node[i]
            else:
                node[i] = _new_value(rnd, node[i])
        elif isinstance(node, dict):
            node[rnd.choice(["type", "content", "message"])] = random_json(rnd)
        else:
            node.append(random_json(rnd))
    return value


def dumps_line(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except TypeError:  # ints beyond 64 bits
        import json

        return json.dumps(value).encode()


def write_records(path: Path, records: list[Any], document: bool) -> None:
    if document:
        path.write_bytes(dumps_line(records[0]) if records else b"")
    else:
        path.write_bytes(b"".join(dumps_line(r) + b"\n" for r in records))


def make_case(rnd: random.Random, path: Path) -> str:
    """Write one fuzz file at ``path``; returns a short description of the case."""
    pool = seeds()
    name, doc, recs = rnd.choice(pool)
    kind = rnd.choice(
        ["mutated", "mutated", "mutated", "random", "truncated", "interleaved", "duplicated"]
    )
    if kind == "random":
        records = [random_json(rnd) for _ in range(rnd.randint(1, 8))]
        doc = doc and rnd.random() < 0.5
    else:
        start = rnd.randrange(len(recs))
        records = recs[start : start + rnd.randint(1, 12)] if not doc else list(recs)
        if kind == "mutated":
            records = [
                mutate(r, rnd, rnd.randint(1, 5)) if rnd.random() < 0.6 else r for r in records
            ]
        elif kind == "interleaved":
            _other, other_doc, other = rnd.choice(pool)
            extra = other if not other_doc else [other[0]]
            merged = []
            for i in range(max(len(records), len(extra[:12]))):
                merged += records[i : i + 1] + extra[i : i + 1]
            records, doc = merged, False
        elif kind == "duplicated":
            records = [r for r in records for _ in range(rnd.randint(1, 3))]
            if doc:
                records, doc = records * 2, False
    write_records(path, records, doc)
    if kind == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[: rnd.randint(0, len(data))])
    return f"{kind} from {name} ({len(records)} records)"
