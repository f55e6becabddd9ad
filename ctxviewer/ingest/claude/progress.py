"""Sub-agent activity nested in Claude Code's ``progress`` records.

Claude Code 2.x writes what a sub-agent (the Task / Agent tool) does into the
main transcript as ``progress`` records with ``data.type == "agent_progress"``:
each holds one of the sub-agent's messages (``data.message``: the prompt,
assistant turns with their API usage, tool results) and its ``agentId``. Some
runs have a file of their own as well (``<session>/subagents/agent-<id>.jsonl``),
some only these records. Each assistant turn with usage is one API call of the
sub-agent; its context is the sub-agent's messages before it. The records of one
assistant message make one message, and the tool results answering it one user
message, as the API saw them, also where the records of parallel calls and their
results interleave.
"""

from __future__ import annotations

from typing import Any

from ctxviewer.ingest.api.anthropic import Interner, content_blocks, usage_from
from ctxviewer.model import SUBAGENT, TOOL_RESULT, TOOL_USE, Message, Request

NOTE = (
    "sub-agent activity from the main transcript's progress records (Claude Code 2.x); "
    "its system prompt and tools are not recorded"
)


def _s(value: Any) -> str | None:
    return value if isinstance(value, str) else None


class ProgressAgents:
    """Per sub-agent, its messages so far; emits one request per new API call."""

    def __init__(self, intern: Interner) -> None:
        self.intern = intern
        self.messages: dict[str, list[Message]] = {}
        # per agent, where each assistant message (by id) and the results answering it
        # sit in its messages
        self.calls: dict[str, dict[str, int]] = {}
        self.results: dict[str, dict[str, int]] = {}
        self.tool_turn: dict[str, str] = {}  # tool_use id -> the message id that made it

    def feed(self, line: int, record: dict[str, Any]) -> Request | None:
        data = record.get("data")
        if not isinstance(data, dict) or data.get("type") != "agent_progress":
            return None
        agent, wrapped = _s(data.get("agentId")), data.get("message")
        if (
            agent is None
            or not isinstance(wrapped, dict)
            or not isinstance(wrapped.get("message"), dict)
        ):
            return None
        raw = wrapped["message"]
        kind = wrapped.get("type")
        if kind not in ("user", "assistant"):
            return None
        chain = self.messages.setdefault(agent, [])
        if not chain and kind == "assistant" and _s(data.get("prompt")):
            chain.append(self.intern(Message("user", tuple(content_blocks(data["prompt"])))))
        msg_id = _s(raw.get("id")) if kind == "assistant" else None
        message = self.intern(
            Message(
                kind,
                tuple(content_blocks(raw.get("content"))),
                msg_id or _s(wrapped.get("uuid")),
                _s(wrapped.get("timestamp")),
            )
        )
        context = tuple(chain)
        if msg_id is not None:
            for b in message.blocks:
                if b.kind == TOOL_USE and isinstance(b.ref, str):
                    self.tool_turn[b.ref] = msg_id
            self._add(chain, self.calls.setdefault(agent, {}), msg_id, message)
        else:
            answered = next(
                (
                    self.tool_turn[b.ref]
                    for b in message.blocks
                    if b.kind == TOOL_RESULT and isinstance(b.ref, str) and b.ref in self.tool_turn
                ),
                None,
            )
            if answered is not None:
                self._add(chain, self.results.setdefault(agent, {}), answered, message)
            else:
                chain.append(message)
        usage = usage_from(raw.get("usage")) if kind == "assistant" else None
        if usage is None:
            return None
        return Request(
            index=0,
            model=_s(raw.get("model")),
            timestamp=_s(wrapped.get("timestamp")) or _s(record.get("timestamp")),
            system=(),
            tools=(),
            messages=context,
            usage=usage,
            complete=False,
            sidechain=True,
            role=SUBAGENT,
            agent=agent,
            api="anthropic",
            response=message,
            message_id=msg_id,
            request_id=_s(wrapped.get("requestId")),
            line=line,
            notes=(NOTE,),
        )

    def _add(
        self, chain: list[Message], where: dict[str, int], turn: str, message: Message
    ) -> None:
        """Append ``message``, or join it to the message of ``turn`` already in ``chain``
        (one API call streamed as several records; the results of parallel calls)."""
        at = where.get(turn)
        if at is None or at >= len(chain):
            where[turn] = len(chain)
            chain.append(message)
            return
        prev = chain[at]
        chain[at] = self.intern(
            Message(prev.role, prev.blocks + message.blocks, prev.id, prev.timestamp)
        )
