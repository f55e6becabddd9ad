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
run of model output items is the call's response either way. A rollout that
records no ``token_count`` at all (Codex Desktop 0.128) still has its calls:
each run of model output items is one, without usage, its size estimated. Instructions
and tool schemas are only recorded by newer versions (``base_instructions``,
``dynamic_tools`` in ``session_meta``); requests stay ``complete=False``.

``messages`` False (the library's rows, ``new_parser``): the same requests, events,
roles and sizes, without their messages. The items that are model output or a tool's
output (most of the bytes) are not made into messages; what the rest of the reader asks
of them (whether a tool's output is tagged memory or a compaction summary) is read from
them when asked. ``inexact`` says why such a read may differ from the full one (a
compaction the session builder would infer from the messages, a call without usage):
the caller reads the log in full then.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from ctxviewer.ingest.api.anthropic import Interner
from ctxviewer.ingest.api.gemini import error_event
from ctxviewer.ingest.api.openai import ADDITIONAL_TOOLS, additional_tools, content_text
from ctxviewer.ingest.base import MAX_TOKENS, Head, Item, as_int
from ctxviewer.ingest.builder import SUMMARY_REACH, opens_with_summary
from ctxviewer.ingest.classify import classify_tool, split_skills_section, split_system_text
from ctxviewer.ingest.codex import (
    CODEX_ENVELOPE,
    CODEX_INPUT_ITEMS,
    CODEX_OUTPUT_ITEMS,
    FORMAT,
    codex,
)
from ctxviewer.ingest.codex.items import (
    ITEM_TYPES,
    QUIET_ITEMS,
    compaction_rebuild,
    item_entry,
    merge,
)
from ctxviewer.model import (
    AUXILIARY,
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
_ENVELOPE = CODEX_ENVELOPE
_FIELDS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")
_NOTE_TRANSCRIPT = (
    "Codex rollout: a transcript, not the request body; not recorded: the base "
    "instructions (the system prompt) and the tool schemas, inferred from the "
    "first API usage"
)
_NOTE_BASE = (
    "Codex rollout: a transcript; the system prompt is the recorded base instructions "
    "(session_meta or turn_context); not recorded: the tool schemas, inferred from the "
    "first API usage"
)
_NOTE_ENCRYPTED = (
    "a server-side compaction left an encrypted summary: the API counts it, the "
    "rollout cannot show its text (part of Messages, estimated 0)"
)
_NOTE_REASONING = (
    "reasoning items go back to the model with their encrypted content; the "
    "rollout holds only their summaries"
)
_NOTE_USAGE = (
    "usage: token_count.last_token_usage (its input_tokens include "
    "cached_input_tokens: shown as uncached input + cache read)"
)
_NOTE_ORDER = "messages: the rollout items before this call's output, inferred from record order"
_NOTE_WINDOW = (
    "window: Codex's model_context_window, already cut to ~95% of the model's window; "
    "Codex's '% left' also subtracts a 12,000-token baseline, ctxviewer shows % of "
    "the window as reported"
)
_NOTE_LEGACY = "old rollout format: no token counts recorded; this is the final conversation"
_NOTE_COMPACTION_CALL = (
    "Codex's compaction call: the history and its compaction prompt (not "
    "recorded) went to the model, which wrote the summary"
)
_NOTE_WHOLE = (
    "Codex rollout: a transcript that holds the request's whole input: the base "
    "instructions (the system prompt) and the additional_tools item (the tool "
    "schemas as sent)"
)
REASONING_OVERHEAD = 650  # bytes Codex takes off an encrypted reasoning item's estimate
_NOTE_NO_COUNTS = (
    "no API counts: this rollout records no token_count events (Codex Desktop "
    "writes none), so each call is a run of model output items and its size an "
    "estimate"
)


@dataclass(slots=True)
class _Pending:
    """A call whose response items may still follow (Codex 0.39 order)."""

    line: int | None
    timestamp: str | None
    model: str | None
    usage: Usage | None
    prompt: list[tuple[bool, Message]]
    response: list[Message] = field(default_factory=list)
    fresh: bool = True  # input items came since the call before: not a rerun of its history
    silent: bool = False  # no model output came between the call before and this one
    side: str | None = None  # why this call is no turn of the conversation (a compaction call)
    measure: int | None = None  # what Codex compared with its limit before this call
    # without messages: what the session builder reads of ``prompt``'s merged messages
    opening_summary: bool = False  # a compaction summary opens them
    count: int = 0  # how many there are


def _tokens(size: int) -> int:
    """Codex's bytes-to-tokens rule (``approx_tokens_from_byte_count``): 4 bytes a token,
    rounded up."""
    return (size + 3) // 4


def _usage(last: dict[str, Any]) -> Usage:
    total_in, cached = last.get("input_tokens"), last.get("cached_input_tokens")
    out, reasoning = last.get("output_tokens"), last.get("reasoning_output_tokens")
    if not (  # the usual record (plain counts) costs no ``as_int``
        total_in.__class__ is cached.__class__ is out.__class__ is reasoning.__class__ is int
        and 0 <= total_in <= MAX_TOKENS
        and 0 <= cached <= MAX_TOKENS
        and 0 <= out <= MAX_TOKENS
        and 0 <= reasoning <= MAX_TOKENS
    ):
        total_in, cached = as_int(total_in), as_int(cached)
        out, reasoning = as_int(out), as_int(reasoning)
    cached = min(cached, total_in)
    return Usage(total_in - cached, 0, cached, out, 0, reasoning)


_OUTPUT = Message("assistant", ())  # a model output item, read without its message


class _CodexParser:
    def __init__(self) -> None:
        self.messages = True  # False: requests without messages (the module's docstring)
        self.inexact: str | None = None  # without messages: why the rows may differ
        # without messages: a tool output's stand-in message -> (it, its item), read when
        # its tags are asked for; the stand-ins not yet looked at for memory
        self.deferred: dict[int, tuple[Message, _Rec]] = {}
        self.unchecked: list[Message] = []
        self.merged_count = 0  # messages the entries merge into (without messages)
        self.events_since: list[str] = []  # kinds of the events since the last request
        self.last_whole: tuple[bool, int] | None = None  # the last one's opening, count
        self.opening: bool | None = None  # ``_opening``'s answer, once no later item changes it
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
        self.counted = False  # a token_count with usage was seen
        self.run_line: int | None = None  # the line of the current run of model output
        self.legacy = False
        self.subagent = False  # a sub-agent thread's rollout (session_meta.source.subagent)
        self.client: str | None = None  # "codex/<cli_version>" from session_meta
        self.intern = Interner()
        self.merged = _MergedPrefix()
        self.base_text: str | None = None  # the base instructions (session_meta, turn_context)
        self.recorded_tools = False  # tools from an additional_tools item
        # Codex's own measure of the context (``get_total_token_usage``): the last call's
        # total tokens, its estimate of the encrypted reasoning before the last user
        # message (unless the server counted it), and of the items since the model's last
        self.reasoning = 0  # estimate of every encrypted reasoning item so far
        self.reasoning_before_user = 0  # ... of those before the last user message
        self.est: list[int] = []  # Codex's estimate of each entry (its input items)
        self.reasoning_included = False  # token_count: last_usage_includes_reasoning
        self.last_total: int | None = None  # the last call's total tokens
        self.entries_at_call = 0  # entries when the last call was seen
        self.held: Event | None = None  # a compaction, until Codex's estimate after it
        self.estimate: int | None = None  # Codex's estimate since the last call (0.10x: before
        # the compaction it belongs to)

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
        self._uncounted_call(out)
        self._release(out)
        if self.legacy and not self.emitted and self.entries:
            self.pending = _Pending(
                None, self.entries[-1][1].timestamp, self.model, None, self.entries
            )
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
            self.base_text = text.strip()
        if isinstance(p.get("instructions"), str) and p["instructions"].strip():
            self.user_instructions = p["instructions"]
        source = p.get("source")
        self.subagent = self.subagent or (isinstance(source, dict) and "subagent" in source)
        listed = p.get("dynamic_tools")  # a list of tool objects; anything else lists none
        tools = (
            [t for t in listed if isinstance(t, dict) and t.get("name")]
            if isinstance(listed, list)
            else []
        )
        if tools and not self.recorded_tools:
            self.tools = tuple(
                classify_tool(str(t["name"]), t, str(t.get("description", ""))) for t in tools
            )

    def _on_turn_context(self, line: int, ts: str | None, p: _Rec, out: _Out) -> None:
        """The turn's settings; 0.5x-0.6x also record the turn's instructions here
        (``TurnContextItem.base_instructions``, ``user_instructions``,
        ``developer_instructions``)."""
        if isinstance(p.get("model"), str):
            self.model = p["model"]
        base = p.get("base_instructions")
        if isinstance(base, str) and base.strip():
            self.turn_base = tuple(split_system_text(base))
            self.base_text = base.strip()
        user = p.get("user_instructions")
        if isinstance(user, str) and user.strip():
            self.user_instructions = user
        dev = p.get("developer_instructions")
        self.developer_instructions = dev if isinstance(dev, str) and dev.strip() else None

    def _on_response_item(self, line: int, ts: str | None, p: _Rec, out: _Out) -> None:
        if p.get("type") == ADDITIONAL_TOOLS:  # 0.17x: the tool schemas as sent
            tools = additional_tools(p)
            if tools:
                self.tools, self.recorded_tools = self.intern(tools), True
            return
        if self._is_base(p):  # the base instructions, sent as the first developer message
            return
        entry = item_entry(p, ts) if self.messages else self._lean_entry(p, ts)
        if entry is None:
            kind = p.get("type")
            if not (isinstance(kind, str) and kind in QUIET_ITEMS):
                out.append(Skipped(line, f"unknown response_item type {p.get('type')!r}"))
            return
        is_output, msg = entry
        if self.messages:
            msg = self.intern(msg)
        self._measure(p, is_output, msg)
        if not is_output:
            self._uncounted_call(out)
            self._flush(out)
        else:
            if not self.entries or not self.entries[-1][0]:
                self.run_line = line  # a run of model output starts
            if self.pending is not None:
                self.pending.response.append(msg)
        if self.memory_seen:
            pass
        elif id(msg) in self.deferred:
            self.unchecked.append(msg)  # its tags are read when the system prompt needs them
        else:
            self.memory_seen = MEMORY in msg.tags
        if msg.role == "developer":
            self.developer_seen.update(b.text.strip() for b in msg.blocks)
        if not (is_output and self.entries and self.entries[-1][0]):
            self.merged_count += 1
        self.entries.append((is_output, msg))

    def _lean_entry(self, p: _Rec, ts: str | None) -> tuple[bool, Message] | None:
        """``item_entry`` without messages: a tool call or reasoning item is a stand-in (its
        message has no tags), a reply or a tool's output a stand-in whose message is made
        when its tags are asked for (``_real``: a reply or an output may read as memory)."""
        kind = p.get("type")
        if kind in CODEX_OUTPUT_ITEMS:
            return True, _OUTPUT
        if kind in CODEX_INPUT_ITEMS:
            role = "tool"
        elif kind == "message" and str(p.get("role") or "user") == "assistant":
            role = "assistant"
        else:
            return item_entry(p, ts)
        msg = Message(role, (), None, ts)
        self.deferred[id(msg)] = (msg, p)
        return role == "assistant", msg

    def _real(self, msg: Message) -> Message:
        """The message a stand-in stands for (``_lean_entry``)."""
        held = self.deferred.get(id(msg))
        if held is None or held[0] is not msg:
            return msg
        entry = item_entry(held[1], msg.timestamp)
        assert entry is not None
        return entry[1]

    def _memory_seen(self) -> bool:
        """Whether an item so far was memory (the tool outputs' looked at now)."""
        if not self.memory_seen and self.unchecked:
            self.memory_seen = any(MEMORY in self._real(m).tags for m in self.unchecked)
            self.unchecked.clear()
        return self.memory_seen

    def _opening(self, cut: int) -> bool:
        """Whether a compaction summary opens the messages of ``entries[:cut]`` (the
        items until the first model output, at most ``SUMMARY_REACH``: once those are
        all there, the answer holds until a compaction replaces the entries)."""
        if self.opening is not None:
            return self.opening
        opening: list[Message] = []
        answered = False  # the items reach a model output (an assistant message)
        for output, m in self.entries[: min(cut, SUMMARY_REACH)]:
            opening.append(_OUTPUT if output else self._real(m))
            if output:
                answered = True
                break
        found = opens_with_summary(opening)
        if answered or len(opening) == SUMMARY_REACH:
            self.opening = found
        return found

    def _is_base(self, p: _Rec) -> bool:
        """A developer message that is the base instructions: the system prompt, counted as
        such (Codex 0.17x records it in session_meta and as the history's first message)."""
        if p.get("type") != "message" or p.get("role") != "developer" or not self.base_text:
            return False
        return content_text(p.get("content")).strip() == self.base_text

    def _measure(self, p: _Rec, is_output: bool, msg: Message) -> None:
        """Keep Codex's estimates of the items it adds to the API's last count
        (``estimate_item_token_count``: serialized bytes / 4; an encrypted reasoning item
        from its ciphertext, 3/4 of its length less 650 bytes)."""
        if p.get("type") == "reasoning":
            secret = p.get("encrypted_content")
            if isinstance(secret, str) and secret:
                self.reasoning += _tokens(max(0, len(secret) * 3 // 4 - REASONING_OVERHEAD))
        self.est.append(0 if is_output else _tokens(len(orjson.dumps(p))))
        if msg.role == "user" and not is_output and any(not b.tag for b in msg.blocks):
            self.reasoning_before_user = self.reasoning  # a user turn, not injected context

    def _codex_measure(self) -> int | None:
        """What Codex compared with its limit just before the call now seen: the last
        call's total, the reasoning estimate, and the input items between the model's last
        output before this call's and this call's own (a tool's output, a user message)."""
        if self.last_total is None:
            return None
        entries, start = self.entries, self.entries_at_call
        first = next((k for k in range(start, len(entries)) if entries[k][0]), len(entries))
        last = next((k for k in range(first - 1, -1, -1) if entries[k][0]), -1)
        added = sum(self.est[last + 1 : first])
        reasoning = 0 if self.reasoning_included else self.reasoning_before_user
        return self.last_total + reasoning + added

    def _estimated(self, estimate: int) -> None:
        """Codex's estimate of the history it compacted to: the held compaction's post size."""
        assert self.held is not None
        self.held = replace(
            self.held,
            post_tokens=estimate,
            detail=f"{self.held.detail}; Codex's estimate of the new history: {estimate:,}",
        )
        self.estimate = None

    def _release(self, out: _Out) -> None:
        if self.held is not None:
            out.append(self.held)
            self.events_since.append(self.held.kind)
            self.held = None

    def _on_event_msg(self, line: int, ts: str | None, p: _Rec, out: _Out) -> None:
        kind = p.get("type")
        if kind == "token_count":
            self._token_count(line, ts, p, out)
        elif kind == "error" and isinstance(p.get("message"), str):
            self._flush(out)
            self._release(out)
            event = error_event(p["message"], ts)
            out.append(event)
            self.events_since.append(event.kind)
        # every other event_msg repeats an item for the UI or carries no context

    def _on_compacted(self, line: int, ts: str | None, p: _Rec, out: _Out) -> None:
        pend = self.pending
        pre = self.last_prompt
        # the call that wrote the summary: it ran on the history as it was (0.17x records
        # its summary as the only output), or it recorded no output at all (0.10x)
        if pend is not None and (not pend.fresh or (pend.silent and not pend.response)):
            pend.side = _NOTE_COMPACTION_CALL
            pre = pend.measure if pend.measure is not None else pre
        self._uncounted_call(out)
        self._flush(out)
        self._release(out)
        summary = str(p.get("message") or "")
        history = p.get("replacement_history")
        if isinstance(history, list):
            entries = [
                e
                for item in history
                if isinstance(item, dict)
                if (e := item_entry(item, ts)) is not None
            ]
            detail = "history replaced by Codex's replacement_history"
        else:
            entries = compaction_rebuild(self.entries, summary, ts)
            detail = "history rebuilt as Codex does: user messages + summary (inferred)"
        self.entries = [
            (o, self.intern(m) if self.messages else m)
            for o, m in entries
            if not (
                m.role == "developer"
                and self.base_text
                and "\n".join(b.text for b in m.blocks).strip() == self.base_text
            )
        ]
        self.merged_count = len(merge(self.entries)) if not self.messages else 0
        self.opening = None
        self.entries_at_call = len(self.entries)
        self.est = [0] * len(self.entries)
        self.reasoning = self.reasoning_before_user = 0
        self.held = Event(
            COMPACT_BOUNDARY, ts, pre_tokens=pre, detail=f"{detail}; summary: {summary[:300]}"
        )
        if self.estimate is not None:
            self._estimated(self.estimate)

    def _token_count(self, line: int, ts: str | None, p: _Rec, out: _Out) -> None:
        info = p.get("info")
        if isinstance(info, dict):
            last, total = info.get("last_token_usage"), info.get("total_token_usage")
            window = info.get("model_context_window")
            if isinstance(window, int) and window > 0:
                self.window = window
        elif "input_tokens" in p:  # early event layout: the usage itself
            last, total = p, None
        else:
            return  # rate limits only
        if not isinstance(last, dict):
            out.append(Skipped(line, "token_count without last_token_usage"))
            return
        if isinstance(info, dict) and isinstance(info.get("last_usage_includes_reasoning"), bool):
            self.reasoning_included = info["last_usage_includes_reasoning"]
        if not as_int(last.get("input_tokens")) and not as_int(last.get("output_tokens")):
            # no call: Codex's own estimate of the history (written around a compaction)
            # or the window marked full; never an API count
            estimate = as_int(last.get("total_tokens"))
            if estimate and self.held is not None and self.held.post_tokens is None:
                self._estimated(estimate)
            elif estimate:
                self.estimate = estimate
            return
        source = total if isinstance(total, dict) else last
        sig = (total is None,) + tuple(source.get(k) for k in _FIELDS)
        if sig == self.last_sig:
            return  # the same call reported again
        self.last_sig = sig
        self._flush(out)
        self._release(out)
        cut = len(self.entries)
        while cut and self.entries[cut - 1][0]:
            cut -= 1
        usage = _usage(last)
        self.counted = True
        self.last_prompt = usage.prompt_tokens
        since = self.entries[self.entries_at_call :]
        self.estimate = None
        self.pending = _Pending(
            line,
            ts,
            self.model,
            usage,
            self.entries[:cut] if self.messages else [],
            [m for _, m in self.entries[cut:]],
            fresh=any(not o for o, _ in since),
            silent=not any(o for o, _ in since),
            measure=self._codex_measure(),
        )
        if not self.messages:
            self.pending.count = self.merged_count - (cut < len(self.entries))
            self.pending.opening_summary = self._opening(cut)
        self.entries_at_call = len(self.entries)
        self.last_total = as_int(last.get("total_tokens")) or usage.total_tokens

    def _uncounted_call(self, out: list[Item]) -> None:
        """In a rollout without token counts, the run of model output items that just
        ended is a call of its own: its context is the items before it, no usage."""
        if self.counted or self.legacy or self.pending is not None:
            return
        cut = len(self.entries)
        while cut and self.entries[cut - 1][0]:
            cut -= 1
        if cut == len(self.entries):
            return
        run = self.entries[cut:]
        if not self.messages:
            self.inexact = "a call without usage"
        self.pending = _Pending(
            self.run_line,
            run[0][1].timestamp,
            self.model,
            None,
            self.entries[:cut],
            [m for _, m in run],
        )
        self._flush(out, (_NOTE_NO_COUNTS,))

    def _flush(self, out: list[Item], notes: tuple[str, ...] = ()) -> None:
        pend, self.pending = self.pending, None
        if pend is None:
            return
        self.emitted += 1
        out.append(self._request(pend, notes) if self.messages else self._lean_request(pend))
        self.events_since.clear()

    def _system(self) -> tuple[Block, ...]:
        """The system prompt of a request sent now: the base instructions, AGENTS.md
        (unless an item held it) and the developer instructions (unless one held them)."""
        system = self.turn_base or self.system
        if self.user_instructions and not self._memory_seen():
            system += tuple(
                b if b.tag else Block(TEXT, b.text, tag=MEMORY, name="AGENTS.md")
                for b in split_skills_section(self.user_instructions)
            )
        dev = self.developer_instructions
        if dev and dev.strip() not in self.developer_seen:
            system += (Block(TEXT, dev, name="developer_instructions"),)
        return system

    def _request(self, pend: _Pending, notes: tuple[str, ...]) -> Request:
        system = self._system()
        whole = bool(system) and self.recorded_tools
        notes = (_NOTE_WHOLE if whole else _NOTE_BASE if system else _NOTE_TRANSCRIPT,) + notes
        if pend.side:
            notes += (pend.side,)
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
            index=self.emitted - 1,  # as the session builder numbers them: no copy
            model=pend.model,
            timestamp=pend.timestamp,
            system=system,
            tools=self.tools,
            messages=messages,
            usage=pend.usage,
            complete=whole,
            sidechain=self.subagent,
            role=SUBAGENT if self.subagent else AUXILIARY if pend.side else MAIN,
            api="codex",
            response=reply[0] if reply else None,
            window_hint=self.window,
            line=pend.line,
            notes=notes,
            client=self.client,
        )

    def _lean_request(self, pend: _Pending) -> Request:
        """``_request`` without messages (nor notes), with its system prompt and tools (the
        session builder tells sub-agents apart by them). The builder also infers a
        compaction from what a whole request's messages hold: where it would, ``inexact``
        says so."""
        system = self._system()
        whole = bool(system) and self.recorded_tools
        role = SUBAGENT if self.subagent else AUXILIARY if pend.side else MAIN
        if whole and role == MAIN:
            last, self.last_whole = self.last_whole, (pend.opening_summary, pend.count)
            if (
                last is not None
                and COMPACT_BOUNDARY not in self.events_since
                and pend.opening_summary
                and (not last[0] or pend.count < last[1])
            ):
                self.inexact = "a compaction summary the builder would infer a compaction from"
        return Request(
            index=self.emitted - 1,
            model=pend.model,
            timestamp=pend.timestamp,
            system=system,
            tools=self.tools,
            messages=(),
            usage=pend.usage,
            complete=whole,
            sidechain=self.subagent,
            role=role,
            api="codex",
            window_hint=self.window,
            line=pend.line,
            client=self.client,
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

    def messages(
        self, entries: list[tuple[bool, Message]], intern: Interner
    ) -> tuple[tuple[Message, ...], bool, bool]:
        """``merge(entries)`` (interned), and whether they hold reasoning, an encrypted
        summary."""
        d = self.done
        if not (
            d and len(entries) >= d and entries[0] is self.first and entries[d - 1] is self.last
        ):
            self.first = self.last = None
            self.done, self.msgs, self.thinking, self.encrypted = 0, [], False, False
        closed = len(entries)
        while closed > self.done and entries[closed - 1][0]:
            closed -= 1  # the trailing output run may still grow: not remembered
        seg = _flags(entries[self.done : closed])
        tail = _flags(entries[closed:])
        thinking = self.thinking or seg[0] or tail[0]
        encrypted = self.encrypted or seg[1] or tail[1]
        if closed > self.done:
            self.msgs += [intern(m) for m in merge(entries[self.done : closed])]
            self.done = closed
            self.first, self.last = entries[0], entries[closed - 1]
            self.thinking, self.encrypted = self.thinking or seg[0], self.encrypted or seg[1]
        run = [intern(m) for m in merge(entries[closed:])]
        return tuple(self.msgs + run), thinking, encrypted


def _flags(entries: list[tuple[bool, Message]]) -> tuple[bool, bool]:
    """Whether ``entries`` hold a reasoning block, an encrypted compaction summary."""
    blocks = [b for _, m in entries for b in m.blocks]
    return (
        any(b.kind == THINKING for b in blocks),
        any(b.tag == COMPACTION_SUMMARY and not b.text for b in blocks),
    )


class CodexReader:
    name, label = FORMAT.name, FORMAT.label
    description, document = FORMAT.description, FORMAT.document

    def sniff(self, head: Head) -> bool:
        return codex(head)

    def parser(self) -> _CodexParser:
        return _CodexParser()


READER = CodexReader()
