"""qwen-code chat records (``~/.qwen/projects/<project>/chats/<session>.jsonl``;
older builds: ``~/.qwen/tmp/<hash>/chats/``).

qwen-code is a Gemini CLI fork that logs one JSON record per line:
``{uuid, parentUuid, sessionId, timestamp, type, subtype?, cwd, version,
message?, usageMetadata?, model?, contextWindowSize?, systemPayload?}`` with
``type`` one of ``user``, ``assistant``, ``tool_result``, ``system``.
``message`` is a Gemini ``Content`` (``{role, parts}``). Records form a tree
through ``parentUuid`` (a rewind re-roots the chain), and a ``system`` record
with subtype ``chat_compression`` stores the history the model sees from then
on (``systemPayload.compressedHistory``).

One request per ``assistant`` record with ``usageMetadata``. Its context is
what qwen-code rebuilds on resume: the chain of records from the root to the
reply's parent, starting over at the last compression checkpoint in it, with
earlier thoughts left out. The system prompt (with QWEN.md memory) and the
tool declarations are not recorded: requests are ``complete=False``. Older
qwen-code builds wrote Gemini CLI's JSON chat files; ``ctxviewer.ingest.gemini.chat``
reads those.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ctxviewer.ingest.api.anthropic import Interner
from ctxviewer.ingest.api.gemini import error_event, gemini_usage, parts_blocks
from ctxviewer.ingest.base import Head, Item, as_dict, as_int
from ctxviewer.ingest.chains import CYCLE, Links
from ctxviewer.ingest.qwen import FORMAT, QWEN_TYPES, qwen_code
from ctxviewer.model import (
    COMPACT_BOUNDARY,
    MAIN,
    SUBAGENT,
    SYSTEM_REMINDER,
    Event,
    Message,
    Request,
    Skipped,
)

_TYPES = QWEN_TYPES
NOTES = (
    "qwen-code chat record: a transcript, not the request body; not recorded: the system "
    "prompt with the QWEN.md memory, the auto-memory and the deferred-tools list, and the "
    "tool declarations with the skill listing, inferred from the first API usage",
    "usage: usageMetadata (promptTokenCount includes cachedContentTokenCount)",
    "messages: the parentUuid chain before this reply, from the last chat_compression "
    "checkpoint, earlier thoughts left out (as qwen-code rebuilds its history)",
)


# Records with a message that never reaches the model (SessionApiHistoryAccumulator.add
# in qwen-code's session-api-history.ts): realtime transcripts and code-mode internal
# tool results.
_UNSENT = frozenset({"realtime_message", "code_mode_tool_result"})
# User records qwen-code writes on its own; their text is a named reminder.
_INJECTED_USER = frozenset({"notification", "background_task_completed"})


@dataclass(frozen=True, slots=True)
class _Node:
    """A record of a qwen-code chat tree: its parent and its messages."""

    parent: str | None
    messages: tuple[Message, ...] = ()
    merge: bool = False  # a mid-turn user message joins the preceding user turn
    base: tuple[Message, ...] | None = None  # a compression checkpoint's history
    command: str | None = None  # a plain user record's only text (a slash command's input?)


def _role(content: dict[str, Any]) -> str:
    return "assistant" if content.get("role") == "model" else "user"


def _content_message(
    content: Any, mid: str | None, ts: str | None, keep_thoughts: bool = False
) -> Message | None:
    """A Gemini Content ``{role, parts}`` -> Message (None when empty)."""
    if not isinstance(content, dict):
        return None
    blocks = parts_blocks(content.get("parts"), keep_thoughts=keep_thoughts)
    return Message(_role(content), tuple(blocks), mid, ts) if blocks else None


class _QwenParser:
    def __init__(self) -> None:
        self.nodes: dict[str, _Node] = {}
        self.last_uuid: str | None = None
        self.intern = Interner()
        # the last history built (uuid, messages): the next request's walk stops there, so
        # a session of n requests takes time in n, not n² (a node replaced drops it)
        self.memo: tuple[str, tuple[Message, ...]] | None = None
        self.links = Links()  # to keep the chains free of cycles

    def _parent_of(self, uuid: str) -> str | None:
        node = self.nodes.get(uuid)
        return node.parent if node is not None else None

    def feed(self, line: int, record: Any) -> list[Item]:
        if not isinstance(record, dict):
            return [Skipped(line, "not a JSON object")]
        kind = record.get("type")
        if not isinstance(kind, str) or kind not in _TYPES:
            return [Skipped(line, f"unknown record type {kind!r}")]
        uuid = u if isinstance(u := record.get("uuid"), str) else f"line:{line}"
        parent = record.get("parentUuid") if "parentUuid" in record else self.last_uuid
        parent = parent if isinstance(parent, str) else None
        out: list[Item] = []
        if parent is not None and self.links.closes_cycle(uuid, parent, self._parent_of):
            out.append(Skipped(line, CYCLE))
            parent = None
        self.links.add(parent)
        node = self._node(line, record, parent, out)
        if uuid in self.nodes:
            self.memo = None
        self.nodes[uuid] = node
        self.last_uuid = uuid
        if kind == "assistant" and isinstance(record.get("usageMetadata"), dict):
            out.append(self._request(line, uuid, record, parent))
        return out

    def finish(self) -> list[Item]:
        return []

    def _node(self, line: int, rec: dict[str, Any], parent: str | None, out: list[Item]) -> _Node:
        kind, ts, sub = rec.get("type"), rec.get("timestamp"), rec.get("subtype")
        if kind == "system":  # none reaches the model but a compression checkpoint
            if sub == "chat_compression":
                return self._compression(rec, parent, out)
            if sub == "ui_telemetry":  # API errors are only logged as UI telemetry
                out.extend(system_events(rec))
            if sub == "slash_command":
                self._local_command(rec, parent)
            return _Node(parent)
        if isinstance(sub, str) and sub in _UNSENT:
            return _Node(parent)
        msg = _content_message(rec.get("message"), rec.get("uuid"), ts)
        if msg is not None and kind == "user" and isinstance(sub, str) and sub in _INJECTED_USER:
            msg = Message(
                msg.role,
                tuple(
                    b if b.tag else replace(b, tag=SYSTEM_REMINDER, name=sub) for b in msg.blocks
                ),
                msg.id,
                msg.timestamp,
            )
        return _Node(
            parent,
            (self.intern(msg),) if msg else (),
            merge=sub == "mid_turn_user_message",
            command=_only_text(rec) if kind == "user" and sub is None else None,
        )

    def _local_command(self, rec: dict[str, Any], parent: str | None) -> None:
        """A slash command answered locally: its input never reached the model, so the
        user record that holds it leaves the history (as qwen-code's own rebuild does)."""
        payload = as_dict(rec.get("systemPayload"))
        items = payload.get("outputHistoryItems")
        node = self.nodes.get(parent) if parent is not None else None
        if (
            parent is not None
            and node is not None
            and node.command is not None
            and payload.get("phase") == "result"
            and payload.get("sentToModel") is not True
            and isinstance(items, list)
            and items
            and all(isinstance(i, dict) and i.get("type") == "assistant" for i in items)
            and node.command == payload.get("rawCommand")
        ):
            self.nodes[parent] = _Node(node.parent)
            self.memo = None

    def _compression(self, rec: dict[str, Any], parent: str | None, out: list[Item]) -> _Node:
        payload = as_dict(rec.get("systemPayload"))
        history = payload.get("compressedHistory")
        out.extend(system_events(rec))
        if not isinstance(history, list):
            return _Node(parent)
        msgs = [_content_message(c, None, rec.get("timestamp")) for c in history]
        return _Node(parent, base=tuple(self.intern(m) for m in msgs if m is not None))

    def _request(self, line: int, uuid: str, rec: dict[str, Any], parent: str | None) -> Request:
        reply = _content_message(rec.get("message"), uuid, rec.get("timestamp"), keep_thoughts=True)
        return reply_request(line, uuid, rec, self._context(parent), reply)

    def _context(self, uuid: str | None) -> tuple[Message, ...]:
        """The API history up to ``uuid``: back to the root, the last checkpoint or the
        last history built (``memo``)."""
        chain: list[_Node] = []
        base: tuple[Message, ...] = ()
        seen: set[str] = set()
        start = uuid
        memo = self.memo
        while uuid is not None and uuid not in seen:
            if memo is not None and uuid == memo[0]:
                base = memo[1]
                break
            seen.add(uuid)
            node = self.nodes.get(uuid)
            if node is None:
                break
            if node.base is not None:
                base = node.base
                break
            chain.append(node)
            uuid = node.parent
        msgs = list(base)
        for node in reversed(chain):
            for m in node.messages:
                if node.merge and msgs and msgs[-1].role == "user":
                    prev = msgs[-1]
                    msgs[-1] = self.intern(
                        Message("user", prev.blocks + m.blocks, prev.id, prev.timestamp)
                    )
                else:
                    msgs.append(m)
        out = tuple(msgs)
        if start is not None:
            self.memo = (start, out)
        return out


def system_events(rec: dict[str, Any]) -> list[Event]:
    """What a ``system`` record tells: a compression checkpoint, or an API error, which
    qwen-code logs only as UI telemetry (``qwen-code.api_error``)."""
    sub, payload = rec.get("subtype"), as_dict(rec.get("systemPayload"))
    if sub == "chat_compression":
        info = as_dict(payload.get("info"))
        return [
            Event(
                COMPACT_BOUNDARY,
                rec.get("timestamp"),
                pre_tokens=as_int(info.get("originalTokenCount")) or None,
                post_tokens=as_int(info.get("newTokenCount")) or None,
                detail="qwen-code chat_compression checkpoint",
            )
        ]
    event = as_dict(payload.get("uiEvent"))
    if sub == "ui_telemetry" and str(event.get("event.name", "")).endswith("api_error"):
        text = str(event.get("error") or event.get("error_message") or "API error")
        return [error_event(text, rec.get("timestamp"))]
    return []


def reply_request(
    line: int,
    uuid: str,
    rec: dict[str, Any],
    messages: tuple[Message, ...] = (),
    reply: Message | None = None,
    index: int = 0,
) -> Request:
    """The request an ``assistant`` record with ``usageMetadata`` stands for, with its
    context ``messages`` and ``reply`` (none: a row's request)."""
    usage = gemini_usage(
        rec["usageMetadata"],
        prompt="promptTokenCount",
        cached="cachedContentTokenCount",
        output="candidatesTokenCount",
        thoughts="thoughtsTokenCount",
        total="totalTokenCount",
    )
    side = bool(rec.get("isSidechain"))
    return Request(
        index=index,
        model=rec.get("model"),
        timestamp=rec.get("timestamp"),
        system=(),
        tools=(),
        messages=messages,
        usage=usage,
        complete=False,
        sidechain=side,
        role=SUBAGENT if side else MAIN,
        agent=rec.get("agentId"),
        api="gemini",
        response=reply,
        message_id=uuid,
        window_hint=as_int(rec.get("contextWindowSize")) or None,
        line=line,
        notes=NOTES,
        client=f"qwen-code/{v}" if isinstance(v := rec.get("version"), str) and v else None,
        conversation=rec.get("sessionId") if isinstance(rec.get("sessionId"), str) else None,
    )


def _only_text(rec: dict[str, Any]) -> str | None:
    """The text of a record whose message is one bare text part, else None."""
    msg = rec.get("message")
    parts = msg.get("parts") if isinstance(msg, dict) else None
    if (
        isinstance(parts, list)
        and len(parts) == 1
        and isinstance(parts[0], dict)
        and list(parts[0]) == ["text"]
        and isinstance(parts[0]["text"], str)
    ):
        return parts[0]["text"]
    return None


class QwenCodeReader:
    name, label = FORMAT.name, FORMAT.label
    description, document = FORMAT.description, FORMAT.document

    def sniff(self, head: Head) -> bool:
        return qwen_code(head)

    def parser(self) -> _QwenParser:
        return _QwenParser()


READER = QwenCodeReader()
