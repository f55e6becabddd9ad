"""Claude Code as captured from the real agent (tests/data/agents/claude-code-<version>/):
2.1.332's window from its profile, its deferred tools outside the total, its transcripts
that record the prompt of each call; 2.1.197's TUI, which counts anew for each /context and
writes its first reply before the prompt it answers. Every row of its /context against
ctxviewer: test_conformance.py."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

from ctxviewer.analysis.agents.claude_counts import agent_counts
from ctxviewer.analysis.agents.context_output import parse
from ctxviewer.analysis.agents.sessions import default_session, split
from ctxviewer.analysis.analysis import Analysis
from ctxviewer.ingest import load
from ctxviewer.model import Session

AGENTS = Path(__file__).resolve().parents[1] / "data" / "agents"
CC332 = AGENTS / "claude-code-2.1.332"
CC197 = AGENTS / "claude-code-2.1.197"


def _session(path: Path) -> Session:
    parts = split(load(str(path)))
    return parts[default_session(parts)]


def test_claude_code_2_1_332_has_its_1m_window_without_the_beta() -> None:
    """claude-opus-5-5 has 1M of its own in 2.1.332: no context-1m beta is sent, in print
    mode or the TUI, and the window comes from the agent profile."""
    for key in ("print", "tui"):
        a = Analysis(_session(CC332 / key / "recording.rec.jsonl.xz"))
        assert not any(r.window_hint for r in a.session.requests)
        assert (a.window, a.window_source) == (1_000_000, "agent profile")
        assert a.thresholds.auto == a.window - 33_000


def test_claude_code_2_1_332_deferred_tools_are_outside_its_total() -> None:
    theirs = parse((CC332 / "print" / "context.txt").read_text("utf-8"))
    a = Analysis(_session(CC332 / "print" / "recording.rec.jsonl.xz"))
    b = a.breakdown(a.resolve_index("last"))
    outside = {c.name: c for c in b.outside}
    assert set(outside) == {"builtin_tools_deferred", "mcp_tools_deferred"}
    for name, c in outside.items():
        assert theirs.categories[name].matches(c.tokens) and c.basis == "count_tokens"
    assert sum(c.tokens for c in b.categories) == b.window  # the total leaves them out
    assert b.used == b.total


def test_a_claude_code_2_1_332_model_of_200k_shows_no_buffer(tmp_path: Path) -> None:
    """The buffer row is there for a model with a 1M window of its own only."""
    raw = lzma.decompress((CC332 / "print" / "recording.rec.jsonl.xz").read_bytes())
    path = tmp_path / "sonnet45.rec.jsonl"
    path.write_bytes(raw.replace(b'"claude-opus-5-5"', b'"claude-sonnet-4-5"'))
    a = Analysis(_session(path))
    assert (a.window, a.thresholds.auto) == (200_000, 167_000)
    b = a.breakdown(a.resolve_index("last"))
    assert b.category("autocompact_buffer").tokens == 0
    assert b.category("free_space").tokens == b.window - b.used


def test_claude_code_2_1_332_transcripts_hold_its_prompt() -> None:
    """api-request-shape, api-request and the rendered attachments: the transcript's
    requests carry the system prompt, the tools, the output cap and the CLAUDE.md files
    (their tokens against the agent's: test_conformance.py)."""
    for key, output in (("print", "context.txt"), ("tui", "context_all.txt")):
        s = _session(CC332 / key / "transcript.jsonl.xz")
        assert not s.skipped, s.skipped[:3]
        last = s.requests[-1]
        assert last.system and last.tools and last.max_tokens == 128_000
        assert not any(t.text.startswith("x-anthropic-billing-header") for t in last.system)
        b = Analysis(s).breakdown(len(s.requests) - 1)
        assert b.category("unrecorded_overhead") is None
        theirs = parse((CC332 / key / output).read_text("utf-8"))
        files = {i.name for i in b.category("memory_files").items}
        assert len(files) == len(theirs.items["memory_files"]) == 2


def _count_calls(path: Path) -> int:
    records = [json.loads(x) for x in lzma.decompress(path.read_bytes()).splitlines()]
    return sum(
        1 for r in records if r.get("type") == "exchange" and r["path"].endswith("/count_tokens")
    )


def test_claude_code_2_1_197_tui_counts_each_part_once_for_two_context_commands() -> None:
    """/context then /context all in 2.1.197's TUI: it counts every part anew for each (32
    count_tokens calls after the last turn, 16 each); they are one request's counts, not
    twice its overhead (which scaled every category by 0.54 and left Messages at 1)."""
    path = CC197 / "tui" / "recording.rec.jsonl.xz"
    assert _count_calls(path) == 32
    s = _session(path)
    last = max(i for i, r in enumerate(s.requests) if r.role == "main")
    counts = agent_counts(s, last, tool_overhead=500)
    assert counts is not None and counts.calls == 15  # 16 calls: the Skill tool's twice
    theirs = parse((CC197 / "tui" / "context_tui.txt").read_text("utf-8"))
    b = Analysis(s).breakdown(last)
    assert not any("scaled" in n for n in b.notes)
    for name in ("system_prompt", "memory_files", "skills", "messages"):
        assert theirs.categories[name].matches(b.category(name).tokens), name


def test_claude_code_2_1_197_tui_transcript_holds_the_prompt_written_after_its_reply() -> None:
    """The TUI writes its first reply's records before the prompt and the attachments
    (agent and skill listings) they answer: every request still holds them."""
    path = CC197 / "tui" / "transcript.jsonl.xz"
    lines = [json.loads(x) for x in lzma.decompress(path.read_bytes()).splitlines()]
    kinds = [r.get("type") for r in lines]
    assert kinds.index("assistant") < kinds.index("user")  # as the TUI wrote it
    s = load(str(path))
    assert len(s.requests) == 4
    for r in s.requests:
        texts = [m.text for m in r.messages]
        assert texts[0].startswith("Please look at hello.py")
        assert any(t.startswith("The following skills are available") for t in texts)


def test_a_reply_whose_prompt_never_comes_is_kept(tmp_path: Path) -> None:
    """A transcript cut after the TUI's first reply: the request is held for its prompt,
    then given as it is at the end of the file."""
    raw = lzma.decompress((CC197 / "tui" / "transcript.jsonl.xz").read_bytes()).splitlines()
    first_user = next(i for i, x in enumerate(raw) if json.loads(x).get("type") == "user")
    path = tmp_path / "cut.jsonl"
    path.write_bytes(b"\n".join(raw[:first_user]) + b"\n")
    s = load(str(path))
    assert len(s.requests) == 1 and s.requests[0].messages == ()
    whole = load(str(CC197 / "tui" / "transcript.jsonl.xz"))
    assert s.requests[0].usage == whole.requests[0].usage
