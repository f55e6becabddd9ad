"""Property-based robustness of every reader: no input makes ``load`` raise.

Files are built from real records (tests/data, and ../shared/corpus when
present) that are mutated, replaced by random JSON, truncated, interleaved
with another format or duplicated (``tests/fuzz/mutations.py``); each is
loaded with detection and with every reader forced. Only ``LoadError`` (and
``Cancelled`` when asked for) may come out. Longer campaigns:
``python tests/fuzz/fuzz_readers.py --seconds 300``.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))

from mutations import dumps_line, make_case  # noqa: E402

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.report import report_json  # noqa: E402
from ctxviewer.ingest import READERS, Cancelled, LoadError, load  # noqa: E402
from ctxviewer.ingest.loader import READER_ERROR  # noqa: E402

SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
FORMATS = [None, *(r.name for r in READERS)]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=20)
    | st.sampled_from(
        ["user", "assistant", "message", "tool_use", "response_item", "event_msg", "exchange"]
    ),
    lambda kids: (
        st.lists(kids, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "role",
                    "content",
                    "message",
                    "payload",
                    "request",
                    "response",
                    "body",
                    "messages",
                    "usage",
                    "id",
                    "uuid",
                    "timestamp",
                    "parts",
                    "text",
                    "tokens",
                    "model",
                    "ctxviewer",
                ]
            ),
            kids,
            max_size=5,
        )
    ),
    max_leaves=20,
)


def _load_every_way(path: Path) -> None:
    """Load with detection and with every reader forced: only ``LoadError`` may come
    out, no record may trip a reader (``load`` would skip it with a "reader error"),
    and the analysis of what loaded runs."""
    for fmt in FORMATS:
        try:
            session = load(str(path), format=fmt)
        except LoadError:
            continue
        assert not [s.reason for s in session.skipped if s.reason.startswith(READER_ERROR)]
        report_json(Analysis(session))


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_mutated_real_records_never_crash(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "case.jsonl"
    make_case(random.Random(seed), path)
    _load_every_way(path)


@SETTINGS
@given(records=st.lists(json_values, min_size=1, max_size=6), as_doc=st.booleans())
def test_random_json_never_crashes(tmp_path: Path, records: list, as_doc: bool) -> None:
    path = tmp_path / "case.json"
    if as_doc:
        path.write_bytes(dumps_line(records))
    else:
        path.write_bytes(b"".join(dumps_line(r) + b"\n" for r in records))
    _load_every_way(path)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), cut=st.floats(0, 1))
def test_truncated_files_never_crash(tmp_path: Path, seed: int, cut: float) -> None:
    path = tmp_path / "case.jsonl"
    make_case(random.Random(seed), path)
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * cut)])
    _load_every_way(path)


@pytest.mark.parametrize(
    "name", ["codex_tools.jsonl", "qwen_session.jsonl", "gemini_updates.jsonl"]
)
def test_cancel_raises_cancelled(name: str) -> None:
    path = Path(__file__).resolve().parents[1] / "data" / name
    with pytest.raises(Cancelled):
        load(str(path), cancelled=lambda: True)


# Found by tests/fuzz/fuzz_readers.py: JSON types where text belongs.
FOUND = {
    "codex type is a list": (
        "codex",
        ['{"timestamp": "2025-12-10T11:00:00Z", "type": ["session_meta"], "payload": {"id": "x"}}'],
    ),
    "codex item type is a list": (
        "codex",
        [
            '{"timestamp": "2025-12-10T11:00:00Z", "type": "response_item", '
            '"payload": {"type": ["message"], "role": "user"}}'
        ],
    ),
    "codex call id is a list": (
        "codex",
        [
            '{"timestamp": "2025-12-10T11:00:00Z", "type": "response_item", "payload": '
            '{"type": "message", "role": "user", "id": ["m"], "content": []}}'
        ],
    ),
    "qwen model is a list": (
        None,
        [
            '{"uuid": "a", "parentUuid": null, "sessionId": "s", "timestamp": "2025-11-20T0'
            '8:00:00Z", "type": "assistant", "model": ["qwen3-coder-plus"], "message": '
            '{"role": "model", "parts": [{"text": "hi"}]}, "usageMetadata": '
            '{"promptTokenCount": 10, "candidatesTokenCount": 1, "totalTokenCount": 11}}'
        ],
    ),
    "gemini tool calls is true": (
        "gemini-cli",
        [
            '{"sessionId": "s", "messages": [{"id": "g1", "timestamp": "2026-04-23T1'
            '2:01:00Z", "type": "gemini", "content": "x", "toolCalls": true, '
            '"tokens": {"input": 5, "output": 1, "total": 6}}]}'
        ],
    ),
    "gemini message type is a list": (
        "gemini-cli",
        ['{"id": "g1", "timestamp": "2026-04-23T12:01:00Z", "type": ["gemini"], "content": "x"}'],
    ),
    "openai chat messages is a number": (
        "claude-trace",
        [
            '{"request": {"url": "https://api.deepseek.com/chat/completions", '
            '"body": {"model": "m", "messages": 0.5, "tools": []}}, '
            '"response": {"status_code": 200, "body": {"choices": []}}}'
        ],
    ),
    "claude code message id is a list": (
        None,
        [
            '{"uuid": "u1", "parentUuid": null, "sessionId": "s", "type": "assistant", '
            '"timestamp": ["2025-01-01"], "message": {"id": ["m"], "role": "assistant", '
            '"model": "claude-sonnet-4-5", "content": [{"type": "text", "text": "hi"}], '
            '"usage": {"input_tokens": 10, "output_tokens": 1}}}'
        ],
    ),
}


@pytest.mark.parametrize("case", sorted(FOUND))
def test_found_by_fuzzing(tmp_path: Path, case: str) -> None:
    fmt, lines = FOUND[case]
    path = tmp_path / "case.jsonl"
    path.write_text("\n".join(lines) + "\n")
    try:
        session = load(str(path), format=fmt)
    except LoadError:
        pytest.fail(f"{case}: the file is a session log of its format")
    assert not [s.reason for s in session.skipped if s.reason.startswith(READER_ERROR)]
    report_json(Analysis(session))
    _load_every_way(path)


def test_damaged_streams_lose_their_response_not_the_request() -> None:
    from ctxviewer.ingest.api.sse import reassemble

    huge = (
        'data: {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": '
        '{"tool_calls": [{"index": 100000000000, "function": {"name": "a"}}]}}]}\n\n'
    )
    calls = reassemble(huge)["choices"][0]["message"]["tool_calls"]  # no 10^11 list
    assert [c["function"]["name"] for c in calls] == ["a"]
    assert (
        reassemble(
            'data: {"object": "chat.completion.chunk", "choices": '
            '[{"index": [1], "delta": {"content": 5}}]}\n\n'
        )
        is None
    )
    assert (
        reassemble(
            'data: {"type": "message_start", "message": {"usage": {}}}\n\n'
            'data: {"type": "content_block_delta", "index": {"a": 1}, '
            '"delta": {"type": "text_delta", "text": 3}}\n\n'
        )
        is None
    )
