"""Aider's chat history (``.aider.chat.history.md``) and LLM history (``--llm-history-file``).

The chat history is Markdown, appended to by every run in the project:

- ``# aider chat started at 2026-05-01 10:00:00`` opens a run (a session of its own:
  each run starts a new chat);
- ``#### text`` lines are what the user typed;
- ``> text`` lines are Aider's own output (its version and model, the files added,
  ``> Tokens: 2.4k sent, 36 received. Cost: …``); they never reach the model;
- the other lines are the model's reply.

One request per ``Tokens:`` line. Its numbers are **Aider's own count**, not the
API's: when it streams (the default) Aider asks for no usage and counts the
messages with its tokenizer, and it prints them rounded (``2.4k`` is 2,400). The
chat history records no system prompt, repository map or file contents: those
requests are ``complete=False``, with the conversation as the chat shows it.

The LLM history file holds every request's messages exactly as sent (``TO LLM``
blocks, a ``ROLE `` prefix on each line, ``-------`` between messages) and each
reply (``LLM RESPONSE``), but no token counts. When one sits beside the chat
history (``.aider.llm.history``, or the file ``.aider.conf.yml`` names), each
``Tokens:`` line takes the messages of the request it reports, paired in order
within the run. Opened on its own, it gives its requests without usage.

The command line Aider logs at the start of a run holds the last four characters
of an API key given as an option: nothing of Aider's own output is kept.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ctxviewer.ingest.aider import CHAT_HISTORY, LLM_HISTORY, aider_chat, aider_llm
from ctxviewer.ingest.api.anthropic import Interner
from ctxviewer.ingest.api.openai import chat_request_parts
from ctxviewer.ingest.base import Head, Item, LoadError, open_log
from ctxviewer.model import TEXT, Block, Message, Request, Skipped, Usage

LLM_FILE = ".aider.llm.history"
CONF_FILE = ".aider.conf.yml"
_START = re.compile(r"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")
_TOKENS = re.compile(
    r"^Tokens: (?P<sent>[\d.,]+k?) sent(?:, (?P<write>[\d.,]+k?) cache write)?"
    r"(?:, (?P<hit>[\d.,]+k?) cache hit)?, (?P<received>[\d.,]+k?) received\."
)
_MODEL = re.compile(r"^(?:Main )?[Mm]odels?: (\S+)")
_VERSION = re.compile(r"^Aider v(\d+\.\d+[\w.]*)")
_ADDED = re.compile(r"^Added (.+) to the chat\.?$")
_LLM_HEAD = re.compile(r"^(TO LLM|LLM RESPONSE) (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)")
_ROLE = re.compile(r"^(SYSTEM|USER|ASSISTANT|TOOL|FUNCTION)(?: (.*))?$")
_CONF_KEY = re.compile(r"^llm-history-file:\s*['\"]?([^'\"#\n]+?)['\"]?\s*(?:#.*)?$", re.M)

COUNT_NOTE = (
    "usage: Aider's own count from its 'Tokens: … sent, … received' line (its "
    "tokenizer's estimate, rounded as Aider prints it), not the API's usage"
)
CHAT_NOTES = (
    "Aider chat history: the conversation as the chat shows it; not recorded: the system "
    "prompt, the repository map and the contents of the files in the chat",
    COUNT_NOTE,
)
SENT_NOTES = (
    "Aider LLM history: the messages as sent (system prompt, repository map and files "
    "included); no tool declarations or parameters",
    COUNT_NOTE,
)
LLM_ONLY_NOTES = ("Aider LLM history: the messages as sent; Aider logs no token counts there",)


def parse_count(text: str | None) -> int:
    """Aider's printed count as a number: ``"2.4k"`` is 2,400, ``"36"`` is 36."""
    if not text:
        return 0
    text = text.replace(",", "")
    try:
        return round(float(text[:-1]) * 1000) if text.endswith("k") else int(float(text))
    except ValueError:
        return 0


def llm_history_beside(path: str) -> str | None:
    """The LLM history file next to a chat history: the one ``.aider.conf.yml`` names,
    else ``.aider.llm.history``."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        with open(os.path.join(folder, CONF_FILE), encoding="utf-8", errors="replace") as f:
            m = _CONF_KEY.search(f.read(65536))
        if m:
            named = os.path.join(folder, os.path.expanduser(m.group(1).strip()))
            if os.path.isfile(named):
                return named
    except OSError:
        pass
    default = os.path.join(folder, LLM_FILE)
    return default if os.path.isfile(default) else None


def _read_text(path: str) -> str:
    try:
        with open_log(path) as f:  # gzip and xz too, as every log
            return f.read().decode("utf-8", errors="replace").lstrip("\ufeff")
    except OSError as e:
        raise LoadError(f"cannot read {path}: {e.strerror or e}") from None


@dataclass
class _Exchange:
    """One Tokens line and what led to it."""

    line: int
    run: int
    time: str | None
    messages: tuple[Message, ...]
    reply: str
    sent: int
    write: int
    hit: int
    received: int


@dataclass
class _Run:
    """One run of Aider (``# aider chat started at``): what it said of itself, its
    exchanges."""

    start: str | None  # local time, as Aider wrote it
    version: str | None = None
    model: str | None = None
    files: list[str] = field(default_factory=list)
    exchanges: list[_Exchange] = field(default_factory=list)


@dataclass
class _Sent:
    """One TO LLM block of the LLM history, with its reply."""

    line: int
    time: str
    messages: list[dict[str, str]]
    reply: str = ""


def parse_chat(text: str) -> tuple[list[_Run], list[Skipped]]:
    """The runs of a chat history, each with its exchanges."""
    runs: list[_Run] = []
    skipped: list[Skipped] = []
    history: list[Message] = []
    user: list[str] = []
    reply: list[str] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        m = _START.match(line)
        if m:
            runs.append(_Run(m.group(1)))
            history, user, reply = [], [], []
            continue
        if not runs:
            if line.strip():
                skipped.append(Skipped(n, "text before the first 'aider chat started at'"))
            continue
        run = runs[-1]
        if line.startswith("####"):
            if reply and not user:  # a reply without a Tokens line: it stays in the history
                history.append(Message("assistant", (Block(TEXT, "\n".join(reply).strip()),)))
                reply = []
            user.append(line[4:].removeprefix(" "))
            continue
        if line.startswith(">"):
            said = line[1:].strip()
            if user:  # the user's message ended: it is sent
                history.append(Message("user", (Block(TEXT, "\n".join(user)),)))
                user = []
            tokens = _TOKENS.match(said)
            if tokens:
                run.exchanges.append(
                    _Exchange(
                        n,
                        len(runs) - 1,
                        run.start,
                        tuple(history),
                        "\n".join(reply).strip(),
                        parse_count(tokens["sent"]),
                        parse_count(tokens["write"]),
                        parse_count(tokens["hit"]),
                        parse_count(tokens["received"]),
                    )
                )
                if reply:
                    history.append(Message("assistant", (Block(TEXT, "\n".join(reply).strip()),)))
                reply = []
            elif said.startswith("Tokens:"):
                skipped.append(Skipped(n, "a Tokens line of a shape Aider's reader does not know"))
            elif (v := _VERSION.match(said)) and run.version is None:
                run.version = v.group(1)
            elif (mo := _MODEL.match(said)) and run.model is None:
                run.model = mo.group(1)
            elif a := _ADDED.match(said):
                run.files.append(a.group(1))
            continue
        if user:  # the reply begins
            history.append(Message("user", (Block(TEXT, "\n".join(user)),)))
            user = []
        if line or reply:
            reply.append(line)
    return runs, skipped


def parse_llm(text: str) -> list[_Sent]:
    """The TO LLM blocks of an LLM history file, each with the reply logged after it."""
    blocks: list[_Sent] = []
    current: _Sent | None = None
    in_reply = False
    role: str | None = None
    lines: list[str] = []

    def close_message() -> None:
        nonlocal role, lines
        if current is not None and role is not None and not in_reply:
            current.messages.append({"role": role.lower(), "content": "\n".join(lines)})
        role, lines = None, []

    for n, raw in enumerate(text.splitlines(), 1):
        head = _LLM_HEAD.match(raw)
        if head:
            close_message()
            if head.group(1) == "TO LLM":
                current = _Sent(n, head.group(2), [])
                blocks.append(current)
                in_reply = False
            else:
                in_reply = True
            continue
        if current is None:
            continue
        if raw == "-------" and not in_reply:
            close_message()
            continue
        m = _ROLE.match(raw)
        if in_reply:
            current.reply += ("\n" if current.reply else "") + (m.group(2) or "" if m else raw)
            continue
        if m and (role is None or m.group(1) == role):
            role = m.group(1)
            lines.append(m.group(2) or "")
        elif role is not None:  # a line of content without its prefix
            lines.append(raw)
    close_message()
    return blocks


def read_document(path: str) -> dict[str, Any]:
    text = _read_text(path)
    if aider_llm(Head(path, text[:200])):
        return {"chat": None, "llm": text, "llm_path": path}
    llm = llm_history_beside(path)
    return {"chat": text, "llm": _read_text(llm) if llm else None, "llm_path": llm}


def _local(ts: str | None) -> datetime | None:
    if not ts:
        return None
    try:
        return datetime.fromisoformat(ts.replace(" ", "T"))
    except ValueError:
        return None


class AiderParser:
    def __init__(self) -> None:
        self.intern = Interner()

    def feed(self, line: int, record: Any) -> list[Item]:
        if not isinstance(record, dict):
            return [Skipped(line, "not an Aider history")]
        sent = parse_llm(record["llm"]) if isinstance(record.get("llm"), str) else []
        if not isinstance(record.get("chat"), str):
            return [self._sent_request(s, None, LLM_ONLY_NOTES) for s in sent]
        runs, skipped = parse_chat(record["chat"])
        out: list[Item] = list(skipped)
        by_run = _pair(runs, sent)
        for r, run in enumerate(runs):
            blocks = by_run.get(r, [])
            for i, ex in enumerate(run.exchanges):
                match = blocks[i] if i < len(blocks) else None
                out.append(self._request(run, ex, match))
        return out

    def finish(self) -> list[Item]:
        return []

    def _request(self, run: _Run, ex: _Exchange, sent: _Sent | None) -> Request:
        prompt = ex.sent
        hit = min(ex.hit, prompt)
        write = min(ex.write, prompt - hit)
        usage = Usage(
            input_tokens=prompt - hit - write,
            cache_creation_input_tokens=write,
            cache_read_input_tokens=hit,
            output_tokens=ex.received,
        )
        model = run.model.rsplit("/", 1)[-1] if run.model else None
        common: dict[str, Any] = {
            "index": 0,
            "model": model,
            "usage": usage,
            "api": "openai-chat",
            "line": ex.line,
            "client": f"aider/{run.version or ''}",
            "conversation": run.start,
            "message_id": f"tokens-line-{ex.line}",
        }
        reply = Message("assistant", (Block(TEXT, ex.reply),)) if ex.reply else None
        if sent is not None:
            system, _tools, messages = chat_request_parts({"messages": sent.messages}, self.intern)
            return Request(
                timestamp=_iso_local(sent.time),
                system=system,
                tools=(),
                messages=messages,
                complete=True,
                notes=SENT_NOTES,
                response=reply,
                **common,
            )
        files = f" (files in the chat: {', '.join(run.files)})" if run.files else ""
        return Request(
            timestamp=_iso_local(ex.time),
            system=(),
            tools=(),
            messages=tuple(self.intern(m) for m in ex.messages),
            complete=False,
            notes=(CHAT_NOTES[0] + files, CHAT_NOTES[1]),
            response=reply,
            **common,
        )

    def _sent_request(self, sent: _Sent, usage: Usage | None, notes: tuple[str, ...]) -> Request:
        system, _tools, messages = chat_request_parts({"messages": sent.messages}, self.intern)
        reply = Message("assistant", (Block(TEXT, sent.reply),)) if sent.reply else None
        return Request(
            index=0,
            model=None,
            timestamp=_iso_local(sent.time),
            system=system,
            tools=(),
            messages=messages,
            usage=usage,
            complete=True,
            api="openai-chat",
            response=reply,
            line=sent.line,
            notes=notes,
            message_id=f"to-llm-{sent.line}",
            client="aider/",
        )


def _iso_local(ts: str | None) -> str | None:
    """Aider's local time as written (no zone is recorded)."""
    dt = _local(ts)
    return dt.isoformat(timespec="seconds") if dt is not None else None


def _pair(runs: list[_Run], sent: list[_Sent]) -> dict[int, list[_Sent]]:
    """The TO LLM blocks of each run: those logged from its start to the next run's."""
    out: dict[int, list[_Sent]] = {}
    starts = [_local(r.start) for r in runs]
    for s in sent:
        t = _local(s.time)
        if t is None:
            continue
        run = None
        for i, start in enumerate(starts):
            if start is not None and start <= t:
                run = i
        if run is not None:
            out.setdefault(run, []).append(s)
    return out


class AiderReader:
    name, label = CHAT_HISTORY.name, CHAT_HISTORY.label
    description, document = CHAT_HISTORY.description, CHAT_HISTORY.document
    own_document = True

    def sniff(self, head: Head) -> bool:
        return aider_chat(head)

    def parser(self) -> AiderParser:
        return AiderParser()

    def read_document(self, path: str) -> dict[str, Any]:
        return read_document(path)

    def sources(self, path: str) -> tuple[str, ...]:
        llm = llm_history_beside(path)
        return (path, llm) if llm else (path,)


class AiderLlmReader(AiderReader):
    name, label = LLM_HISTORY.name, LLM_HISTORY.label
    description = LLM_HISTORY.description

    def sniff(self, head: Head) -> bool:
        return aider_llm(head)

    def sources(self, path: str) -> tuple[str, ...]:
        return (path,)


READER = AiderReader()
LLM_READER = AiderLlmReader()
