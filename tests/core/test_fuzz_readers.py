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

from ctxviewer.ingest import READERS, Cancelled, LoadError, load  # noqa: E402

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
FORMATS = [None, *(r.name for r in READERS)]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False)
    | st.text(max_size=20) | st.sampled_from(["user", "assistant", "message", "tool_use",
                                              "response_item", "event_msg", "exchange"]),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(
        st.sampled_from(["type", "role", "content", "message", "payload", "request",
                         "response", "body", "messages", "usage", "id", "uuid", "timestamp",
                         "parts", "text", "tokens", "model", "ctxviewer"]), kids, max_size=5),
    max_leaves=20,
)


def _load_every_way(path: Path) -> None:
    for fmt in FORMATS:
        try:
            load(str(path), format=fmt)
        except LoadError:
            pass


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
    path.write_bytes(data[:int(len(data) * cut)])
    _load_every_way(path)


@pytest.mark.parametrize("name", ["codex_tools.jsonl", "qwen_session.jsonl",
                                  "gemini_updates.jsonl"])
def test_cancel_raises_cancelled(name: str) -> None:
    path = Path(__file__).resolve().parents[1] / "data" / name
    with pytest.raises(Cancelled):
        load(str(path), cancelled=lambda: True)
