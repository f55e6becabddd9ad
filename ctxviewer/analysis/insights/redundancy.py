"""Content carried more than once, or carried after it went stale.

Findings, per conversation:

- ``stale_read``: a file read whose file was edited later (Edit, Write,
  MultiEdit, replace, write_file...): the read output no longer matches disk;
- ``repeated_read``: a file read again later (same path and range): the older
  output is a duplicate;
- ``old_todo``: every TodoWrite state but the last;
- ``duplicate_output``: a tool output identical to a later one;
- ``duplicate_reminder``: a system reminder repeated verbatim later.

Each finding's carry cost is its tokens times the number of requests that
still carried it after it became redundant. A block is carried by a request
when the request's messages contain its message (readers intern identical
messages, so this is a set lookup). ``trim_drops`` says whether the trim
strategy (``ctxviewer.analysis.compaction.trim``) treats the message as
obsolete in the last request that carries it: trim drops reads superseded by
a later read and old TodoWrite states first, but keeps reads only superseded
by an edit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import orjson

from ctxviewer.analysis.compaction.base import units
from ctxviewer.analysis.compaction.trim import READ_TOOLS, obsolete_units
from ctxviewer.analysis.insights.conversations import Conversation, conversations
from ctxviewer.analysis.tokens.estimators import Estimator
from ctxviewer.model import (
    AUXILIARY,
    SYSTEM_REMINDER,
    TEXT,
    TOOL_RESULT,
    TOOL_USE,
    Block,
    Message,
    Request,
    Session,
)

EDIT_TOOLS = frozenset(
    {
        "Edit",
        "Write",
        "MultiEdit",
        "NotebookEdit",
        "replace",
        "write_file",
        "edit_file",
        "edit",
        "write",
        "WriteFile",
        "EditFile",
        "create_file",
    }
)
TODO_WRITE = frozenset({"TodoWrite", "todo_write", "update_plan"})
KINDS = ("stale_read", "repeated_read", "old_todo", "duplicate_output", "duplicate_reminder")


@dataclass(frozen=True)
class Finding:
    """Content carried more than once or after it went stale, and its carry cost."""

    kind: str
    conversation: str
    name: str  # tool name, or "system reminder"
    path: str | None
    ref: str | None  # tool_use id of the call (reads, todos, outputs)
    tokens: int
    first_request: int  # index of the first request that carried it
    since_request: int  # index of the first request where it was redundant
    carried_by: int  # requests that carried it from ``since_request`` on
    carry_tokens: int
    superseded_by: str  # e.g. "Edit at request 12"
    message: int | None  # position in the last request that carried it
    last_request: int | None
    trim_drops: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "conversation": self.conversation,
            "name": self.name,
            "path": self.path,
            "ref": self.ref,
            "tokens": self.tokens,
            "first_request": self.first_request,
            "since_request": self.since_request,
            "carried_by": self.carried_by,
            "carry_tokens": self.carry_tokens,
            "superseded_by": self.superseded_by,
            "message": self.message,
            "last_request": self.last_request,
            "trim_drops": self.trim_drops,
        }


@dataclass(frozen=True)
class RedundancyReport:
    """Every repeated or stale piece of a session, largest carry cost first."""

    findings: tuple[Finding, ...]  # largest carry cost first

    @property
    def carry_tokens(self) -> int:
        return sum(f.carry_tokens for f in self.findings)

    def by_kind(self) -> dict[str, tuple[int, int]]:
        """kind -> (number of findings, carry tokens)."""
        out: dict[str, tuple[int, int]] = {}
        for f in self.findings:
            n, t = out.get(f.kind, (0, 0))
            out[f.kind] = (n + 1, t + f.carry_tokens)
        return out

    @property
    def trim_carry_tokens(self) -> int:
        return sum(f.carry_tokens for f in self.findings if f.trim_drops)

    def to_json(self, top: int | None = None) -> dict[str, Any]:
        shown = self.findings if top is None else self.findings[:top]
        return {
            "carry_tokens": self.carry_tokens,
            "trim_carry_tokens": self.trim_carry_tokens,
            "count": len(self.findings),
            "by_kind": {k: {"count": n, "carry_tokens": t} for k, (n, t) in self.by_kind().items()},
            "findings": [f.to_json() for f in shown],
        }


@dataclass
class _Call:
    """A tool call seen while scanning a conversation."""

    seq: int
    pos: int  # position of its message's first appearance in the conversation
    message: Message
    block: Block
    path: str | None
    span: tuple[object, object]  # (offset, limit) of a read


def _args(b: Block) -> dict[str, Any]:
    try:
        data = orjson.loads(b.text) if b.text else {}
    except orjson.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def _path(args: dict[str, Any]) -> str | None:
    p = (
        args.get("file_path")
        or args.get("path")
        or args.get("absolute_path")
        or args.get("notebook_path")
    )
    return p if isinstance(p, str) else None


def _is_reminder(b: Block) -> bool:
    return b.kind == TEXT and (
        b.tag == SYSTEM_REMINDER or b.text.lstrip().startswith("<system-reminder>")
    )


class _Scan:
    """Distinct messages of one conversation, in order of first appearance."""

    def __init__(self, conv: Conversation, est: Estimator) -> None:
        self.conv = conv
        self.est = est
        self.reqs: Sequence[Request] = conv.requests
        self.present = [set(r.messages) for r in self.reqs]
        self.first: dict[Message, int] = {}
        order: list[Message] = []
        before: tuple[Message, ...] = ()
        for p, r in enumerate(self.reqs):
            now = tuple(r.messages)
            # a request repeats the one before and adds to it: only the new ones are looked at
            start = len(before) if len(now) >= len(before) and now[: len(before)] == before else 0
            for m in now[start:]:
                if m not in self.first:
                    self.first[m] = p
                    order.append(m)
            before = now
        self.order = order
        self.results: dict[str, tuple[Message, Block]] = {}
        self.calls: list[_Call] = []
        for seq, m in enumerate(order):
            for b in m.blocks:
                if b.kind == TOOL_RESULT and b.ref:
                    self.results.setdefault(b.ref, (m, b))
                elif b.kind == TOOL_USE:
                    args = _args(b)
                    self.calls.append(
                        _Call(
                            seq,
                            self.first[m],
                            m,
                            b,
                            _path(args),
                            (args.get("offset"), args.get("limit")),
                        )
                    )
        self._obsolete: dict[int, set[int]] = {}

    def carried(self, m: Message, since: int) -> tuple[int, int | None]:
        """(requests carrying ``m`` from position ``since``, position of the last one)."""
        hits = [p for p in range(since, len(self.reqs)) if m in self.present[p]]
        return len(hits), (hits[-1] if hits else None)

    def obsolete_messages(self, p: int) -> set[int]:
        if p not in self._obsolete:
            msgs = self.reqs[p].messages
            groups = units(msgs)
            self._obsolete[p] = {i for u in obsolete_units(msgs, groups) for i in groups[u]}
        return self._obsolete[p]

    def finding(
        self,
        kind: str,
        m: Message,
        tokens: int,
        since: int,
        by: str,
        *,
        name: str,
        path: str | None = None,
        ref: str | None = None,
    ) -> Finding | None:
        n, last = self.carried(m, since)
        if n == 0:
            return None
        message = trim = None
        if last is not None:
            msgs = self.reqs[last].messages
            message = next((i for i, x in enumerate(msgs) if x == m), None)
            trim = message is not None and message in self.obsolete_messages(last)
        return Finding(
            kind,
            self.conv.label,
            name,
            path,
            ref,
            tokens,
            self.reqs[self.first[m]].index,
            self.reqs[since].index,
            n,
            n * tokens,
            by,
            message,
            self.reqs[last].index if last is not None else None,
            bool(trim),
        )

    def label(self, c: _Call) -> str:
        return f"{c.block.name} at request {self.reqs[c.pos].index}"


def _file_findings(s: _Scan) -> list[Finding]:
    out: list[Finding] = []
    events = [
        c for c in s.calls if c.path and (c.block.name in READ_TOOLS or c.block.name in EDIT_TOOLS)
    ]
    for i, c in enumerate(events):
        if c.block.name not in READ_TOOLS or c.block.ref not in s.results:
            continue
        later = next(
            (
                e
                for e in events[i + 1 :]
                if e.path == c.path
                and e.seq > c.seq
                and (e.block.name in EDIT_TOOLS or e.span == c.span)
            ),
            None,
        )
        if later is None:
            continue
        kind = "stale_read" if later.block.name in EDIT_TOOLS else "repeated_read"
        m, b = s.results[c.block.ref]
        f = s.finding(
            kind,
            m,
            s.est.block(b),
            later.pos,
            s.label(later),
            name=c.block.name or "",
            path=c.path,
            ref=c.block.ref,
        )
        if f:
            out.append(f)
    return out


def _todo_findings(s: _Scan) -> list[Finding]:
    todos = [c for c in s.calls if c.block.name in TODO_WRITE]
    out = []
    for c, nxt in pairwise(todos):
        tokens = s.est.block(c.block)
        res = s.results.get(c.block.ref or "")
        if res:
            tokens += s.est.block(res[1])
        f = s.finding(
            "old_todo",
            c.message,
            tokens,
            nxt.pos,
            s.label(nxt),
            name=c.block.name or "",
            ref=c.block.ref,
        )
        if f:
            out.append(f)
    return out


def _duplicates(s: _Scan, skip_refs: set[str], min_tokens: int) -> list[Finding]:
    out: list[Finding] = []
    outputs: dict[str, list[tuple[Message, Block]]] = {}
    reminders: dict[str, list[tuple[Message, Block]]] = {}
    for m in s.order:
        for b in m.blocks:
            if b.kind == TOOL_RESULT and b.ref and b.ref not in skip_refs and b.text:
                outputs.setdefault(b.text, []).append((m, b))
            elif _is_reminder(b):
                reminders.setdefault(b.text, []).append((m, b))
    for kind, groups in (("duplicate_output", outputs), ("duplicate_reminder", reminders)):
        for copies in groups.values():
            if len(copies) < 2 or s.est.block(copies[0][1]) < min_tokens:
                continue
            for (m, b), (m2, _) in pairwise(copies):
                if m == m2:
                    continue
                since = s.first[m2]
                f = s.finding(
                    kind,
                    m,
                    s.est.block(b),
                    since,
                    f"a copy at request {s.reqs[since].index}",
                    name="system reminder" if kind == "duplicate_reminder" else "tool output",
                    ref=b.ref,
                )
                if f:
                    out.append(f)
    return out


def redundancy(session: Session, est: Estimator, *, min_tokens: int = 50) -> RedundancyReport:
    """Redundant and stale content of every conversation, largest carry cost first.

    Duplicate outputs and reminders under ``min_tokens`` are ignored (short
    outputs such as "ok" repeat by nature).
    """
    findings: list[Finding] = []
    for conv in conversations(session):
        if conv.role == AUXILIARY:
            continue
        s = _Scan(conv, est)
        files = _file_findings(s)
        reads = {c.block.ref for c in s.calls if c.block.name in READ_TOOLS and c.block.ref}
        findings += files + _todo_findings(s) + _duplicates(s, reads, min_tokens)
    findings.sort(key=lambda f: (-f.carry_tokens, f.first_request))
    return RedundancyReport(tuple(findings))
