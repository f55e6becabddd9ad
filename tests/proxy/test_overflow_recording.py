"""Context overflows recorded by the proxy: recognised in both of Anthropic's wordings,
their numbers read, drawn at the size the API counted, and what the agent does next."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import pytest
from proxy_fakes import API_KEY

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.timeline_view import view as timeline_view
from ctxviewer.cli import main
from ctxviewer.ingest import load
from ctxviewer.model import CONTEXT_OVERFLOW, Overflow
from ctxviewer.proxy import ProxyThread

# (x-fake-mode, the prompt size the fake's error states)
CALLS = [("", 0), ("", 0), ("overflow", 195_000), ("overflow", 213_462), ("", 0)]


@pytest.fixture
def recording(make_proxy: Callable[..., ProxyThread]) -> Path:
    proxy = make_proxy()
    with anthropic.Anthropic(base_url=proxy.url, api_key=API_KEY, max_retries=0) as c:
        for n, (mode, size) in enumerate(CALLS):
            try:
                c.messages.create(
                    model="claude-test-1",
                    max_tokens=8000,
                    messages=[{"role": "user", "content": f"call {n}"}],
                    extra_headers={"x-fake-mode": mode, "x-fake-input": str(size)},
                )
            except anthropic.BadRequestError as e:
                assert mode == "overflow" and e.status_code == 400
    assert proxy.wait_for_records(len(CALLS), 10)
    return Path(proxy.out)


def test_both_anthropic_wordings_with_their_numbers(
    recording: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = load(str(recording))
    said = {r.index: e.overflow for r in s.requests for e in r.events if e.kind == CONTEXT_OVERFLOW}
    assert said == {2: Overflow(195_000, 8_000, 200_000), 3: Overflow(213_462, None, 200_000)}

    assert main(["report", str(recording), "--json"]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    events = {e["request"]: e for e in out["events"] if e["kind"] == CONTEXT_OVERFLOW}
    assert (events[2]["input_tokens"], events[2]["max_tokens"], events[2]["limit"]) == (
        195_000,
        8_000,
        200_000,
    )
    assert events[2]["retry_max_tokens"] == 4_000  # 200,000 - 195,000 - 1,000
    assert events[2]["next"] == "the agent retries with max_tokens 4,000"
    assert events[3]["retry_max_tokens"] is None
    assert "only a compaction" in events[3]["next"]
    requests = out["requests"]
    assert [r["api_prompt_tokens"] for r in requests[2:4]] == [195_000, 213_462]
    t = out["thresholds"]  # judged on the size the API counted, not the tiny estimate
    assert [r["tier"] for r in requests[2:4]] == [
        "hard" if n >= t["hard"] else "auto" if n >= t["auto"] else "warn"
        for n in (195_000, 213_462)
    ]
    assert requests[2]["tier"] != "safe"

    assert main(["report", str(recording)]) == 0
    text = capsys.readouterr().out
    assert (
        "the API counted 195,000 + 8,000 > 200,000: the agent retries with max_tokens 4,000" in text
    )


def test_the_timeline_marks_each_overflow_with_its_numbers(recording: Path) -> None:
    a = Analysis(load(str(recording)))
    v = timeline_view.from_analysis(a)
    marks = {m.index: m.label() for m in v.marks if m.kind == "overflow"}
    assert marks == {
        2: "context overflow\n195,000 + 8,000 > 200,000\nretry with max_tokens 4,000",
        3: "context overflow\n213,462 > 200,000\nneeds a compaction",
    }
    main_y = dict(zip(v.data.main.index.tolist(), v.data.main.y.tolist(), strict=True))
    assert (main_y[2], main_y[3]) == (195_000, 213_462)  # drawn where the API counted them
