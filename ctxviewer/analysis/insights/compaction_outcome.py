"""What a real compaction kept and dropped.

For every observed compaction, the last main request before it and the first
after it are compared block by block (by their text):

- ``summary``: the compaction summary the agent wrote;
- ``kept``: blocks of the request after that were in the request before,
  word for word;
- ``reattached``: other blocks of the request after: files read again, memory
  files, the todo list, skills, reminders the agent puts back;
- ``dropped``: blocks of the request before that are gone.

The two prompt sizes are the API's (exact); each part's tokens are the
estimator's count times the ratio calibrated on the session's own growth
(``analysis.attribution``), so they are estimates and say so.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from ctxviewer.analysis.attribution import ratios, steps
from ctxviewer.analysis.real_compactions import COMPACTION_KINDS
from ctxviewer.analysis.tokens.estimators import Estimator
from ctxviewer.model import (
    COMPACTION_SUMMARY,
    MAIN,
    MEMORY,
    SKILL_BODY,
    SKILL_LISTING,
    TOOL_RESULT,
    TOOL_USE,
    Block,
    Request,
    Session,
)

KINDS = ("summary", "kept", "reattached", "dropped")


@dataclass(frozen=True)
class Part:
    """One piece of a compaction's outcome: summary, kept, re-attached or dropped."""

    kind: str  # summary | kept | reattached | dropped
    what: str  # e.g. "memory file CLAUDE.md", "tool result", "text"
    tokens: int
    text: str


@dataclass(frozen=True)
class Outcome:
    """What one real compaction kept, re-attached and dropped, in tokens."""

    before: int  # request index
    after: int
    before_tokens: int | None  # the API's prompt sizes (exact)
    after_tokens: int | None
    ratio: float  # estimator ratio to the API used for the parts
    parts: tuple[Part, ...]

    def tokens(self, kind: str) -> int:
        return sum(p.tokens for p in self.parts if p.kind == kind)

    @property
    def summary(self) -> str:
        return "\n".join(p.text for p in self.parts if p.kind == "summary")

    def to_json(self) -> dict[str, Any]:
        return {
            "before": self.before,
            "after": self.after,
            "before_tokens": self.before_tokens,
            "after_tokens": self.after_tokens,
            "ratio": round(self.ratio, 3),
            "tokens": {k: self.tokens(k) for k in KINDS},
            "summary": self.summary,
            "parts": [
                {"kind": p.kind, "what": p.what, "tokens": p.tokens}
                for p in self.parts
                if p.kind != "summary"
            ],
        }


def _what(b: Block) -> str:
    if b.tag == MEMORY:
        return f"memory file {b.name or ''}".strip()
    if b.tag in (SKILL_BODY, SKILL_LISTING):
        return "skill" if b.tag == SKILL_BODY else "skill listing"
    if b.kind == TOOL_RESULT:
        return "tool result"
    if b.kind == TOOL_USE:
        return f"tool call {b.name or ''}".strip()
    head = b.text.lstrip()[:200]
    if head.startswith(("Called the ", "Result of calling the ")):
        return "file read again" if "Read tool" in head or "file_path" in head else "tool output"
    if "todo" in head.lower():
        return "todo list"
    if b.text.lstrip().startswith("<system-reminder>") or b.tag:
        return "reminder"
    return b.kind


def _blocks(req: Request) -> list[Block]:
    return [b for m in req.messages for b in m.blocks if b.text.strip() or b.fixed_tokens]


def outcome(
    session: Session, before: Request, after: Request, est: Estimator, ratio: float = 1.0
) -> Outcome:
    old = Counter(b.text for b in _blocks(before))
    parts: list[Part] = []
    for b in _blocks(after):
        tokens = round(est.block(b) * ratio)
        if b.tag == COMPACTION_SUMMARY:
            parts.append(Part("summary", "summary", tokens, b.text))
        elif old[b.text] > 0:
            old[b.text] -= 1
            parts.append(Part("kept", _what(b), tokens, b.text))
        else:
            parts.append(Part("reattached", _what(b), tokens, b.text))
    for b in _blocks(before):
        if old[b.text] > 0:
            old[b.text] -= 1
            parts.append(Part("dropped", _what(b), round(est.block(b) * ratio), b.text))
    return Outcome(
        before.index,
        after.index,
        before.api_prompt_tokens,
        after.api_prompt_tokens,
        ratio,
        tuple(parts),
    )


def compaction_outcomes(session: Session, est: Estimator) -> list[Outcome]:
    """One ``Outcome`` per observed compaction of the main conversation."""
    rate = ratios(steps(session, est), session)
    out: list[Outcome] = []
    prev: Request | None = None
    for r in session.requests:
        if r.role != MAIN or r.sidechain:
            continue
        if prev is not None and any(e.kind in COMPACTION_KINDS for e in r.events):
            out.append(outcome(session, prev, r, est, rate.get(r.model, rate["*"])))
        prev = r
    return out
