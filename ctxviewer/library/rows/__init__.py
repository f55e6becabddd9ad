"""A session's row, read fast: the first pass of a large scan (``library.scan``).

What the table shows of a session (its requests, peak, window, cost, compactions, the
series of its prompt sizes) comes from the usage the API reported for each request,
never from the text of its messages. ``ingest``'s readers build every message and
block of a log (about 5x a raw parse of it), and the analysis behind a row reads them
again (2x more): a first index of 2,000 sessions took 87 s. The row readers here
(Claude Code, qwen-code: a module each, which parse only the records that carry usage
or events; Codex: its own parser, which needs every item's place but not its message;
Gemini CLI: its own reader; the last two told to build no messages) make ``Request``
objects without messages, through the same ``SessionBuilder`` (streamed duplicates,
order, events, roles);
the row is then the same ``analysis`` code's (``Analysis``, ``summarize``) over them,
without the details that need the text (``details=False``: the largest categories
at the peak, the sub-agent runs) and with no skipped records counted: the second
pass, a full read, fills those in.

A row reader gives the very numbers ``report`` gives, or declines (``Declined``):
a request without usage (its prompt would be estimated from its text), an overflow
or an API error in the log, a compaction the builder infers from the messages, a
compressed file cut short, another format (a proxy recording, Cline, OpenCode,
Aider). The caller then reads the file in full.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from ctxviewer.errors import LoadError
from ctxviewer.ingest.base import Item, lenient_loads
from ctxviewer.ingest.builder import SessionBuilder
from ctxviewer.ingest.claude import subagents as claude_subagents
from ctxviewer.ingest.loader import Truncated, detect, load, read_head, recorded_cwd
from ctxviewer.model import Session

RowReader = Callable[[str], Iterator[Item]]


class Declined(Exception):
    """This log's row cannot be read exactly without its text: read it in full."""


def parse(raw: bytes) -> Any:
    """A line's record as ``load`` parses it (a lone surrogate escape mended), or None
    for one that is no JSON: a skipped record, which the full read counts."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:
            return lenient_loads(raw)
        except ValueError:
            return None


class Numbering:
    """The index ``SessionBuilder`` gives each request (streamed duplicates of one call
    share one): a reader that numbers its requests saves the builder a copy of each."""

    def __init__(self) -> None:
        self.keys: dict[tuple[str, str], int] = {}
        self.count = 0

    def __call__(self, message_id: str | None, request_id: str | None) -> int:
        if message_id is None and request_id is None:
            self.count += 1
            return self.count - 1
        key = (message_id or "", request_id or "")
        if key not in self.keys:
            self.keys[key] = self.count
            self.count += 1
        return self.keys[key]


# The readers of ``ingest`` that leave the messages out themselves (``load``'s
# ``messages``): every line is parsed, but none of their text is made into messages.
WITHOUT_MESSAGES = frozenset({"gemini-cli", "gemini-cli-jsonl"})


def _readers() -> dict[str, RowReader]:
    from ctxviewer.library.rows import claude_code, codex, qwen_code

    return {"claude-code": claude_code.items, "codex": codex.items, "qwen-code": qwen_code.items}


def lean_session(path: str, format: str | None = None) -> Session:
    """The session of ``path`` with its requests' usage and events, no messages (a
    Claude Code session with its sub-agent files). Raises ``Declined``, or
    ``LoadError`` for a file no reader takes (empty, binary, another format)."""
    head = read_head(path)
    name = format or detect(head).name
    if name in WITHOUT_MESSAGES:
        session = load(path, format=name, subagents=False, messages=False, head=head)
    else:
        items = _readers().get(name)
        if items is None:
            raise Declined(f"no row reader for {name}")
        builder = SessionBuilder(Session(path=path, format=name))
        try:
            for item in items(path):
                builder.add(item)
        except Truncated:  # a compressed log cut short: the full read says where
            raise Declined("a compressed file cut short") from None
        session = builder.build()
        session.cwd = recorded_cwd(head)
    if any(r.usage is None for r in session.requests):  # never counted by the API: its
        raise Declined("a request without usage")  # prompt would be an estimate
    session.skipped.clear()  # counted by the full read
    if name == "claude-code":
        subs = {f: _sub_agent(f) for f in claude_subagents.sidecar_files(path)}
        session = claude_subagents.join(session, subs.__getitem__)
    return session


def _sub_agent(file: Path) -> Session:
    try:
        return lean_session(str(file), "claude-code")
    except LoadError as e:  # the full read counts it as a skipped record, with why
        raise Declined(f"{file.name}: {e}") from None
