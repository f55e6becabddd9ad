"""Claude Code transcripts (``~/.claude/projects/<project>/<session>.jsonl``).

Each line is a record with ``uuid`` and ``parentUuid``; ``user`` and
``assistant`` records carry an API ``message``. One API call streams into
several assistant records (one per content block) with the same message id
and request id: they are one request. The context of a request is the chain
of messages from its first record's parent back to the root (a compaction
boundary starts a new root), so rewinds and interleaved sidechains come out
right. Transcripts up to 2.1.331 never record the system prompt or tool
schemas; 2.1.332 records both for each call (``prompt_records``), which its
requests carry. Requests stay ``complete=False``: the messages are rebuilt,
not recorded as sent.

An assistant message and what answered it is one *turn*, rebuilt as the API
saw it: one assistant message of all its records, then one user message of
all its tool results, in the order they were written, then the records that
hang off them (hook output, reminders). Claude Code 2.x hangs each result of
parallel tool calls off its own ``tool_use`` record, so the results sit on
sibling branches and the chain walks through one of them only; earlier
versions interleave calls and results in one chain. 2.1.197's TUI writes its
first reply before the prompt and attachments it answers: that request is held
until the next call (or the end), and its context walked again then.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from ctxviewer.ingest.api.anthropic import Interner, content_blocks, usage_from
from ctxviewer.ingest.base import Head, Item, as_int
from ctxviewer.ingest.chains import CYCLE, Links
from ctxviewer.ingest.claude import FORMAT, claude_code
from ctxviewer.ingest.claude.attachments import attachment_message
from ctxviewer.ingest.claude.progress import ProgressAgents
from ctxviewer.ingest.claude.prompt_records import NOTE as PROMPT_NOTE
from ctxviewer.ingest.claude.prompt_records import RecordedPrompts
from ctxviewer.ingest.overflow import error_event
from ctxviewer.model import (
    COMPACT_BOUNDARY,
    CONTEXT_OVERFLOW,
    MAIN,
    SUBAGENT,
    TOOL_RESULT,
    TOOL_USE,
    Event,
    Message,
    Request,
    Skipped,
)

# Record types that carry no context; ignored without counting them as skipped.
_QUIET_TYPES = frozenset(
    {
        "progress",
        "file-history-snapshot",
        "queue-operation",
        "summary",
        "custom-title",
        "tag",
        "agent-name",
        "last-prompt",
        "pr-link",
        "worktree-state",
        "mode",
        "ai-title",
        "permission-mode",
        "tools-used",
        "cost-state",
        "atis-latch",
    }
)


def _str(value: Any) -> str | None:
    """A string field, or None when a record has something else there."""
    return value if isinstance(value, str) else None


class _Node:
    __slots__ = ("message", "msg_id", "parent", "turn")

    def __init__(
        self,
        parent: str | None,
        message: Message | None,
        msg_id: str | None,
        turn: str | None = None,
    ) -> None:
        self.parent = parent
        self.message = message
        self.msg_id = msg_id
        self.turn = turn  # the turn (assistant message id) the record belongs to


class _Turn:
    """An assistant message's records, its tool results and what hangs off them."""

    __slots__ = ("built", "calls", "rest", "results")

    def __init__(self) -> None:
        self.calls: list[Message] = []  # one per assistant record, as written
        self.results: list[Message] = []  # the user records answering its tool calls
        self.rest: list[Message] = []  # records hanging off the results (hooks, reminders)
        self.built: tuple[Message, ...] | None = None


class _Parser:
    def __init__(self) -> None:
        self.nodes: dict[str, _Node] = {}
        self.seen: set[tuple[str, str]] = set()
        self.intern = Interner()
        # boundary uuid -> uuids it preserved (partial compaction keeps some messages)
        self.preserved: dict[str, list[str]] = {}
        self.progress = ProgressAgents(self.intern)  # sub-agents nested in progress records
        # uuid -> (its context, the turn of its last message): a request's context is
        # its parent's plus what follows, so each record is walked once, not per request
        self.contexts: dict[str, tuple[tuple[Message, ...], str | None]] = {}
        self.turns: dict[str, _Turn] = {}  # assistant message id -> its turn
        self.tool_turn: dict[str, str] = {}  # tool_use id -> the turn that made the call
        self.memo_turns: set[str] = set()  # turns some kept context holds
        self.links = Links()  # to keep the chains free of cycles
        self.prompts = RecordedPrompts(self.intern)  # 2.1.332: what each call sent
        # parents a walk did not find yet: when one comes, the contexts through it are stale
        self.missing: set[str] = set()
        # A request whose parent record comes after it is held, with what follows it,
        # until the next call or the end: its context is walked again then.
        self.held: list[Item] = []
        self.held_parent: str | None = None
        self.short: str | None = None  # set by _message: the parent of a request just made
        self.new_call = False  # set by _message: its request is a call's first record

    def _join(self, node: _Node, turn: str, part: str) -> None:
        """Make ``node`` part of ``turn`` (``calls``, ``results`` or ``rest``)."""
        node.turn = turn
        t = self.turns.setdefault(turn, _Turn())
        if node.message is not None:
            getattr(t, part).append(node.message)
            t.built = None
        if turn in self.memo_turns:  # a kept context holds the turn as it was
            self.contexts.clear()
            self.memo_turns.clear()

    def _turn_messages(self, turn: str) -> tuple[Message, ...]:
        """The turn as the API saw it: its calls as one message, its results as one."""
        t = self.turns[turn]
        if t.built is None:
            out = [self._merged(t.calls), self._merged(t.results)] + t.rest
            t.built = tuple(m for m in out if m is not None)
        return t.built

    def _merged(self, parts: list[Message]) -> Message | None:
        if len(parts) < 2:
            return parts[0] if parts else None
        first = parts[0]
        return self.intern(
            Message(
                first.role, tuple(b for m in parts for b in m.blocks), first.id, first.timestamp
            )
        )

    def _set(self, uuid: str, node: _Node) -> None:
        if uuid in self.nodes or uuid in self.missing:  # contexts through it are stale
            self.contexts.clear()
            self.missing.discard(uuid)
        self.nodes[uuid] = node
        self.links.add(node.parent)

    def _parent_of(self, uuid: str) -> str | None:
        node = self.nodes.get(uuid)
        return node.parent if node is not None else None

    def _closes_cycle(self, uuid: str, parent: str) -> bool:
        return self.links.closes_cycle(uuid, parent, self._parent_of)

    def feed(self, line: int, record: Any) -> Iterator[Item]:
        out: list[Item] = []
        for item in self._feed(line, record):
            if isinstance(item, Request) and self.new_call and self.held:
                out += self._release()
            if not self.held and isinstance(item, Request) and self.short is not None:
                self.held_parent = self.short
            if self.held_parent is not None:
                self.held.append(item)
            else:
                out.append(item)
            self.short, self.new_call = None, False
        return iter(out)

    def _release(self) -> list[Item]:
        """The held request, its context walked again, and what followed it."""
        held, self.held = self.held, []
        first = held[0]
        if isinstance(first, Request) and self.held_parent is not None:
            held[0] = replace(first, messages=self._context(self.held_parent))
        self.held_parent = None
        return held

    def _feed(self, line: int, record: Any) -> Iterator[Item]:
        if not isinstance(record, dict):
            yield Skipped(line, "not a JSON object")
            return
        kind = record.get("type")
        uuid = record.get("uuid")
        parent = _str(record.get("parentUuid"))
        if isinstance(uuid, str) and parent is not None and self._closes_cycle(uuid, parent):
            yield Skipped(line, CYCLE)
            parent = None
        if kind in ("user", "assistant") and isinstance(record.get("message"), dict):
            yield from self._message(line, record, kind, parent)
            return
        if self.prompts.feed(record):
            return
        if kind == "progress":
            req = self.progress.feed(line, record)
            if req is not None:
                key = (req.message_id or "", req.request_id or "")
                if key not in self.seen:
                    self.seen.add(key)
                    yield replace(
                        req,
                        client=record_client(record),
                        conversation=_str(record.get("sessionId")),
                    )
            if isinstance(uuid, str):
                self._set(uuid, _Node(parent, None, None))
            return
        if kind == "attachment":
            message, left_out = attachment_message(record)
            if left_out:
                yield Skipped(line, left_out)
            if isinstance(uuid, str):
                node = _Node(parent, self.intern(message) if message else None, None)
                self._set(uuid, node)
                above = self.nodes.get(node.parent) if node.parent else None
                if above is not None and above.turn is not None and above.msg_id is None:
                    self._join(node, above.turn, "rest")  # hangs off a tool result
            return
        if kind == "system" and record.get("subtype") == "compact_boundary":
            meta = record.get("compactMetadata") or {}
            yield compact_event(record)
            parent = None  # the conversation restarts from the summary
            kept = (meta.get("preservedMessages") or {}).get("uuids")
            if isinstance(uuid, str) and isinstance(kept, list):
                self._preserve(uuid, [k for k in kept if isinstance(k, str)])
        elif not (isinstance(kind, str) and kind in _QUIET_TYPES) and kind != "system":
            yield Skipped(line, f"unknown record type {kind!r}")
        if isinstance(uuid, str):
            self._set(uuid, _Node(parent, None, None))

    def _message(
        self, line: int, record: dict[str, Any], kind: str, parent: str | None
    ) -> Iterator[Item]:
        raw = record["message"]
        uuid = record.get("uuid")
        msg_id = raw.get("id") if kind == "assistant" and isinstance(raw.get("id"), str) else None
        blocks = tuple(content_blocks(raw.get("content")))
        message = self.intern(Message(kind, blocks, msg_id or uuid, record.get("timestamp")))
        if isinstance(uuid, str):
            node = _Node(parent, message, msg_id)
            self._set(uuid, node)
            if msg_id is not None:
                self._join(node, msg_id, "calls")
                for b in blocks:  # (an id of another JSON type is damage: no call)
                    if b.kind == TOOL_USE and isinstance(b.ref, str):
                        self.tool_turn[b.ref] = msg_id
            else:
                answered = next(
                    (
                        self.tool_turn[b.ref]
                        for b in blocks
                        if b.kind == TOOL_RESULT
                        and isinstance(b.ref, str)
                        and b.ref in self.tool_turn
                    ),
                    None,
                )
                if answered is not None:
                    self._join(node, answered, "results")
            kept = self.preserved.pop(parent, None) if parent else None
            if kept and not self._closes_cycle(kept[0], uuid):  # the summary: preserved
                self.nodes[kept[0]].parent = uuid  # messages follow it
                self.links.add(uuid)
                self.contexts.clear()
        if kind != "assistant":
            return
        if record.get("isApiErrorMessage") or raw.get("model") == "<synthetic>":
            event = error_event(message.text, record.get("timestamp"))
            if event.kind == CONTEXT_OVERFLOW:
                yield event
            return
        usage = usage_from(raw.get("usage"))
        if usage is None:
            return
        key = (msg_id or "", _text_or_empty(record.get("requestId")))
        first = key not in self.seen
        self.seen.add(key)
        self.new_call = first
        sidechain = bool(record.get("isSidechain"))
        sent = self.prompts.sent(record)
        if first and parent is not None and parent not in self.nodes:
            self.short = parent  # its parent is written after it: feed holds it
        yield Request(
            index=0,
            model=_str(raw.get("model")),
            timestamp=record.get("timestamp"),
            system=sent.system if sent else (),
            tools=sent.tools if sent else (),
            messages=self._context(parent) if first else (),
            usage=usage,
            complete=False,
            sidechain=sidechain,
            role=SUBAGENT if sidechain else MAIN,
            agent=_str(record.get("agentId")),
            api="anthropic",
            response=message,
            message_id=msg_id,
            request_id=_str(record.get("requestId")),
            line=line,
            client=record_client(record),
            conversation=_str(record.get("sessionId")),
            max_tokens=sent.max_tokens if sent else None,
            window_hint=sent.window_hint if sent else None,
            notes=(PROMPT_NOTE,) if sent else (),
        )

    def _preserve(self, boundary: str, kept: list[str]) -> None:
        """Re-link messages a partial compaction kept, so the chain stops at the boundary."""
        kept = [k for k in dict.fromkeys(kept) if k in self.nodes and k != boundary]
        if not kept:
            return
        self.nodes[kept[0]].parent = boundary
        for prev, cur in zip(kept, kept[1:], strict=False):
            self.nodes[cur].parent = prev
        for k in (boundary, *kept[:-1]):
            self.links.add(k)
        self.preserved[boundary] = kept
        self.contexts.clear()

    def _context(self, uuid: str | None) -> tuple[Message, ...]:
        """Messages from the root to ``uuid``, one per API message.

        The records of a turn count where the chain first meets one of them, as
        the whole turn (``_turn_messages``): the walk may pass through one branch
        of its parallel tool calls only. The walk up stops at the nearest record
        whose context is known.
        """
        start = uuid
        path: list[_Node] = []
        chain: list[Message] = []
        last_turn: str | None = None
        while uuid is not None and len(path) <= len(self.nodes):  # longer: a cycle
            known = self.contexts.get(uuid)
            if known is not None:
                chain, last_turn = list(known[0]), known[1]
                break
            node = self.nodes.get(uuid)
            if node is None:
                self.missing.add(uuid)
                break
            path.append(node)
            uuid = node.parent
        for node in reversed(path):
            if node.turn is not None:
                if node.turn != last_turn:
                    last_turn = node.turn
                    chain.extend(self._turn_messages(last_turn))
            elif node.message is not None:
                chain.append(node.message)
        context = tuple(chain)
        if start is not None:
            self.contexts[start] = (context, last_turn)
            if last_turn is not None:
                self.memo_turns.add(last_turn)
        return context

    def finish(self) -> Iterator[Item]:
        return iter(self._release() if self.held else ())


class ClaudeCodeReader:
    name, label = FORMAT.name, FORMAT.label
    description, document = FORMAT.description, FORMAT.document

    def sniff(self, head: Head) -> bool:
        return claude_code(head)

    def parser(self) -> _Parser:
        return _Parser()


READER = ClaudeCodeReader()


def _text_or_empty(value: object) -> str:
    """An id from JSON: strings as they are, anything else (lists, objects...) as ''."""
    return value if isinstance(value, str) else ""


def compact_event(record: dict[str, Any]) -> Event:
    """A ``compact_boundary`` record's event (the compaction's sizes, trigger, text)."""
    meta = record.get("compactMetadata") or {}
    return Event(
        COMPACT_BOUNDARY,
        record.get("timestamp"),
        pre_tokens=as_int(meta.get("preTokens", record.get("preTokens"))) or None,
        post_tokens=as_int(meta.get("postTokens")) or None,
        trigger=meta.get("trigger"),
        detail=str(record.get("content", "")),
    )


def record_client(record: dict[str, Any]) -> str | None:
    """'claude-code/2.1.114 (cli)': the version and, where recorded, the entrypoint."""
    version = _str(record.get("version"))
    if version is None:
        return None
    entry = _str(record.get("entrypoint"))
    return f"claude-code/{version} ({entry})" if entry else f"claude-code/{version}"
