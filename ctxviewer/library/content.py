"""What the library keeps of a session besides its summary: the text of each
request, for full-text search, and a small series of prompt sizes, for a sparkline.

Requests repeat the whole history, so a request's text is only what it adds:
message blocks not seen earlier in the session, and its reply. Text the agent
sends with every request of every session (memory files, reminders, skill
listings, the system prompt, the tool declarations) is left out: it would make
every session match. A tool call is kept with its tool's name. Tool results are kept in part (``RESULT_CHARS``): their
first lines say what was read or run; a file's whole content would make the
index as large as the logs for little use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ctxviewer.model import (
    IMAGE,
    MEMORY,
    SKILL_BODY,
    SKILL_LISTING,
    SYSTEM_REMINDER,
    TOOL_RESULT,
    TOOL_USE,
    Block,
    Message,
    Request,
)

if TYPE_CHECKING:
    from ctxviewer.analysis.timeline import Point

SERIES_POINTS = 48  # points of the prompt-size sparkline
RESULT_CHARS = 2_000  # of each tool result
BLOCK_CHARS = 20_000  # of any other block (a pasted log, a long reply)
REQUEST_CHARS = 200_000  # per request
_LEFT_OUT = frozenset({MEMORY, SKILL_BODY, SKILL_LISTING, SYSTEM_REMINDER})


def request_texts(requests: Sequence[Request]) -> list[str]:
    """The searchable text of each request (one string per request, maybe empty)."""
    seen_messages: set[int] = set()  # ids: requests share their history's Message objects
    seen_texts: set[str] = set()
    last: dict[tuple[str, str | None], tuple[Message, ...]] = {}  # per conversation
    out: list[str] = []
    for r in requests:
        parts: list[str] = []
        size = 0
        messages = list(_added(r.messages, last.get((r.role, r.agent)), seen_messages))
        last[(r.role, r.agent)] = r.messages
        seen_messages.update(id(m) for m in messages)
        if r.response is not None:
            messages.append(r.response)
        for m in messages:
            for b in m.blocks:
                text = _text(b)
                if not text or text in seen_texts:
                    continue
                seen_texts.add(text)
                parts.append(text)
                size += len(text)
            if size >= REQUEST_CHARS:
                break
        joined = "\n".join(parts)
        out.append(joined[:REQUEST_CHARS])
    return out


def _added(
    messages: tuple[Message, ...], before: tuple[Message, ...] | None, seen: set[int]
) -> tuple[Message, ...] | list[Message]:
    """The messages of a request not sent before: when the conversation's last request
    is a prefix (the usual case), what follows it; else every message not seen."""
    n = len(before) if before is not None else 0
    if before and len(messages) >= n and messages[n - 1] is before[-1] and messages[0] is before[0]:
        return messages[n:]
    return [m for m in messages if id(m) not in seen]


def _text(b: Block) -> str:
    if b.tag in _LEFT_OUT or b.kind == IMAGE or b.fixed_tokens is not None:
        return ""
    cap = RESULT_CHARS if b.kind == TOOL_RESULT else BLOCK_CHARS
    text = b.text[:cap].strip()
    return f"{b.name} {text}" if b.kind == TOOL_USE and b.name else text


def prompt_series(points: Sequence[Point], n: int = SERIES_POINTS) -> list[int]:
    """The main conversation's prompt sizes, at most ``n`` points: each the largest of
    its stretch of requests, so no peak is lost (the API's count where known, else the
    estimate; calls that got no answer are left out)."""
    values = [
        p.prompt_tokens for p in points if p.role == "main" and not p.sidechain and not p.unanswered
    ]
    if not values:
        values = [p.prompt_tokens for p in points if not p.unanswered]
    if len(values) <= n:
        return values
    out = []
    for i in range(n):
        lo, hi = len(values) * i // n, len(values) * (i + 1) // n
        out.append(max(values[lo:hi]))
    return out
