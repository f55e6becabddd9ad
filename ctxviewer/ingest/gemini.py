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

The part helpers here (``parts_blocks``, ``gemini_usage``) are shared with
qwen-code, a Gemini CLI fork that stores the same Content parts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from ctxviewer.fmt import plural
from ctxviewer.ingest import sniffing
from ctxviewer.ingest.anthropic_body import DEFAULT_IMAGE_TOKENS, Interner
from ctxviewer.ingest.base import Head, Item, as_int
from ctxviewer.ingest.classify import split_message_text
from ctxviewer.jsonish import js_dumps
from ctxviewer.model import (
    API_ERROR,
    COMPACT_BOUNDARY,
    CONTEXT_OVERFLOW,
    DOCUMENT,
    IMAGE,
    MAIN,
    OTHER,
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
_OVERFLOW_HINTS = ("exceeds the maximum number of tokens", "context window", "too long",
                   "input token count", "context_length")
NOTES = (
    "Gemini CLI chat file: a transcript, not the request body; not recorded: the system "
    "prompt with the GEMINI.md memory and the skill listing, and the tool declarations, "
    "inferred from the first API usage (a <session_context> message, when recorded, is "
    "counted with its memory files)",
    "usage: the message's tokens (input includes cached; output includes thoughts)",
    "messages: the chat records before this reply, rebuilt as Gemini CLI sends them "
    "(tool results as a user turn, earlier thoughts left out)",
)


def gemini_usage(raw: dict[str, Any], *, prompt: str, cached: str, output: str,
                 thoughts: str, total: str) -> Usage:
    """Gemini-style counts (named by the keyword arguments) -> Usage.

    The prompt count includes the cached part. Gemini reports thoughts apart
    from the candidates; OpenAI-compatible backends (qwen-code) may already
    count them in the candidates: the total tells which.
    """
    p, c, o, t, tot = (as_int(raw.get(k)) for k in (prompt, cached, output, thoughts, total))
    c = min(c, p)
    out = o + t if t and (not tot or tot >= p + o + t) else o
    return Usage(input_tokens=p - c, cache_read_input_tokens=c, output_tokens=out,
                 reasoning_tokens=min(t, out))


def _as_parts(content: Any) -> list[Any]:
    """A PartListUnion (string, part, or list of both) -> a list of parts."""
    if content is None:
        return []
    if isinstance(content, list):
        return content
    return [content]


def _response_text(response: Any) -> tuple[str, bool]:
    """A functionResponse ``response`` -> (text the model reads, is error)."""
    if isinstance(response, dict) and len(response) == 1:
        ((key, value),) = response.items()
        if key in ("output", "error") and isinstance(value, str):
            return value, key == "error"
    if isinstance(response, str):
        return response, False
    return js_dumps(response), isinstance(response, dict) and "error" in response


def _part_blocks(part: Any, keep_thoughts: bool) -> list[Block]:
    if isinstance(part, str):
        return split_message_text(part) if part else []
    if not isinstance(part, dict):
        return []
    if isinstance(part.get("text"), str):
        if part.get("thought"):
            return [Block(THINKING, part["text"])] if keep_thoughts else []
        return split_message_text(part["text"]) if part["text"] else []
    if isinstance(part.get("functionCall"), dict):
        call = part["functionCall"]
        return [Block(TOOL_USE, js_dumps(call.get("args") or {}), name=str(call.get("name", "")),
                      ref=call.get("id"))]
    if isinstance(part.get("functionResponse"), dict):
        resp = part["functionResponse"]
        text, err = _response_text(resp.get("response"))
        tag = split_message_text(text)[0].tag if text else None
        return [Block(TOOL_RESULT, text, tag=tag, name=resp.get("name"), ref=resp.get("id"),
                      is_error=err)]
    for key in ("inlineData", "fileData"):
        if isinstance(part.get(key), dict):
            mime = str(part[key].get("mimeType", ""))
            kind = IMAGE if mime.startswith("image/") else DOCUMENT
            return [Block(kind, "", name=mime or None, fixed_tokens=DEFAULT_IMAGE_TOKENS)]
    if part.get("thoughtSignature") and len(part) == 1:
        return []
    return [Block(OTHER, js_dumps(part), name=next(iter(part), None))]


def parts_blocks(content: Any, *, keep_thoughts: bool = False) -> list[Block]:
    """Gemini Content parts (text, functionCall/Response, inline data) -> Blocks."""
    return [b for part in _as_parts(content) for b in _part_blocks(part, keep_thoughts)]


def error_event(text: str, timestamp: str | None) -> Event:
    """An error notice -> a context-overflow event when it says so, else an API error."""
    low = text.lower()
    kind = CONTEXT_OVERFLOW if any(h in low for h in _OVERFLOW_HINTS) else API_ERROR
    return Event(kind, timestamp, detail=text[:300])


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

    def feed(self, line: int, record: Any) -> list[Item]:
        out: list[Item] = []
        if not isinstance(record, dict):
            return [Skipped(line, "not a JSON object")]
        held = self.pending
        if held is not None and record.get("id") != held[1] and not _metadata(record):
            self._flush(out)
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
        return out

    def _update(self, line: int, fields: dict[str, Any], out: list[Item]) -> None:
        """A header or ``$set``: session kind, and a whole new history when given."""
        if isinstance(fields.get("kind"), str):
            self.kind = fields["kind"]
        messages = fields.get("messages")
        if not isinstance(messages, list):
            return
        ids = {m.get("id") for m in messages if isinstance(m, dict) and isinstance(m.get("id"), str)}
        dropped = [i for i in self.records if i not in ids]
        if dropped:
            out.append(Event(COMPACT_BOUNDARY, fields.get("lastUpdated"),
                             detail=f"history replaced, {plural(len(dropped), 'message')} dropped"))
        self.records, self.cache, self.memo = {}, {}, None
        for m in messages:
            if isinstance(m, dict) and isinstance(m.get("id"), str):
                self._message(line, m, out, listed=True)
            else:
                out.append(Skipped(line, "message without an id"))

    def _rewind(self, target: str) -> None:
        ids = list(self.records)
        keep = ids[:ids.index(target)] if target in self.records else []
        self.records = {i: self.records[i] for i in keep}
        self.cache = {i: m for i, m in self.cache.items() if i in self.records}
        self.memo = None

    def _message(self, line: int, rec: dict[str, Any], out: list[Item],
                 listed: bool = False) -> None:
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
        usage = gemini_usage(rec["tokens"], prompt="input", cached="cached", output="output",
                             thoughts="thoughts", total="total")
        if self.emitted.get(mid) == usage:
            return  # the same reply again (e.g. a resumed session re-appends it)
        self.emitted[mid] = usage
        sub = self.kind == "subagent"
        out.append(Request(
            index=0, model=rec.get("model") if isinstance(rec.get("model"), str) else None, timestamp=rec.get("timestamp"), system=(), tools=(),
            messages=self._history_before(mid) if self.messages else (), usage=usage,
            complete=False, sidechain=sub, role=SUBAGENT if sub else MAIN, api="gemini",
            response=self._reply(rec) if self.messages else None,
            message_id=mid, line=line, notes=NOTES,
        ))

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
                    blocks = tuple(b for b in msg.blocks
                                   if not (b.kind == TOOL_RESULT and b.ref in memo.results))
                    msg = self.intern(Message(msg.role, blocks, msg.id, msg.timestamp))
                memo.results |= refs
                if msg.blocks:
                    memo.history.append(msg)
            memo.ids.add(rid)
        self.memo = memo
        return tuple(memo.history)

    def _reply(self, rec: dict[str, Any]) -> Message:
        raw_thoughts = rec.get("thoughts")
        thoughts = [Block(THINKING, _thought_text(t))
                    for t in (raw_thoughts if isinstance(raw_thoughts, list) else [])
                    if isinstance(t, dict)]
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
    blocks += [Block(TOOL_USE, js_dumps(c.get("args") or {}), name=str(c.get("name", "")),
                     ref=c.get("id")) for c in calls]
    turns = [Message("assistant", tuple(blocks), mid, ts)] if blocks else []
    results = [b for c in calls for b in parts_blocks(c.get("result"))]
    if results:
        turns.append(Message("user", tuple(results), None, ts))
    return turns


class GeminiReader:
    name, label = sniffing.GEMINI.name, sniffing.GEMINI.label
    description, document = sniffing.GEMINI.description, sniffing.GEMINI.document

    def sniff(self, head: Head) -> bool:
        return sniffing.gemini_document(head)

    def parser(self) -> _GeminiParser:
        return _GeminiParser()


class GeminiJsonlReader:
    name, label = sniffing.GEMINI_JSONL.name, sniffing.GEMINI_JSONL.label
    description, document = sniffing.GEMINI_JSONL.description, sniffing.GEMINI_JSONL.document

    def sniff(self, head: Head) -> bool:
        return sniffing.gemini_jsonl(head)

    def parser(self) -> _GeminiParser:
        return _GeminiParser()


READER = GeminiReader()
JSONL_READER = GeminiJsonlReader()
