"""HistoryDecoder: parses repeated history once, and always equals orjson.loads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.report import report_json
from ctxviewer.ingest import load
from ctxviewer.ingest.trace.delta import SENTINEL, TRACE_ARRAYS, HistoryDecoder

ROOT = Path(__file__).resolve().parents[2]

LAYOUTS = {
    "compact": orjson.dumps,
    "python": lambda v: json.dumps(v).encode(),
    "python-utf8": lambda v: json.dumps(v, ensure_ascii=False).encode(),
    "indented": lambda v: json.dumps(v, indent=1).encode().replace(b"\n", b""),
}

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
json_value = st.recursive(
    json_leaf,
    lambda kids: st.one_of(
        st.lists(kids, max_size=3), st.dictionaries(st.text(max_size=6), kids, max_size=3)
    ),
    max_leaves=8,
)
message = st.one_of(
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["user", "assistant"]),
            "content": st.one_of(st.text(max_size=30), st.lists(json_value, max_size=3)),
        }
    ),
    json_value,  # arrays of anything: numbers that prefix each other, strings, nulls
)


def _record(messages: list, extra: dict | None = None) -> dict:
    body = {"model": "m", "messages": messages, "system": "s", "max_tokens": 5}
    return {
        "request": {"url": "/v1/messages", **(extra or {}), "body": body},
        "response": {"status_code": 200, "body": {"content": []}},
    }


def _lines(conversations: list[list], steps: list[tuple[int, int, bool]], dumps) -> list[bytes]:
    """Requests that grow conversations; ``mark`` adds a moving cache marker to the last."""
    out = []
    for conv, upto, mark in steps:
        msgs = [*conversations[conv % len(conversations)][:upto]]
        if mark and msgs and isinstance(msgs[-1], dict):
            msgs[-1] = {**msgs[-1], "cache_control": {"type": "ephemeral"}}
        out.append(dumps(_record(msgs)))
    return out


def _loads(line: bytes):
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return "invalid"


def _decode(decoder: HistoryDecoder, line: bytes):
    try:
        return decoder.decode(line)
    except orjson.JSONDecodeError:
        return "invalid"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    conversations=st.lists(st.lists(message, min_size=1, max_size=8), min_size=1, max_size=3),
    steps=st.lists(
        st.tuples(st.integers(0, 2), st.integers(0, 8), st.booleans()), min_size=1, max_size=12
    ),
    layout=st.sampled_from(sorted(LAYOUTS)),
    damage=st.lists(
        st.tuples(
            st.integers(0, 11), st.integers(0, 10**6), st.sampled_from(["cut", "flip", "dup"])
        ),
        max_size=3,
    ),
)
def test_decode_equals_orjson_loads(conversations, steps, layout, damage):
    lines = _lines(conversations, steps, LAYOUTS[layout])
    for index, where, how in damage:  # truncated, corrupted and repeated lines
        if index < len(lines):
            line = lines[index]
            at = where % max(len(line), 1)
            if how == "cut":
                lines[index] = line[:at]
            elif how == "flip":
                lines[index] = (
                    line[:at] + bytes([line[at] ^ 0x21]) + line[at + 1 :] if line else line
                )
            else:
                lines.insert(index, line)
    decoder = HistoryDecoder(TRACE_ARRAYS)
    for line in lines:
        assert _decode(decoder, line) == _loads(line)


@pytest.mark.parametrize("layout", ["compact", "python", "python-utf8"])
def test_repeated_history_is_reused_not_reparsed(layout):
    dumps = LAYOUTS[layout]
    history = [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": [{"type": "text", "text": f"turn {i} é ✓ " + "x" * 200}],
        }
        for i in range(30)
    ]
    decoder = HistoryDecoder(TRACE_ARRAYS)
    previous = None
    for n in range(1, len(history) + 1):
        line = dumps(_record(history[:n]))
        doc = decoder.decode(line)
        assert doc == orjson.loads(line)
        messages = doc["request"]["body"]["messages"]
        if previous is not None:  # everything the last request had is the same object
            assert all(a is b for a, b in zip(messages, previous, strict=False))
        previous = messages
    assert decoder.reused_bytes > 30 * 200 * 30 // 2 * 0.9


def test_moving_cache_marker_reparses_only_the_changed_message():
    history = [{"role": "user", "content": [{"type": "text", "text": f"m{i}"}]} for i in range(6)]
    decoder = HistoryDecoder(TRACE_ARRAYS)
    marked = [*history[:4], {**history[4], "cache_control": {"type": "ephemeral"}}]
    first = decoder.decode(orjson.dumps(_record(marked)))
    second = decoder.decode(orjson.dumps(_record(history)))
    msgs = second["request"]["body"]["messages"]
    assert msgs == history
    assert all(msgs[i] is first["request"]["body"]["messages"][i] for i in range(4))
    assert msgs[4] is not first["request"]["body"]["messages"][4]  # the marker moved


def test_a_messages_key_before_the_body_is_not_taken_for_the_history():
    """The first ``"messages":[`` belongs to another object: parse whole, stay right."""
    decoder = HistoryDecoder(TRACE_ARRAYS)
    history = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    lines = [orjson.dumps(_record(history, {"meta": {"messages": history[:n]}})) for n in (1, 2)]
    for line in lines:
        doc = decoder.decode(line)
        assert doc == orjson.loads(line)
        assert SENTINEL not in orjson.dumps(doc).decode()


def test_a_sentinel_in_the_input_is_only_data():
    decoder = HistoryDecoder(TRACE_ARRAYS)
    lines = [orjson.dumps(_record([SENTINEL, "x"][:n])) for n in (1, 2, 2)]
    assert [decoder.decode(line) for line in lines] == [orjson.loads(line) for line in lines]


def test_trace_reports_the_same_whatever_the_json_layout(tmp_path):
    """The same trace written compact (reused) and indented (never reused) reports the same."""
    big = tmp_path / "compact.jsonl"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "make_big_trace.py"),
            str(big),
            "--requests",
            "40",
            "--peak-tokens",
            "30000",
        ],
        check=True,
        capture_output=True,
    )
    indented = tmp_path / "indented.jsonl"
    with open(big, "rb") as src, open(indented, "wb") as dst:
        for line in src:  # Python's layout with newlines removed: no reuse is possible
            dst.write(json.dumps(orjson.loads(line), indent=1).replace("\n", "").encode() + b"\n")
    reports = []
    for path in (big, indented):
        report = report_json(Analysis(load(str(path))))
        report["source"].pop("path")
        reports.append(report)
    assert reports[0]["requests"] and len(reports[0]["requests"]) >= 40
    assert reports[0] == reports[1]


TOOLS = [
    {"name": f"tool{i}", "description": "d" * 40, "input_schema": {"type": "object"}}
    for i in range(5)
]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    conversations=st.lists(st.lists(message, min_size=1, max_size=6), min_size=1, max_size=2),
    steps=st.lists(
        st.tuples(
            st.integers(0, 1),
            st.integers(0, 6),
            st.booleans(),
            st.sampled_from(["same", "other", "none", "nested"]),
            st.sampled_from(["", "ok", "a longer answer"]),
            st.booleans(),
        ),
        min_size=1,
        max_size=10,
    ),
)
def test_repeated_tools_decode_equals_orjson_loads(conversations, steps):
    """The tool list, repeated whole, is reused; changed, missing, or also named inside
    a message (the marker elsewhere), followed by more or fewer bytes than last time, or
    before the messages, the line still decodes as orjson.loads does."""
    from ctxviewer.ingest.trace.delta import TRACE_WHOLE

    decoder = HistoryDecoder(TRACE_ARRAYS, TRACE_WHOLE)
    for conv, upto, mark, tools, answer, tools_first in steps:
        msgs = [*conversations[conv % len(conversations)][:upto]]
        if mark and msgs and isinstance(msgs[-1], dict):
            msgs[-1] = {**msgs[-1], "cache_control": {"type": "ephemeral"}}
        if tools == "nested":
            msgs = [{"role": "user", "content": [{"tools": TOOLS}]}, *msgs]
        body = {"model": "m", "messages": msgs, "system": "s"}
        if tools in ("same", "nested"):
            body["tools"] = TOOLS
        elif tools == "other":
            body["tools"] = TOOLS[:3]
        if tools_first and "tools" in body:
            body = {"tools": body.pop("tools"), **body}
        line = orjson.dumps(
            {
                "request": {"url": "/v1/messages", "body": body},
                "response": {"status_code": 200, "body": {"content": [answer]}},
            }
        )
        assert decoder.decode(line) == orjson.loads(line)


def test_a_repeated_tool_list_is_one_object_parsed_once():
    from ctxviewer.ingest.trace.delta import TRACE_WHOLE

    decoder = HistoryDecoder(TRACE_ARRAYS, TRACE_WHOLE)
    lines = [
        orjson.dumps(
            {
                "request": {
                    "body": {
                        "model": "m",
                        "tools": TOOLS,
                        "messages": [{"role": "user", "content": f"turn {i}"}],
                    }
                }
            }
        )
        for i in range(3)
    ]
    docs = [decoder.decode(line) for line in lines]
    assert [d == orjson.loads(line) for d, line in zip(docs, lines, strict=True)] == [True] * 3
    first = docs[0]["request"]["body"]["tools"]
    assert all(d["request"]["body"]["tools"] is first for d in docs)
    assert decoder.reused_bytes >= 2 * (len(orjson.dumps(TOOLS)) - 40)  # less the sentinel
