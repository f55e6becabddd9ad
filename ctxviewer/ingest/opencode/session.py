"""OpenCode's sessions, messages and parts (the same JSON in its database and in its
files) to requests.

A user message holds the prompt's parts (text, attached files; a ``compaction`` part
asks for a summary). An assistant message holds one or more *steps*: each
``step-start`` … ``step-finish`` is one API call, and its ``step-finish`` part carries
that call's usage (``tokens``: ``input``, ``output``, ``reasoning``, ``cache.read``,
``cache.write``; ``input`` is the uncached prompt, equal to the server's
``prompt_tokens`` when nothing is cached). A message without step parts (older
builds) is one call with the message's own ``tokens``. A session's token sums add up
calls: they are no context size.

One request per call. Its context is what OpenCode sends: the session's messages
before it (user texts, earlier replies with their tool calls and the tools' outputs),
from the last compaction on (a summary message, ``summary: true``, ends the history
before it), with the tool outputs pruned by then (``state.time.compacted``) as
OpenCode's placeholder. The system prompt and the tool declarations are not stored:
requests are ``complete=False``. A session with a ``parentID`` is a sub-agent's
(the task tool's), shown with its parent. Prompts are stored as sent (``opencode
run`` keeps the quotes a shell passed along); the session title comes from a side
call to the small model, which stores no usage and gives no request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxviewer.ingest.api.anthropic import Interner, iso
from ctxviewer.ingest.base import Item, as_dict, as_int
from ctxviewer.jsonish import js_dumps
from ctxviewer.model import (
    COMPACT_BOUNDARY,
    DOCUMENT,
    MAIN,
    SUBAGENT,
    TEXT,
    THINKING,
    TOOL_RESULT,
    TOOL_USE,
    Block,
    Event,
    Message,
    Request,
    Usage,
)

PRUNED = "[Old tool result content cleared]"
NOTES = (
    "OpenCode session: the stored messages and parts, not the request body; not "
    "recorded: the system prompt (with AGENTS.md) and the tool declarations, inferred "
    "from the first API usage",
    "usage: the step's tokens (input is the uncached prompt; cache read and write beside "
    "it; output and reasoning)",
    "messages: the session's messages before this call, from the last compaction on, "
    "with the tool outputs OpenCode had pruned by then",
)


@dataclass
class Stored:
    """What one session's files or rows hold: the session, its messages, their parts."""

    session: dict[str, Any]
    messages: list[dict[str, Any]] = field(default_factory=list)
    parts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by message id


def _time(value: Any, key: str = "created") -> int:
    """A time in milliseconds since the epoch (0 when absent)."""
    t = as_dict(value).get(key)
    return int(t) if isinstance(t, (int, float)) and not isinstance(t, bool) and t > 0 else 0


def _usage(tokens: Any) -> Usage | None:
    t = as_dict(tokens)
    if not t:
        return None
    cache = as_dict(t.get("cache"))
    reasoning = as_int(t.get("reasoning"))
    return Usage(
        input_tokens=as_int(t.get("input")),
        cache_read_input_tokens=as_int(cache.get("read")),
        cache_creation_input_tokens=as_int(cache.get("write")),
        output_tokens=as_int(t.get("output")) + reasoning,
        reasoning_tokens=reasoning,
    )


class SessionBuilder:
    """Requests of OpenCode sessions (a session and its sub-agents' sessions)."""

    def __init__(self) -> None:
        self.intern = Interner()

    def requests(self, stored: list[Stored]) -> list[Item]:
        """Every session's items, in time order; a sub-agent's session goes with the
        session at the root of its parents (its conversation)."""
        by_id = {s.session.get("id"): s for s in stored}
        out: list[tuple[int, int, Item]] = []
        for s in stored:
            root, seen = s, set()
            while (
                isinstance(parent := root.session.get("parentID"), str)
                and parent in by_id
                and parent not in seen
            ):
                seen.add(parent)
                root = by_id[parent]
            for when, item in self._session(s, root.session.get("id")):
                out.append((when, len(out), item))
        return [item for _, _, item in sorted(out, key=lambda x: (x[0], x[1]))]

    def _session(self, s: Stored, root: Any) -> list[tuple[int, Item]]:
        info = s.session
        sub = isinstance(info.get("parentID"), str) and info.get("parentID")
        client = f"opencode/{v}" if isinstance(v := info.get("version"), str) else "opencode/"
        conv = root if isinstance(root, str) else None
        history: list[tuple[Message, list[int]]] = []  # message, pruned-at times
        out: list[tuple[int, Item]] = []
        compacted = False
        last_prompt: int | None = None
        for msg in sorted(s.messages, key=lambda m: (_time(m.get("time")), str(m.get("id")))):
            parts = s.parts.get(str(msg.get("id")), [])
            when = _time(msg.get("time"))
            if msg.get("role") == "user":
                user = self._user(msg, parts)
                if user is not None:
                    history.append((user, []))
                continue
            if msg.get("role") != "assistant":
                continue
            if compacted:
                out.append(
                    (
                        when,
                        Event(
                            COMPACT_BOUNDARY,
                            iso(when) if when else None,
                            trigger="auto",
                            pre_tokens=last_prompt,
                            detail="OpenCode compaction: the summary replaces "
                            "the history before it",
                        ),
                    )
                )
                compacted = False
            for step_time, usage, blocks, results in self._steps(msg, parts):
                req = Request(
                    index=0,
                    model=msg.get("modelID") if isinstance(msg.get("modelID"), str) else None,
                    timestamp=iso(step_time or when),
                    system=(),
                    tools=(),
                    messages=self._context(history, step_time or when),
                    usage=usage,
                    complete=False,
                    sidechain=bool(sub),
                    role=SUBAGENT if sub else MAIN,
                    agent=info.get("id") if sub else None,
                    api="openai-chat",
                    response=self.intern(Message("assistant", tuple(blocks))) if blocks else None,
                    message_id=f"{msg.get('id')}#{len(out)}",
                    line=1,
                    notes=NOTES,
                    client=client,
                    conversation=conv,
                )
                out.append((step_time or when, req))
                if usage is not None:
                    last_prompt = usage.prompt_tokens
                if blocks:
                    history.append((self.intern(Message("assistant", tuple(blocks))), []))
                for block, pruned_at in results:
                    history.append((self.intern(Message("tool", (block,))), pruned_at))
            if msg.get("summary") is True:  # the compaction's summary: the history restarts
                history[:] = history[-2:]
                compacted = True
        return out

    def _user(self, msg: dict[str, Any], parts: list[dict[str, Any]]) -> Message | None:
        blocks: list[Block] = []
        for p in parts:
            kind = p.get("type")
            if kind == "text" and isinstance(p.get("text"), str) and not p.get("ignored"):
                blocks.append(Block(TEXT, p["text"]))
            elif kind == "file":
                blocks.append(
                    Block(
                        DOCUMENT,
                        str(p.get("filename") or p.get("url") or ""),
                        name=str(p.get("filename") or ""),
                    )
                )
            elif kind == "compaction":
                blocks.append(Block(TEXT, "What did we do so far?"))
        if not blocks:
            return None
        return self.intern(
            Message(
                "user",
                tuple(blocks),
                str(msg.get("id")),
                iso(_time(msg.get("time"))) if _time(msg.get("time")) else None,
            )
        )

    def _steps(
        self, msg: dict[str, Any], parts: list[dict[str, Any]]
    ) -> list[tuple[int, Usage | None, list[Block], list[tuple[Block, list[int]]]]]:
        """Each API call of an assistant message: (start time, usage, reply blocks, tool
        results with the time each was pruned, if it was)."""
        steps: list[tuple[int, Usage | None, list[Block], list[tuple[Block, list[int]]]]] = []
        blocks: list[Block] = []
        results: list[tuple[Block, list[int]]] = []
        start = 0
        finished = False
        for p in parts:
            kind = p.get("type")
            if kind == "step-start":
                blocks, results, start = [], [], _time(p.get("time"), "start")
            elif kind == "step-finish":
                steps.append((start, _usage(p.get("tokens")), blocks, results))
                blocks, results, finished = [], [], True
            elif kind == "text" and isinstance(p.get("text"), str):
                blocks.append(Block(TEXT, p["text"]))
            elif kind == "reasoning" and isinstance(p.get("text"), str):
                blocks.append(Block(THINKING, p["text"]))
            elif kind == "tool":
                state = as_dict(p.get("state"))
                call_id = p.get("callID") if isinstance(p.get("callID"), str) else None
                blocks.append(
                    Block(
                        TOOL_USE,
                        js_dumps(state.get("input", {})),
                        name=str(p.get("tool", "")),
                        ref=call_id,
                    )
                )
                output = (
                    state.get("output")
                    if state.get("status") == "completed"
                    else state.get("error")
                )
                pruned = _time(state.get("time"), "compacted")
                results.append(
                    (
                        Block(
                            TOOL_RESULT,
                            output if isinstance(output, str) else js_dumps(output),
                            name=str(p.get("tool", "")),
                            ref=call_id,
                            is_error=state.get("status") == "error",
                        ),
                        [pruned] if pruned else [],
                    )
                )
        if not finished and isinstance(msg.get("tokens"), dict):
            steps.append((0, _usage(msg.get("tokens")), blocks, results))
        return steps

    def _context(self, history: list[tuple[Message, list[int]]], when: int) -> tuple[Message, ...]:
        out = []
        for m, pruned_at in history:
            if pruned_at and when and pruned_at[0] <= when:
                b = m.blocks[0]
                m = self.intern(
                    Message(m.role, (Block(TOOL_RESULT, PRUNED, name=b.name, ref=b.ref),))
                )
            out.append(m)
        return tuple(out)
