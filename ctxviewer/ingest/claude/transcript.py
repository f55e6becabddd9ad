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
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from ctxviewer.ingest.api.anthropic import Interner, content_blocks, usage_from
from ctxviewer.ingest.base import Head, Item, as_int
from ctxviewer.ingest.claude import FORMAT, claude_code
from ctxviewer.ingest.claude.attachments import attachment_message
from ctxviewer.ingest.claude.progress import ProgressAgents
from ctxviewer.ingest.claude.prompt_records import NOTE as PROMPT_NOTE
from ctxviewer.ingest.claude.prompt_records import RecordedPrompts
from ctxviewer.model import (
    COMPACT_BOUNDARY,
    CONTEXT_OVERFLOW,
    MAIN,
    SUBAGENT,
    TOOL_RESULT,
    Event,
    Message,
    Request,
    Skipped,
)

# Record types that carry no context; ignored without counting them as skipped.
_QUIET_TYPES = frozenset({
    "progress", "file-history-snapshot", "queue-operation", "summary", "custom-title",
    "tag", "agent-name", "last-prompt", "pr-link", "worktree-state", "mode", "ai-title",
    "permission-mode", "tools-used", "cost-state", "atis-latch",
})
_OVERFLOW = ("prompt is too long", "context window", "context_length")


def _str(value: Any) -> str | None:
    """A string field, or None when a record has something else there."""
    return value if isinstance(value, str) else None


class _Node:
    __slots__ = ("parent", "message", "msg_id")

    def __init__(self, parent: str | None, message: Message | None, msg_id: str | None) -> None:
        self.parent = parent
        self.message = message
        self.msg_id = msg_id


class _Parser:
    def __init__(self) -> None:
        self.nodes: dict[str, _Node] = {}
        self.seen: set[tuple[str, str]] = set()
        self.intern = Interner()
        # boundary uuid -> uuids it preserved (partial compaction keeps some messages)
        self.preserved: dict[str, list[str]] = {}
        self.progress = ProgressAgents(self.intern)  # sub-agents nested in progress records
        # uuid -> (its context, the msg_id of its last message): a request's context is
        # its parent's plus what follows, so each record is walked once, not per request
        self.contexts: dict[str, tuple[tuple[Message, ...], str | None]] = {}
        self.prompts = RecordedPrompts(self.intern)  # 2.1.332: what each call sent
        # parents a walk did not find yet: when one comes, the contexts through it are stale
        self.missing: set[str] = set()
        # A request whose parent record comes after it (Claude Code 2.1.197's TUI writes its
        # first reply before the prompt and attachments it answers) is held, with what
        # follows it, until the next request or the end: its context is walked again then.
        self.held: list[Item] = []
        self.held_parent: str | None = None
        # uuid of a reply's record -> the tool results written with it as their parent
        self.results_of: dict[str, list[str]] = {}
        self.short: str | None = None  # set by _message: the parent of a request just made
        self.new_call = False  # set by _message: its request is a call's first record

    def _set(self, uuid: str, node: _Node) -> None:
        if uuid in self.nodes or uuid in self.missing:  # contexts through it are stale
            self.contexts.clear()
            self.missing.discard(uuid)
        self.nodes[uuid] = node

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
        parent = record.get("parentUuid")
        if kind in ("user", "assistant") and isinstance(record.get("message"), dict):
            yield from self._message(line, record, kind)
            return
        if self.prompts.feed(record):
            return
        if kind == "progress":
            req = self.progress.feed(line, record)
            if req is not None:
                key = (req.message_id or "", req.request_id or "")
                if key not in self.seen:
                    self.seen.add(key)
                    yield replace(req, client=_client(record),
                                  conversation=_str(record.get("sessionId")))
            if isinstance(uuid, str):
                self._set(uuid, _Node(parent if isinstance(parent, str) else None, None, None))
            return
        if kind == "attachment":
            message, left_out = attachment_message(record)
            if left_out:
                yield Skipped(line, left_out)
            if isinstance(uuid, str):
                self._set(uuid, _Node(parent if isinstance(parent, str) else None,
                                      self.intern(message) if message else None, None))
            return
        if kind == "system" and record.get("subtype") == "compact_boundary":
            meta = record.get("compactMetadata") or {}
            yield Event(COMPACT_BOUNDARY, record.get("timestamp"),
                        pre_tokens=as_int(meta.get("preTokens", record.get("preTokens"))) or None,
                        post_tokens=as_int(meta.get("postTokens")) or None,
                        trigger=meta.get("trigger"), detail=str(record.get("content", "")))
            parent = None  # the conversation restarts from the summary
            kept = (meta.get("preservedMessages") or {}).get("uuids")
            if isinstance(uuid, str) and isinstance(kept, list):
                self._preserve(uuid, [k for k in kept if isinstance(k, str)])
        elif not (isinstance(kind, str) and kind in _QUIET_TYPES) and kind != "system":
            yield Skipped(line, f"unknown record type {kind!r}")
        if isinstance(uuid, str):
            self._set(uuid, _Node(parent if isinstance(parent, str) else None, None, None))

    def _message(self, line: int, record: dict[str, Any], kind: str) -> Iterator[Item]:
        raw = record["message"]
        uuid = record.get("uuid")
        parent = record.get("parentUuid")
        parent = parent if isinstance(parent, str) else None
        msg_id = raw.get("id") if kind == "assistant" and isinstance(raw.get("id"), str) else None
        blocks = tuple(content_blocks(raw.get("content")))
        message = self.intern(Message(kind, blocks, msg_id or uuid, record.get("timestamp")))
        if isinstance(uuid, str):
            self._set(uuid, _Node(parent, message, msg_id))
            if parent and kind == "user" and any(b.kind == TOOL_RESULT for b in blocks):
                self.results_of.setdefault(parent, []).append(uuid)
            kept = self.preserved.pop(parent, None) if parent else None
            if kept and uuid not in kept:  # the summary: preserved messages follow it
                self.nodes[kept[0]].parent = uuid
                self.contexts.clear()
        if kind != "assistant":
            return
        if record.get("isApiErrorMessage") or raw.get("model") == "<synthetic>":
            text = message.text.lower()
            if any(h in text for h in _OVERFLOW):
                yield Event(CONTEXT_OVERFLOW, record.get("timestamp"), detail=message.text[:300])
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
            client=_client(record),
            conversation=_str(record.get("sessionId")),
            max_tokens=sent.max_tokens if sent else None,
            window_hint=sent.window_hint if sent else None,
            notes=(PROMPT_NOTE,) if sent else (),
        )

    def _preserve(self, boundary: str, kept: list[str]) -> None:
        """Re-link messages a partial compaction kept, so the chain stops at the boundary."""
        kept = [k for k in kept if k in self.nodes]
        if not kept:
            return
        self.nodes[kept[0]].parent = boundary
        for prev, cur in zip(kept, kept[1:]):
            self.nodes[cur].parent = prev
        self.preserved[boundary] = kept
        self.contexts.clear()

    def _context(self, uuid: str | None) -> tuple[Message, ...]:
        """Messages from the root to ``uuid``, one per API message.

        Consecutive records of one API message (same ``message.id``) are joined.
        The walk up stops at the nearest record whose context is known. A reply of
        parallel tool calls is one record per call, each call's result hung on its own
        record, and the chain goes on from the last result only: the other results join
        the chain after the reply.
        """
        start = uuid
        path: list[_Node] = []
        uuids: list[str] = []
        chain: list[Message] = []
        last_id: str | None = None
        while uuid is not None and len(path) < 1_000_000:
            known = self.contexts.get(uuid)
            if known is not None:
                chain, last_id = list(known[0]), known[1]
                break
            node = self.nodes.get(uuid)
            if node is None:
                self.missing.add(uuid)
                break
            path.append(node)
            uuids.append(uuid)
            uuid = node.parent
        on_path = set(uuids)
        aside: list[Message] = []  # results of the reply being joined, off the chain
        for node, at in zip(reversed(path), reversed(uuids), strict=True):
            msg = node.message
            if msg is None:
                continue
            if aside and node.msg_id != last_id:
                chain += aside
                aside = []
            if node.msg_id is not None:
                aside += [m for r in self.results_of.get(at, ()) if r not in on_path
                          and (m := self.nodes[r].message) is not None]
            if node.msg_id is not None and node.msg_id == last_id and chain:
                first = chain[-1]
                chain[-1] = self.intern(Message(first.role, first.blocks + msg.blocks,
                                                first.id, first.timestamp))
            else:
                chain.append(msg)
            last_id = node.msg_id
        chain += aside
        context = tuple(chain)
        if start is not None:
            self.contexts[start] = (context, last_id)
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


def _client(record: dict[str, Any]) -> str | None:
    """'claude-code/2.1.114 (cli)': the version and, where recorded, the entrypoint."""
    version = _str(record.get("version"))
    if version is None:
        return None
    entry = _str(record.get("entrypoint"))
    return f"claude-code/{version} ({entry})" if entry else f"claude-code/{version}"
