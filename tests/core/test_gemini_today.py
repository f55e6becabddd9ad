"""Gemini CLI 0.61.0 as captured from the real agent (tests/data/agents/gemini-cli-0.61.0):
its chat file, and its traffic recorded through ``ctxviewer proxy`` (``proxy``; ``direct``
talked to the fake): window 1,048,576 (tokenLimit), compression at 50% of it, the router's
calls as side calls. Its ``-o json`` numbers and what was sent, row by row:
test_conformance.py."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.ingest import load
from ctxviewer.jsonish import js_dumps
from ctxviewer.model import AUXILIARY, MAIN

GEMINI = Path(__file__).parents[1] / "data" / "agents" / "gemini-cli-0.61.0"
TOKEN_LIMIT = 1_048_576  # core/tokenLimits.ts DEFAULT_TOKEN_LIMIT (0.61.0 bundle)
THRESHOLD = 0.5  # DEFAULT_COMPRESSION_TOKEN_THRESHOLD


@pytest.mark.parametrize(
    "log", ["direct/chat.jsonl.xz", "proxy/chat.jsonl.xz", "proxy/recording.rec.jsonl.xz"]
)
def test_window_and_threshold(log: str) -> None:
    a = Analysis(load(str(GEMINI / log)))
    assert a.identity.profile.id == "gemini-cli"
    assert a.window == TOKEN_LIMIT
    assert a.thresholds.auto == round(THRESHOLD * TOKEN_LIMIT) == 524_288
    assert "not in Gemini CLI" in a.window_info.detail  # gemini-3.8-flash: the default


def test_the_recording_is_gemini_cli_and_matches_its_stats() -> None:
    path = GEMINI / "proxy" / "recording.rec.jsonl.xz"
    records = [json.loads(x) for x in lzma.decompress(path.read_bytes()).splitlines()]
    sent = [r for r in records if r.get("type") == "exchange"]
    a = Analysis(load(str(path)))
    s = a.session
    assert a.identity.label == "Gemini CLI 0.61.0"
    assert {r["api"] for r in sent} == {"gemini"}
    stats = json.loads((GEMINI / "proxy" / "turn2.json").read_text())["stats"]["models"]
    roles = {model: next(iter(m["roles"])) for model, m in stats.items()}
    assert [r.role for r in s.requests] == [
        AUXILIARY if roles[r.model] == "utility_router" else MAIN for r in s.requests
    ]
    # turn 2's -o json: one call of each model that turn, the last of each
    for model, m in stats.items():
        last = [r for r in s.requests if r.model == model][-1]
        assert last.usage is not None and last.usage.prompt_tokens == m["tokens"]["prompt"]
    est = a.estimator
    for i, r in enumerate(sent):
        if s.requests[i].role != MAIN:
            continue
        body = r["request"]["body"]
        b = a.breakdown(i)
        system = est.count(body["systemInstruction"]["parts"][0]["text"])
        tools = sum(
            est.count(js_dumps(d)) for t in body["tools"] for d in t["functionDeclarations"]
        )
        assert abs(b.category("system_prompt").tokens - system) <= 0.05 * system
        assert abs(b.category("builtin_tools").tokens - tools) <= 0.05 * tools
        assert b.category("memory_files").tokens > 0  # GEMINI.md in its <session_context>


def test_the_chat_file_and_the_recording_agree() -> None:
    chat = load(str(GEMINI / "proxy" / "chat.jsonl.xz"))
    rec = load(str(GEMINI / "proxy" / "recording.rec.jsonl.xz"))
    main = [r.usage.prompt_tokens for r in rec.requests if r.role == MAIN and r.usage]
    assert [r.usage.prompt_tokens for r in chat.requests if r.usage][: len(main)] == main


def test_a_resumed_session_is_no_compaction(tmp_path: Path) -> None:
    """``-r latest``: Gemini CLI 0.61 writes the bare session context as the history, then
    the history it resumed; what the first dropped comes back, so nothing was compacted.
    Without the second, the history stays replaced: a compaction."""
    for case in ("direct", "proxy"):
        a = Analysis(load(str(GEMINI / case / "chat.jsonl.xz")))
        assert not a.compactions.observed
        assert [r.usage.prompt_tokens for r in a.session.requests if r.usage][1] > 12_000
    lines = lzma.decompress((GEMINI / "direct" / "chat.jsonl.xz").read_bytes()).splitlines()
    sets = [i for i, x in enumerate(lines) if b'"$set"' in x and b'"messages"' in x]
    assert len(sets) == 3  # the new session's, the bare context on resume, the resumed history
    path = tmp_path / "chat.jsonl"
    path.write_bytes(b"\n".join(x for i, x in enumerate(lines) if i != sets[-1]) + b"\n")
    cut = Analysis(load(str(path)))
    assert list(cut.compactions.observed) == [1]
