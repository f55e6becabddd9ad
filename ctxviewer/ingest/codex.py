"""Codex CLI rollout files (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Lines are ``{timestamp, type, payload}``: ``session_meta``, ``turn_context``
(model, cwd...), ``response_item`` (the Responses API items that make up the
conversation), ``event_msg`` (UI events; ``token_count`` carries the usage of
the last model call) and ``compacted`` (history replaced by a summary). Older
rollouts have no envelope: a ``{id, timestamp, instructions}`` line, then raw
items; they record no token counts.

One request per ``token_count`` that reports a new ``last_token_usage`` (Codex
repeats the event with identical totals for the same call). Its context is
the conversation items before the call's own output: Codex 0.39 writes the
event before the call's items, later versions after them, so the trailing
run of model output items is the call's response either way. Instructions
and tool schemas are only recorded by newer versions (``base_instructions``,
``dynamic_tools`` in ``session_meta``); requests stay ``complete=False``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxviewer.ingest import sniffing
from ctxviewer.ingest.anthropic_body import Interner
from ctxviewer.ingest.base import Head, Item, as_int
from ctxviewer.ingest.classify import classify_tool, split_skills_section, split_system_text
from ctxviewer.ingest.codex_items import (
    ITEM_TYPES,
    QUIET_ITEMS,
    compaction_rebuild,
    item_entry,
    merge,
)
from ctxviewer.ingest.gemini import error_event
from ctxviewer.model import (
    COMPACT_BOUNDARY,
    COMPACTION_SUMMARY,
    MAIN,
    MEMORY,
    SUBAGENT,
    TEXT,
    THINKING,
    Block,
    Event,
    Message,
    Request,
    Skipped,
    ToolDef,
    Usage,
)

_Rec = dict[str, Any]
_Out = list[Item]
_ENVELOPE = sniffing.CODEX_ENVELOPE
_FIELDS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")
_NOTE_TRANSCRIPT = ("Codex rollout: a transcript, not the request body; not recorded: the base "
                    "instructions (the system prompt) and the tool schemas, inferred from the "
                    "first API usage")
_NOTE_BASE = ("Codex rollout: a transcript; the system prompt is the recorded base instructions "
              "(session_meta or turn_context); not recorded: the tool schemas, inferred from the "
              "first API usage")
_NOTE_ENCRYPTED = ("a server-side compaction left an encrypted summary: the API counts it, the "
                   "rollout cannot show its text (part of Messages, estimated 0)")
_NOTE_REASONING = ("reasoning items go back to the model with their encrypted content; the "
                   "rollout holds only their summaries")
_NOTE_USAGE = ("usage: token_count.last_token_usage (its input_tokens include "
               "cached_input_tokens: shown as uncached input + cache read)")
_NOTE_ORDER = "messages: the rollout items before this call's output, inferred from record order"
_NOTE_WINDOW = ("window: Codex's model_context_window, already cut to ~95% of the model's window; "
                "Codex's '% left' also subtracts a 12,000-token baseline, ctxviewer shows % of "
                "the window as reported")
_NOTE_LEGACY = "old rollout format: no token counts recorded; this is the final conversation"


@dataclass
class _Pending:
    """A call whose response items may still follow (Codex 0.39 order)."""

    line: int | None
    timestamp: str | None
    model: str | None
    usage: Usage | None
    prompt: list[tuple[bool, Message]]
    response: list[Message] = field(default_factory=list)


def token_usage(last: dict[str, Any]) -> Usage:
    total_in = as_int(last.get("input_tokens"))
    cached = min(as_int(last.get("cached_input_tokens")), total_in)
    return Usage(input_tokens=total_in - cached, cache_read_input_tokens=cached,
                 output_tokens=as_int(last.get("output_tokens")),
                 reasoning_tokens=as_int(last.get("reasoning_output_tokens")))


@dataclass(frozen=True)
class TokenCall:
    """What a ``token_count`` event says of the last model call."""

    last: dict[str, Any] | None  # its usage (None: the event lacks it)
    sig: tuple[Any, ...] | None  # equal for the same call reported again
    window: int | None  # model_context_window, when given


def token_call(p: _Rec) -> TokenCall | None:
    """The call a ``token_count`` event's payload reports (None: rate limits only)."""
    info = p.get("info")
    window = None
    if isinstance(info, dict):
        last, total = info.get("last_token_usage"), info.get("total_token_usage")
        given = info.get("model_context_window")
        window = given if isinstance(given, int) and given > 0 else None
    elif "input_tokens" in p:  # early event layout: the usage itself
        last, total = p, None
    else:
        return None
    if not isinstance(last, dict):
        return TokenCall(None, None, window)
    source = total if isinstance(total, dict) else last
    return TokenCall(last, (total is None,) + tuple(source.get(k) for k in _FIELDS), window)


def compacted_event(p: _Rec, ts: str | None, last_prompt: int | None) -> Event:
    """A ``compacted`` record's event (``last_prompt``: the size before it)."""
    summary = str(p.get("message") or "")
    detail = "history replaced by Codex's replacement_history" \
        if isinstance(p.get("replacement_history"), list) else \
        "history rebuilt as Codex does: user messages + summary (inferred)"
    return Event(COMPACT_BOUNDARY, ts, pre_tokens=last_prompt,
                 detail=f"{detail}; summary: {summary[:300]}")


class _CodexParser:
    def __init__(self) -> None:
        self.entries: list[tuple[bool, Message]] = []
        self.pending: _Pending | None = None
        self.model: str | None = None
        self.window: int | None = None
        self.system: tuple[Block, ...] = ()
        self.tools: tuple[ToolDef, ...] = ()
        self.user_instructions: str | None = None
        self.memory_seen = False
        self.turn_base: tuple[Block, ...] = ()  # turn_context.base_instructions
        self.developer_instructions: str | None = None  # turn_context.developer_instructions
        self.developer_seen: set[str] = set()  # texts of recorded developer messages
        self.last_sig: tuple[Any, ...] | None = None
        self.last_prompt: int | None = None
        self.emitted = 0
        self.legacy = False
        self.subagent = False  # a sub-agent thread's rollout (session_meta.source.subagent)
        self.client: str | None = None  # "codex/<cli_version>" from session_meta
        self.intern = Interner()
        self.merged = _MergedPrefix()

    def feed(self, line: int, record: Any) -> list[Item]:
        out: list[Item] = []
        if not isinstance(record, dict):
            return [Skipped(line, "not a JSON object")]
        kind, payload = record.get("type"), record.get("payload")
        ts = record.get("timestamp")
        if isinstance(kind, str) and kind in _ENVELOPE and isinstance(payload, dict):
            getattr(self, f"_on_{kind}")(line, ts, payload, out)
        elif "record_type" in record:
            pass  # old format: a state snapshot line
        elif isinstance(kind, str) and (kind in ITEM_TYPES or kind in QUIET_ITEMS):
            self.legacy = True
            self._on_response_item(line, ts, record, out)
        elif kind is None and "id" in record and "timestamp" in record:
            self.legacy = True
            self._on_session_meta(line, ts, record, out)
        else:
            out.append(Skipped(line, f"unknown record type {kind!r}"))
        return out

    def finish(self) -> list[Item]:
        out: list[Item] = []
        self._flush(out)
        if self.legacy and not self.emitted and self.entries:
            self.pending = _Pending(None, self.entries[-1][1].timestamp, self.model, None,
                                    self.entries)
            self._flush(out, (_NOTE_LEGACY,))
        return out

    def _on_session_meta(self, line: int, ts: str | None, p: _Rec, out: _Out) -> None:
        version = p.get("cli_version")
        if isinstance(version, str) and version:
            self.client = f"codex/{version}"
        base = p.get("base_instructions")
        text = base.get("text") if isinstance(base, dict) else base
        if isinstance(text, str) and text:
            self.system = tuple(split_system_text(text))
        if isinstance(p.get("instructions"), str) and p["instructions"].strip():
            self.user_instructions = p["instructions"]
        source = p.get("source")
        self.subagent = self.subagent or (isinstance(source, dict) and "subagent" in source)
        listed = p.get("dynamic_tools")  # a list of tool objects; anything else lists none
        tools = [t for t in listed if isinstance(t, dict) and t.get("name")] \
            if isinstance(listed, list) else []
        if tools:
            self.tools = tuple(classify_tool(str(t["name"]), t, str(t.get("description", "")))
                               for t in tools)

    def _on_turn_context(self, line: int, ts: str | None, p: _Rec, out: _Out) -> None:
        """The turn's settings; 0.5x-0.6x also record the turn's instructions here
        (``TurnContextItem.base_instructions``, ``user_instructions``,
        ``developer_instructions``)."""
        if isinstance(p.get("model"), str):
            self.model = p["model"]
        base = p.get("base_instructions")
        if isinstance(base, str) and base.strip():
            self.turn_base = tuple(split_system_text(base))
        user = p.get("user_instructions")
        if isinstance(user, str) and user.strip():
            self.user_instructions = user
        dev = p.get("developer_instructions")
        self.developer_instructions = dev if isinstance(dev, str) and dev.strip() else None

    def _on_response_item(self, line: int, ts: str | None, p: _Rec, out: _Out) -> None:
        entry = item_entry(p, ts)
        if entry is None:
            kind = p.get("type")
            if not (isinstance(kind, str) and kind in QUIET_ITEMS):
                out.append(Skipped(line, f"unknown response_item type {p.get('type')!r}"))
            return
        is_output, msg = entry
        msg = self.intern(msg)
        if not is_output:
            self._flush(out)
        elif self.pending is not None:
            self.pending.response.append(msg)
        self.memory_seen = self.memory_seen or MEMORY in msg.tags
        if msg.role == "developer":
            self.developer_seen.update(b.text.strip() for b in msg.blocks)
        self.entries.append((is_output, msg))

    def _on_event_msg(self, line: int, ts: str | None, p: _Rec, out: _Out) -> None:
        kind = p.get("type")
        if kind == "token_count":
            self._token_count(line, ts, p, out)
        elif kind == "error" and isinstance(p.get("message"), str):
            self._flush(out)
            out.append(error_event(p["message"], ts))
        # every other event_msg repeats an item for the UI or carries no context

    def _on_compacted(self, line: int, ts: str | None, p: _Rec, out: _Out) -> None:
        self._flush(out)
        summary = str(p.get("message") or "")
        history = p.get("replacement_history")
        if isinstance(history, list):
            entries = [e for item in history if isinstance(item, dict)
                       if (e := item_entry(item, ts)) is not None]
        else:
            entries = compaction_rebuild(self.entries, summary, ts)
        self.entries = [(o, self.intern(m)) for o, m in entries]
        out.append(compacted_event(p, ts, self.last_prompt))

    def _token_count(self, line: int, ts: str | None, p: _Rec, out: _Out) -> None:
        call = token_call(p)
        if call is None:
            return  # rate limits only
        if call.window:
            self.window = call.window
        if call.last is None:
            out.append(Skipped(line, "token_count without last_token_usage"))
            return
        if call.sig == self.last_sig:
            return  # the same call reported again
        self.last_sig = call.sig
        self._flush(out)
        cut = len(self.entries)
        while cut and self.entries[cut - 1][0]:
            cut -= 1
        usage = token_usage(call.last)
        self.last_prompt = usage.prompt_tokens
        self.pending = _Pending(line, ts, self.model, usage, self.entries[:cut],
                                [m for _, m in self.entries[cut:]])

    def _flush(self, out: list[Item], notes: tuple[str, ...] = ()) -> None:
        pend, self.pending = self.pending, None
        if pend is None:
            return
        self.emitted += 1
        out.append(self._request(pend, notes))

    def _request(self, pend: _Pending, notes: tuple[str, ...]) -> Request:
        system = self.turn_base or self.system
        if self.user_instructions and not self.memory_seen:
            system += tuple(b if b.tag else Block(TEXT, b.text, tag=MEMORY, name="AGENTS.md")
                            for b in split_skills_section(self.user_instructions))
        dev = self.developer_instructions
        if dev and dev.strip() not in self.developer_seen:
            system += (Block(TEXT, dev, name="developer_instructions"),)
        notes = (_NOTE_BASE if system else _NOTE_TRANSCRIPT,) + notes
        if pend.usage is not None:
            notes += (_NOTE_USAGE, _NOTE_ORDER)
        messages, thinking, encrypted = self.merged.messages(pend.prompt, self.intern)
        if thinking:
            notes += (_NOTE_REASONING,)
        if encrypted:
            notes += (_NOTE_ENCRYPTED,)
        if self.window:
            notes += (_NOTE_WINDOW,)
        reply = merge([(True, m) for m in pend.response])
        return Request(
            index=0, model=pend.model, timestamp=pend.timestamp, system=system, tools=self.tools,
            messages=messages, usage=pend.usage,
            complete=False, sidechain=self.subagent, role=SUBAGENT if self.subagent else MAIN,
            api="codex", response=reply[0] if reply else None, window_hint=self.window,
            line=pend.line, notes=notes, client=self.client,
        )


class _MergedPrefix:
    """``merge`` of a call's items, remembered up to the last item that closes a run of
    model output: the next call's items start with the same entries (the conversation
    only grows between compactions), so only what follows is merged again. Without it
    a rollout of n calls took time in n²: 90 s for 4,700 calls."""

    def __init__(self) -> None:
        self.first: tuple[bool, Message] | None = None  # the entries merged: their first
        self.last: tuple[bool, Message] | None = None  # ... and their last
        self.done = 0  # entries merged (the last of them closes any output run)
        self.msgs: list[Message] = []
        self.thinking = False  # a reasoning block among them
        self.encrypted = False  # an encrypted compaction summary among them

    def messages(self, entries: list[tuple[bool, Message]], intern: Interner
                 ) -> tuple[tuple[Message, ...], bool, bool]:
        """``merge(entries)`` (interned), and whether they hold reasoning, an encrypted
        summary."""
        d = self.done
        if not (d and len(entries) >= d and entries[0] is self.first
                and entries[d - 1] is self.last):
            self.first = self.last = None
            self.done, self.msgs, self.thinking, self.encrypted = 0, [], False, False
        closed = len(entries)
        while closed > self.done and entries[closed - 1][0]:
            closed -= 1  # the trailing output run may still grow: not remembered
        seg = _flags(entries[self.done:closed])
        tail = _flags(entries[closed:])
        thinking = self.thinking or seg[0] or tail[0]
        encrypted = self.encrypted or seg[1] or tail[1]
        if closed > self.done:
            self.msgs += [intern(m) for m in merge(entries[self.done:closed])]
            self.done = closed
            self.first, self.last = entries[0], entries[closed - 1]
            self.thinking, self.encrypted = self.thinking or seg[0], self.encrypted or seg[1]
        run = [intern(m) for m in merge(entries[closed:])]
        return tuple(self.msgs + run), thinking, encrypted


def _flags(entries: list[tuple[bool, Message]]) -> tuple[bool, bool]:
    """Whether ``entries`` hold a reasoning block, an encrypted compaction summary."""
    blocks = [b for _, m in entries for b in m.blocks]
    return (any(b.kind == THINKING for b in blocks),
            any(b.tag == COMPACTION_SUMMARY and not b.text for b in blocks))


class CodexReader:
    name, label = sniffing.CODEX.name, sniffing.CODEX.label
    description, document = sniffing.CODEX.description, sniffing.CODEX.document

    def sniff(self, head: Head) -> bool:
        return sniffing.codex(head)

    def parser(self) -> _CodexParser:
        return _CodexParser()


READER = CodexReader()
