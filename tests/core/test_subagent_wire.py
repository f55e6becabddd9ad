"""A Claude Code 2.0.55 sub-agent's calls as its transcript has them and as they were sent.

The real 2.0.55 against a fake server, through ``ctxviewer proxy``
(tests/data/claude_subagent_2055/README.md). What the second call adds to the
first on the wire is exactly what the transcript holds: a growth beyond it in a
real 2.0.55 sub-agent is not something Claude Code added and the file left out.
"""

from __future__ import annotations

from pathlib import Path

from ctxviewer.analysis.attribution import steps
from ctxviewer.analysis.tokens.estimators import get_estimator
from ctxviewer.ingest import load
from ctxviewer.model import SUBAGENT, Message

DATA = Path(__file__).resolve().parents[1] / "data" / "claude_subagent_2055"


def _shape(messages: tuple[Message, ...]) -> list[tuple[str, tuple[tuple[str, str], ...]]]:
    return [(m.role, tuple((b.kind, b.text) for b in m.blocks)) for m in messages]


def test_the_second_call_adds_only_what_the_transcript_holds() -> None:
    transcript = load(str(DATA / "subagent.jsonl.xz"))
    wire = [r for r in load(str(DATA / "recording.jsonl.xz")).requests if r.role == SUBAGENT]
    assert len(transcript.requests) == len(wire) == 2
    first, second = wire
    # 2.0.55 does not record the sub-agent's prompt: its first call holds it, and nothing
    # of the conversation yet
    assert transcript.requests[0].messages == ()
    assert second.messages[: len(first.messages)] == first.messages
    added = second.messages[len(first.messages) :]
    assert _shape(added) == _shape(transcript.requests[1].messages)
    # one assistant message with the three calls, one user message with their results
    assert [m.role for m in added] == ["assistant", "user"]
    assert [b.name for b in added[0].blocks if b.kind == "tool_use"] == ["Glob", "Glob", "Read"]
    assert [b.kind for b in added[1].blocks] == ["tool_result"] * 3
    # so the transcript's step is what was added on the wire
    step = steps(transcript, get_estimator("qwen"))[1]
    assert _shape(step.added) == _shape(added) and not step.unrecorded
