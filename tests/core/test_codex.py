"""Codex CLI rollouts: hand-made fixtures for each record kind, then the real corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxviewer.ingest import Head, detect, load, read_head
from ctxviewer.ingest.codex.rollout import READER
from ctxviewer.model import (
    COMPACT_BOUNDARY,
    COMPACTION_SUMMARY,
    CONTEXT_OVERFLOW,
    IMAGE,
    MEMORY,
    THINKING,
    TOOL_RESULT,
    TOOL_USE,
    Request,
    Skipped,
)

DATA = Path(__file__).parents[1] / "data"
CORPUS = Path(__file__).parents[2].parent / "shared" / "corpus"


def _load(name: str):
    return load(str(DATA / name))


@pytest.mark.parametrize(
    "name",
    ["codex_tools.jsonl", "codex_compaction.jsonl", "codex_empty.jsonl", "codex_legacy.jsonl"],
)
def test_fixtures_are_detected_as_codex(name: str) -> None:
    assert detect(read_head(str(DATA / name))).name == "codex"


def test_sniff_rejects_other_formats() -> None:
    claude = {
        "type": "user",
        "sessionId": "s",
        "uuid": "u",
        "message": {"role": "user", "content": "hi"},
    }
    gemini = {"sessionId": "s", "projectHash": "h", "startTime": "t"}
    assert not READER.sniff(Head(path="x", text="{}", records=[claude]))
    assert not READER.sniff(Head(path="x", text="{}", records=[gemini]))


def test_empty_session_has_no_requests() -> None:
    session = _load("codex_empty.jsonl")
    assert session.format == "codex"
    assert session.requests == [] and session.skipped == []


def test_one_request_per_new_token_count() -> None:
    session = _load("codex_tools.jsonl")
    # 5 token_count events: one carries rate limits only, one repeats the previous call
    assert [r.line for r in session.requests] == [8, 14, 20]
    first = session.requests[0].usage
    assert (first.input_tokens, first.cache_read_input_tokens) == (5000, 0)
    assert (first.output_tokens, first.reasoning_tokens) == (300, 200)
    second = session.requests[1].usage
    assert (second.input_tokens, second.cache_read_input_tokens) == (608, 4992)
    assert session.requests[1].api_prompt_tokens == 5600
    assert all(r.api == "codex" and not r.complete for r in session.requests)
    assert session.requests[0].model == "gpt-5"


def test_context_is_the_items_before_the_call_in_0_39_order() -> None:
    """Codex 0.39 writes token_count before the call's own items."""
    req0, req1, req2 = _load("codex_tools.jsonl").requests
    assert [m.role for m in req0.messages] == ["user", "user"]
    assert [b.kind for b in req0.response.blocks] == [THINKING, "text", TOOL_USE]
    assert [m.role for m in req1.messages] == ["user", "user", "assistant", "tool"]
    assert req2.response.text == "Added c.py."


def test_context_excludes_the_calls_output_in_later_order() -> None:
    """Later versions write the call's items first, then token_count."""
    req0, req1 = _load("codex_compaction.jsonl").requests[:2]
    assert req0.messages[-1].text == "Fix the bug in foo.py"
    assert [b.name for b in req0.response.blocks] == [None, "shell_command"]
    assert req1.messages[-1].role == "tool"
    assert req1.response.text == "Fixed."


def test_blocks_for_images_tool_calls_and_results() -> None:
    req = _load("codex_tools.jsonl").requests[2]
    blocks = [b for m in req.messages for b in m.blocks]
    image = next(b for b in blocks if b.kind == IMAGE)
    assert image.text == "" and image.fixed_tokens == 1600
    calls = [b for b in blocks if b.kind == TOOL_USE]
    assert calls[0].name == "shell" and calls[0].text == '{"command":["bash","-lc","ls"]}'
    assert calls[0].ref == "call_ls"
    assert calls[1].name == "apply_patch" and calls[1].text.startswith("*** Begin Patch")
    results = [b for b in blocks if b.kind == TOOL_RESULT]
    assert [b.ref for b in results] == ["call_ls", "call_patch"]


def test_session_instructions_are_memory_unless_sent_as_a_message() -> None:
    old = _load("codex_tools.jsonl").requests[0]
    assert [(b.tag, b.name, b.text) for b in old.system] == [
        (MEMORY, "AGENTS.md", "Always answer in English.")
    ]
    new = _load("codex_compaction.jsonl").requests[0]
    assert all(b.tag != MEMORY for b in new.system)
    memory = [b for m in new.messages for b in m.blocks if b.tag == MEMORY]
    assert [b.name for b in memory] == ["/repo/AGENTS.md"]


def test_base_instructions_and_dynamic_tools_are_kept() -> None:
    req = _load("codex_compaction.jsonl").requests[0]
    assert req.system[0].text.startswith("You are Codex")
    assert [t.name for t in req.tools] == ["lookup_ticket"]
    assert req.window_hint == 258400
    assert any("recorded base instructions" in n for n in req.notes)
    assert any("12,000" in n for n in req.notes)
    assert not req.complete


def test_compaction_with_replacement_history() -> None:
    session = _load("codex_compaction.jsonl")
    req = session.requests[2]
    assert [e.kind for e in req.events] == [CONTEXT_OVERFLOW, COMPACT_BOUNDARY]
    assert req.events[1].pre_tokens == 9400
    texts = [m.text for m in req.messages]
    assert texts[1:] == ["Fix the bug in foo.py", req.messages[2].text, "Now add a test"]
    assert COMPACTION_SUMMARY in req.messages[2].tags
    assert all(m.role == "user" for m in req.messages)


def test_compaction_without_replacement_history_is_rebuilt() -> None:
    req = _load("codex_compaction.jsonl").requests[3]
    assert [e.kind for e in req.events] == [COMPACT_BOUNDARY]
    summaries = [m for m in req.messages if COMPACTION_SUMMARY in m.tags]
    assert [m.text for m in summaries] == ["Fixed foo.py and added a test."]
    assert req.messages[-1].text == "Continue"
    assert "Now add a test" in [m.text for m in req.messages]


def test_unknown_records_and_truncated_line_are_skipped() -> None:
    session = _load("codex_tools.jsonl")
    reasons = [s.reason for s in session.skipped]
    assert len(reasons) == 3
    assert "unknown response_item type 'future_item'" in reasons
    assert "unknown record type 'mystery'" in reasons
    assert reasons[-1] == "truncated last line"


def test_legacy_rollout_without_envelope() -> None:
    session = _load("codex_legacy.jsonl")
    assert len(session.requests) == 1
    req = session.requests[0]
    assert req.usage is None
    assert [m.role for m in req.messages] == ["user", "assistant"]
    assert any("no token counts" in n for n in req.notes)


def test_parser_holds_a_call_until_its_items_end() -> None:
    """Live tail: feeding line by line; finish() releases what is held back."""
    parser = READER.parser()
    lines = (DATA / "codex_tools.jsonl").read_text().splitlines()[:11]
    items = [i for n, text in enumerate(lines, 1) for i in parser.feed(n, json.loads(text))]
    assert not any(isinstance(i, Request) for i in items)
    held = list(parser.finish())
    assert len(held) == 1 and isinstance(held[0], Request)
    assert held[0].response is not None and held[0].response.blocks[-1].kind == TOOL_USE
    assert list(parser.feed(99, "junk")) == [Skipped(99, "not a JSON object")]


# -- real rollouts -----------------------------------------------------------------------


def _corpus_files() -> list[Path]:
    if not (CORPUS / "codex").is_dir():
        return []
    return sorted((CORPUS / "codex").glob("*.jsonl"))


def _expected(path: Path) -> tuple[list[int], int | None]:
    """Prompt size per distinct token_count (read independently of the reader)."""
    prompts: list[int] = []
    window = None
    previous = None
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        payload = rec.get("payload") or {}
        if rec.get("type") != "event_msg" or payload.get("type") != "token_count":
            continue
        info = payload.get("info")
        if not info:
            continue
        if info.get("total_token_usage") == previous:
            continue
        previous = info.get("total_token_usage")
        prompts.append(info["last_token_usage"]["input_tokens"])
        window = info.get("model_context_window") or window
    return prompts, window


@pytest.mark.corpus
@pytest.mark.skipif(not _corpus_files(), reason=f"real-world corpus not found at {CORPUS}")
@pytest.mark.parametrize("path", _corpus_files(), ids=lambda p: p.name[:40])
def test_corpus_rollouts_load_with_their_token_counts(path: Path) -> None:
    session = load(str(path))
    prompts, window = _expected(path)
    assert session.format == "codex"
    assert session.skipped == []
    assert [r.api_prompt_tokens for r in session.requests] == prompts
    assert session.window_hint == window
    assert all(r.model for r in session.requests)
    assert all(r.messages and r.response is not None for r in session.requests)


def test_subagent_rollout_and_early_token_count_layout() -> None:
    parser = READER.parser()
    records = [
        {
            "timestamp": "t0",
            "type": "session_meta",
            "payload": {"id": "x", "source": {"subagent": "review"}, "instructions": None},
        },
        {
            "timestamp": "t1",
            "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": "review this"},
        },
        {
            "timestamp": "t2",
            "type": "event_msg",
            "payload": {
                "type": "token_count",
                "input_tokens": 900,
                "cached_input_tokens": 100,
                "output_tokens": 7,
            },
        },
    ]
    items = [i for n, r in enumerate(records, 1) for i in parser.feed(n, r)]
    items += list(parser.finish())
    (req,) = [i for i in items if isinstance(i, Request)]
    assert req.role == "subagent" and req.sidechain
    assert (req.usage.input_tokens, req.usage.cache_read_input_tokens) == (800, 100)
    assert req.messages[0].text == "review this"


def test_merged_prefix_equals_merge_from_scratch() -> None:
    """The reader merges only what each call adds to the last one's items (time in n, not
    n²): the same messages and flags as merging every call's items anew."""
    import random

    from ctxviewer.ingest.api.anthropic import Interner
    from ctxviewer.ingest.codex.items import merge
    from ctxviewer.ingest.codex.rollout import _flags, _MergedPrefix
    from ctxviewer.model import COMPACTION_SUMMARY, THINKING, Block, Message

    rng = random.Random(7)
    intern = Interner()
    prefix = _MergedPrefix()
    entries: list = []
    for step in range(400):
        r = rng.random()
        if r < 0.03:  # a compaction: a new list of entries
            entries = [e for e in entries if not e[0]][:3]
        kind = rng.choice(["text", "text", THINKING, "summary"])
        block = (
            Block(THINKING, "hm")
            if kind == THINKING
            else Block("text", "", tag=COMPACTION_SUMMARY)
            if kind == "summary" and rng.random() < 0.2
            else Block("text", f"t{step}")
        )
        output = rng.random() < 0.5
        entries = entries + [(output, Message("assistant" if output else "user", (block,)))]
        cut = len(entries) - rng.choice([0, 0, 1])
        prompt = entries[: max(cut, 0)]
        got, thinking, encrypted = prefix.messages(prompt, intern)
        assert got == tuple(intern(m) for m in merge(prompt))
        assert (thinking, encrypted) == _flags(prompt)
