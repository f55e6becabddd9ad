"""Gemini CLI chat files (``~/.gemini/tmp/<project hash>/chats/session-*.json[l]``).

Two layouts of one record model, both read by the same parser:

- the older JSON document ``{sessionId, projectHash, startTime, lastUpdated,
  messages: [...]}`` (rewritten whole on every change);
- the newer JSONL log: a header line, one line per message *version* (a
  message id seen again replaces the earlier version in place), ``{"$set":
  {...}}`` metadata updates (``messages`` in a ``$set`` replaces the whole
  history, e.g. after compression) and ``{"$rewindTo": id}`` (drops that
  message and everything after it).

Each ``gemini`` message with ``tokens`` is one API call. Its context is the
conversation before it: user texts, earlier replies with their tool calls,
and the tool results Gemini CLI sent back as a user turn. Thoughts are not
resent, so they only appear in the call's response. The system prompt
(including GEMINI.md memory) and the tool declarations are never recorded:
requests are ``complete=False``.

The Content parts and usage counts are the Gemini API's (``ingest.api.gemini``),
shared with qwen-code, a Gemini CLI fork that stores the same parts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from ctxviewer.fmt import plural
from ctxviewer.ingest.api.anthropic import Interner
from ctxviewer.ingest.api.gemini import error_event, gemini_usage, parts_blocks
from ctxviewer.ingest.base import Head, Item
from ctxviewer.ingest.gemini import CHAT_DOCUMENT, CHAT_JSONL, gemini_document, gemini_jsonl
from ctxviewer.jsonish import js_dumps
from ctxviewer.model import (
    COMPACT_BOUNDARY,
    MAIN,
    SUBAGENT,
    THINKING,
    TOOL_RESULT,
    TOOL_USE,
    Block,
    Event,
    Message,
    Request,
    Skipped,
    Usage,
)

_MODEL_TYPES = frozenset({"gemini", "model", "qwen", "assistant"})  # forks renamed the type
_QUIET_TYPES = frozenset({"info", "warning"})  # UI notices, never sent to the model
NOTES = (
    "Gemini CLI chat file: a transcript, not the request body; not recorded: the system "
    "prompt with the GEMINI.md memory and the skill listing, and the tool declarations, "
    "inferred from the first API usage (a <session_context> message, when recorded, is "
    "counted with its memory files)",
    "usage: the message's tokens (input includes cached; output includes thoughts)",
    "messages: the chat records before this reply, rebuilt as Gemini CLI sends them "
    "(tool results as a user turn, earlier thoughts left out)",
)


@dataclass
class _History:
    """The history of the first ``len(ids)`` messages of the list."""

    ids: set[str] = field(default_factory=set)
    history: list[Message] = field(default_factory=list)
    results: set[str] = field(default_factory=set)  # tool results already in it


class _GeminiParser:
    """Keeps the live message list (id -> latest version) and emits one request per reply."""

    def __init__(self) -> None:
        self.records: dict[str, dict[str, Any]] = {}
        self.cache: dict[str, tuple[Message, ...]] = {}
        self.emitted: dict[str, Usage] = {}
        self.errors: set[str] = set()
        self.kind: str | None = None
        self.pending: tuple[int | None, str] | None = None  # (line, id) of a held reply
        self.intern = Interner()
        # the history built last, to go on from (a session of n replies takes time in n,
        # not n²); dropped when a message it holds changes, or the list is replaced
        self.memo: _History | None = None
        self.messages = True  # False: requests without their messages (``new_parser``)
        # a history replaced with messages dropped, and their ids: a compaction unless the
        # next replacement brings them back (0.61's resume writes the bare session context
        # first, then the history it resumed)
        self.replaced: tuple[Event, set[str]] | None = None

    def feed(self, line: int, record: Any) -> list[Item]:
        out: list[Item] = []
        if not isinstance(record, dict):
            return [Skipped(line, "not a JSON object")]
        held = self.pending
        if held is not None and record.get("id") != held[1] and not _metadata(record):
            self._flush(out)
        if (
            self.replaced is not None
            and not _metadata(record)
            and "$set" not in record
            and "sessionId" not in record
        ):
            out.append(self.replaced[0])
            self.replaced = None
        if isinstance(record.get("$rewindTo"), str):
            self._rewind(record["$rewindTo"])
        elif isinstance(record.get("$set"), dict):
            self._update(line, record["$set"], out)
        elif isinstance(record.get("id"), str):
            self._message(line, record, out)
        elif "sessionId" in record:
            self._update(line, record, out)
        else:
            out.append(Skipped(line, "unknown Gemini CLI record"))
        return out

    def finish(self) -> list[Item]:
        out: list[Item] = []
        self._flush(out)
        if self.replaced is not None:
            out.append(self.replaced[0])
        return out

    def _update(self, line: int, fields: dict[str, Any], out: list[Item]) -> None:
        """A header or ``$set``: session kind, and a whole new history when given."""
        if isinstance(fields.get("kind"), str):
            self.kind = fields["kind"]
        messages = fields.get("messages")
        if not isinstance(messages, list):
            return
        ids = {
            m.get("id") for m in messages if isinstance(m, dict) and isinstance(m.get("id"), str)
        }
        if self.replaced is not None and not self.replaced[1] <= ids:
            out.append(self.replaced[0])  # what it dropped stays dropped: a compaction
        self.replaced = None
        dropped = [i for i in self.records if i not in ids]
        if dropped:
            self.replaced = (
                Event(
                    COMPACT_BOUNDARY,
                    fields.get("lastUpdated"),
                    detail=f"history replaced, {plural(len(dropped), 'message')} dropped",
                ),
                set(dropped),
            )
        self.records, self.cache, self.memo = {}, {}, None
        for m in messages:
            if isinstance(m, dict) and isinstance(m.get("id"), str):
                self._message(line, m, out, listed=True)
            else:
                out.append(Skipped(line, "message without an id"))

    def _rewind(self, target: str) -> None:
        ids = list(self.records)
        keep = ids[: ids.index(target)] if target in self.records else []
        self.records = {i: self.records[i] for i in keep}
        self.cache = {i: m for i, m in self.cache.items() if i in self.records}
        self.memo = None

    def _message(
        self, line: int, rec: dict[str, Any], out: list[Item], listed: bool = False
    ) -> None:
        """One message version; ``listed`` when it comes in a whole list (no own line)."""
        mid, kind = rec["id"], rec.get("type")
        if not isinstance(kind, str):  # the callers checked the id
            out.append(Skipped(line, "message whose type is not text"))
            return
        if kind == "user" or kind in _MODEL_TYPES:
            if self.memo is not None and mid in self.memo.ids:
                self.memo = None
            self.records[mid] = rec
            self.cache.pop(mid, None)
            if kind in _MODEL_TYPES and isinstance(rec.get("tokens"), dict):
                if self.pending is not None and self.pending[1] != mid:
                    self._flush(out)
                if self.pending is None:  # held: the next version may add the tool calls
                    self.pending = (None if listed else line, mid)
        elif kind == "error":
            if mid not in self.errors:
                self.errors.add(mid)
                self._flush(out)
                out.append(error_event(_plain_text(rec.get("content")), rec.get("timestamp")))
        elif kind not in _QUIET_TYPES:
            out.append(Skipped(line, f"unknown message type {kind!r}"))

    def _flush(self, out: list[Item]) -> None:
        """Emit the held reply as a request, from its latest version."""
        pending, self.pending = self.pending, None
        if pending is None or pending[1] not in self.records:
            return
        line, mid = pending
        rec = self.records[mid]
        if not isinstance(rec.get("tokens"), dict):
            return
        usage = gemini_usage(
            rec["tokens"],
            prompt="input",
            cached="cached",
            output="output",
            thoughts="thoughts",
            total="total",
        )
        if self.emitted.get(mid) == usage:
            return  # the same reply again (e.g. a resumed session re-appends it)
        self.emitted[mid] = usage
        sub = self.kind == "subagent"
        out.append(
            Request(
                index=0,
                model=rec.get("model") if isinstance(rec.get("model"), str) else None,
                timestamp=rec.get("timestamp"),
                system=(),
                tools=(),
                messages=self._history_before(mid) if self.messages else (),
                usage=usage,
                complete=False,
                sidechain=sub,
                role=SUBAGENT if sub else MAIN,
                api="gemini",
                response=self._reply(rec) if self.messages else None,
                message_id=mid,
                line=line,
                notes=NOTES,
            )
        )

    def _history_before(self, mid: str) -> tuple[Message, ...]:
        """The turns before ``mid``. A tool result appears once even when a history sync
        (``$set`` messages) also wrote it as a user turn of its own."""
        memo = self.memo
        if memo is None or mid in memo.ids:
            memo = _History()
        for rid, rec in islice(self.records.items(), len(memo.ids), None):
            if rid == mid:
                break
            if rid not in self.cache:
                self.cache[rid] = tuple(self.intern(m) for m in _turns(rec))
            for msg in self.cache[rid]:
                refs = {b.ref for b in msg.blocks if b.kind == TOOL_RESULT and b.ref}
                if refs & memo.results:
                    blocks = tuple(
                        b
                        for b in msg.blocks
                        if not (b.kind == TOOL_RESULT and b.ref in memo.results)
                    )
                    msg = self.intern(Message(msg.role, blocks, msg.id, msg.timestamp))
                memo.results |= refs
                if msg.blocks:
                    memo.history.append(msg)
            memo.ids.add(rid)
        self.memo = memo
        return tuple(memo.history)

    def _reply(self, rec: dict[str, Any]) -> Message:
        raw_thoughts = rec.get("thoughts")
        thoughts = [
            Block(THINKING, _thought_text(t))
            for t in (raw_thoughts if isinstance(raw_thoughts, list) else [])
            if isinstance(t, dict)
        ]
        reply = _turns(rec, keep_thoughts=True)
        blocks = thoughts + (list(reply[0].blocks) if reply else [])
        return Message("assistant", tuple(blocks), rec.get("id"), rec.get("timestamp"))


def _metadata(record: dict[str, Any]) -> bool:
    """A ``$set`` that leaves the messages alone (Gemini CLI writes one after each message)."""
    fields = record.get("$set")
    return isinstance(fields, dict) and "messages" not in fields


def _plain_text(content: Any) -> str:
    return "\n".join(b.text for b in parts_blocks(content) if b.text)


def _thought_text(thought: dict[str, Any]) -> str:
    subject, desc = str(thought.get("subject") or ""), str(thought.get("description") or "")
    return f"{subject}\n{desc}".strip()


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _turns(rec: dict[str, Any], keep_thoughts: bool = False) -> list[Message]:
    """One chat record -> the API turns it stands for (a reply with tool calls adds a
    user turn with their results)."""
    mid, ts = rec.get("id"), rec.get("timestamp")
    blocks = parts_blocks(rec.get("content"), keep_thoughts=keep_thoughts)
    if rec.get("type") == "user":
        return [Message("user", tuple(blocks), mid, ts)] if blocks else []
    calls = [c for c in _list(rec.get("toolCalls")) if isinstance(c, dict)]
    blocks += [
        Block(TOOL_USE, js_dumps(c.get("args") or {}), name=str(c.get("name", "")), ref=c.get("id"))
        for c in calls
    ]
    turns = [Message("assistant", tuple(blocks), mid, ts)] if blocks else []
    results = [b for c in calls for b in parts_blocks(c.get("result"))]
    if results:
        turns.append(Message("user", tuple(results), None, ts))
    return turns


class GeminiReader:
    name, label = CHAT_DOCUMENT.name, CHAT_DOCUMENT.label
    description, document = CHAT_DOCUMENT.description, CHAT_DOCUMENT.document

    def sniff(self, head: Head) -> bool:
        return gemini_document(head)

    def parser(self) -> _GeminiParser:
        return _GeminiParser()


class GeminiJsonlReader:
    name, label = CHAT_JSONL.name, CHAT_JSONL.label
    description, document = CHAT_JSONL.description, CHAT_JSONL.document

    def sniff(self, head: Head) -> bool:
        return gemini_jsonl(head)

    def parser(self) -> _GeminiParser:
        return _GeminiParser()


READER = GeminiReader()
JSONL_READER = GeminiJsonlReader()
