"""A Cline or Roo Code task folder (``tasks/<id>/``) read as one session.

- ``api_conversation_history.json``: the messages the extension sends, in the
  Anthropic Messages shape, kept whole: a context truncation or a condensing hides
  messages from later requests without deleting them. Cline keeps the hidden range
  on its chat messages (``conversationHistoryDeletedRange``: the first user and
  assistant pair always stays); Roo Code tags the messages themselves
  (``condenseParent`` for those a summary replaced, ``truncationParent`` for those a
  sliding-window marker hides; its summary is a user message with ``isSummary``).
- ``ui_messages.json``: what the chat panel shows; each ``api_req_started`` entry
  carries one API request's tokens (``tokensIn``, ``tokensOut``, ``cacheWrites``,
  ``cacheReads``, ``cost``), and its ``conversationHistoryIndex`` places it: the
  reply is the history message two after that index.
- ``task_metadata.json``: the models used, and (Cline) the extension's version.

One request per assistant message of the history: its context is the history
before it, without what was hidden by then. Newer Cline writes the API's usage on
the assistant message itself (``metrics.tokens``: ``prompt`` includes ``cached``);
otherwise the request's ``api_req_started`` counts are used. The system prompt and
the tool declarations are not stored: requests are ``complete=False``. A task with
only ``ui_messages.json`` gives one request per ``api_req_started`` with counts,
whose only message is the request text the panel shows.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import orjson

from ctxviewer.ingest.api.anthropic import Interner, iso, message_from
from ctxviewer.ingest.base import Head, Item, LoadError, as_dict, as_int, open_log
from ctxviewer.ingest.cline import TASK, cline_task
from ctxviewer.model import COMPACT_BOUNDARY, TEXT, Block, Event, Message, Request, Skipped, Usage

API_FILE = "api_conversation_history.json"
UI_FILE = "ui_messages.json"
META_FILE = "task_metadata.json"
TASK_FILES = (API_FILE, UI_FILE, META_FILE)

NOTES = (
    "Cline / Roo Code task: the stored messages, not the request body; not recorded: the "
    "system prompt (with the rules files) and the tool declarations, inferred from the "
    "first API usage",
    "messages: the task's history before this reply, without the messages a truncation or "
    "a condensing had hidden by then",
)
METRICS_NOTE = "usage: the assistant message's metrics.tokens (prompt includes cached)"
UI_NOTE = (
    "usage: the api_req_started counts (tokensIn + cacheWrites + cacheReads, as the "
    "extension sums them; Roo Code's tokensIn when it already holds the cache counts)"
)
ONLY_UI_NOTE = (
    "messages: only the request text the chat panel shows (no api_conversation_history.json)"
)


def task_files(path: str) -> dict[str, str]:
    """The task files beside ``path`` that exist, by name."""
    folder = os.path.dirname(os.path.abspath(path))
    return {name: p for name in TASK_FILES if os.path.isfile(p := os.path.join(folder, name))}


def _load_json(path: str) -> Any:
    with open_log(path) as f:  # gzip and xz too, as every log
        return orjson.loads(f.read())


def read_document(path: str) -> dict[str, Any]:
    """The task's files, parsed: ``{"api", "ui", "meta", "problems"}``. The file given
    must be valid JSON (``LoadError``); a sibling that is not is left out and named in
    ``problems``."""
    try:
        given = _load_json(path)
    except OSError as e:
        raise LoadError(f"cannot read {path}: {e.strerror or e}") from None
    except orjson.JSONDecodeError:
        raise LoadError(f"{path}: not valid JSON") from None
    doc: dict[str, Any] = {"api": None, "ui": None, "meta": None, "problems": []}
    key = {API_FILE: "api", UI_FILE: "ui", META_FILE: "meta"}
    own = os.path.basename(path)
    doc[
        key.get(
            own, "api" if cline_task(Head(path, "", document=given)) and not _is_ui(given) else "ui"
        )
    ] = given
    for name, other in task_files(path).items():
        if os.path.abspath(other) == os.path.abspath(path) or doc[key[name]] is not None:
            continue
        try:
            doc[key[name]] = _load_json(other)
        except (OSError, orjson.JSONDecodeError) as e:
            doc["problems"].append(f"{name} beside it is unreadable ({type(e).__name__}): left out")
    return doc


def _is_ui(value: Any) -> bool:
    return isinstance(value, list) and any(
        isinstance(m, dict) and m.get("type") in ("say", "ask") for m in value[:20]
    )


@dataclass
class _ApiReq:
    """One ``api_req_started`` entry: its counts and where it sits."""

    info: dict[str, Any]
    ts: Any
    history_index: int | None
    deleted: tuple[int, int] | None  # the range hidden while it ran (Cline)
    model: str | None
    used: bool = False


@dataclass
class _Task:
    """A task's history, its requests' counts and what tells Cline from Roo Code."""

    api: list[Any]
    requests: list[_ApiReq] = field(default_factory=list)
    condensed: list[dict[str, Any]] = field(default_factory=list)  # Roo's contextCondense
    roo: bool = False
    client: str = "cline/"
    model: str | None = None


class ClineTaskParser:
    """Turns the task's files (one document) into requests and compaction events."""

    def __init__(self) -> None:
        self.intern = Interner()
        self.conversation: str | None = None

    def feed(self, line: int, record: Any) -> list[Item]:
        if not isinstance(record, dict):
            return [Skipped(line, "not a Cline task")]
        out: list[Item] = [Skipped(0, p) for p in record.get("problems") or []]
        task = _task(record)
        if task.api:
            out += self._from_history(task)
        else:
            out += self._from_panel(task)
        return out

    def finish(self) -> list[Item]:
        return []

    # -- the messages' history ----------------------------------------------

    def _from_history(self, task: _Task) -> list[Item]:
        out: list[Item] = []
        api = task.api
        by_reply: dict[int, _ApiReq] = {}
        for req in task.requests:
            if req.history_index is not None and 0 <= req.history_index + 2 < len(api):
                by_reply.setdefault(req.history_index + 2, req)
        unplaced = [r for r in task.requests if r.history_index is None]
        hidden_before: tuple[int, int] | None = None
        summaries_before = 0
        markers_before = 0
        for k, raw in enumerate(api):
            if not isinstance(raw, dict):
                out.append(Skipped(1, f"message {k} of the history is not an object"))
                continue
            if raw.get("role") != "assistant":
                continue
            ui = by_reply.get(k) or (unplaced.pop(0) if unplaced else None)
            if ui is not None:
                ui.used = True
            hidden = ui.deleted if ui is not None else hidden_before
            context, summaries, markers = _effective(api[:k], hidden)
            if hidden is not None and hidden != hidden_before:
                out.append(
                    Event(
                        COMPACT_BOUNDARY,
                        iso(raw.get("ts")),
                        trigger="auto",
                        detail=f"Cline context truncation: messages {hidden[0]}–"
                        f"{hidden[1]} of the history hidden",
                    )
                )
            if summaries > summaries_before:
                out.append(self._condense_event(task, raw))
            if markers > markers_before:
                out.append(
                    Event(
                        COMPACT_BOUNDARY,
                        iso(raw.get("ts")),
                        trigger="auto",
                        detail="Roo Code sliding-window truncation",
                    )
                )
            hidden_before, summaries_before, markers_before = hidden, summaries, markers
            usage, note = _usage(raw, ui, task.roo)
            model = _model(raw) or (ui.model if ui is not None else None) or task.model
            out.append(
                Request(
                    index=0,
                    model=model,
                    timestamp=iso(raw.get("ts")),
                    system=(),
                    tools=(),
                    messages=tuple(m for m in (self._message(r) for r in context) if m is not None),
                    usage=usage,
                    complete=False,
                    api="anthropic",
                    response=self._message(raw),
                    message_id=f"history-{k}",
                    line=1,
                    notes=NOTES + ((note,) if note else ()),
                    client=task.client,
                )
            )
        return out

    def _condense_event(self, task: _Task, raw: dict[str, Any]) -> Event:
        info = task.condensed.pop(0) if task.condensed else {}
        return Event(
            COMPACT_BOUNDARY,
            iso(raw.get("ts")),
            trigger="auto",
            pre_tokens=as_int(info.get("prevContextTokens")) or None,
            post_tokens=as_int(info.get("newContextTokens")) or None,
            detail="Roo Code context condensing: a summary replaces the history",
        )

    def _message(self, raw: Any) -> Message | None:
        if not isinstance(raw, dict) or raw.get("role") not in ("user", "assistant"):
            return None
        return message_from(raw, self.intern, timestamp=iso(raw.get("ts")))

    # -- only the chat panel --------------------------------------------------

    def _from_panel(self, task: _Task) -> list[Item]:
        out: list[Item] = []
        for n, req in enumerate(task.requests):
            usage = _ui_usage(req.info, task.roo)
            if usage is None:
                continue
            text = req.info.get("request")
            msgs = (Message("user", (Block(TEXT, text),)),) if isinstance(text, str) else ()
            out.append(
                Request(
                    index=0,
                    model=req.model or task.model,
                    timestamp=iso(req.ts),
                    system=(),
                    tools=(),
                    messages=msgs,
                    usage=usage,
                    complete=False,
                    api="anthropic",
                    message_id=f"request-{n}",
                    line=1,
                    notes=NOTES[:1] + (UI_NOTE, ONLY_UI_NOTE),
                    client=task.client,
                )
            )
        return out


def _task(record: dict[str, Any]) -> _Task:
    raw_api, raw_ui = record.get("api"), record.get("ui")
    api: list[Any] = raw_api if isinstance(raw_api, list) else []
    ui: list[Any] = raw_ui if isinstance(raw_ui, list) else []
    meta = as_dict(record.get("meta"))
    task = _Task(api)
    task.roo = any(
        isinstance(m, dict)
        and any(
            k in m
            for k in ("isSummary", "condenseParent", "truncationParent", "isTruncationMarker")
        )
        for m in api
    )
    deleted: tuple[int, int] | None = None
    for i, m in enumerate(ui):
        if not isinstance(m, dict):
            continue
        rng = _range(m.get("conversationHistoryDeletedRange"))
        if rng is not None:
            deleted = rng
        if m.get("say") in ("condense_context", "sliding_window_truncation"):
            task.roo = True
            if m.get("say") == "condense_context" and isinstance(m.get("contextCondense"), dict):
                task.condensed.append(m["contextCondense"])
        if m.get("say") != "api_req_started" or not isinstance(m.get("text"), str):
            continue
        try:
            info = orjson.loads(m["text"])
        except orjson.JSONDecodeError:
            continue
        if not isinstance(info, dict):
            continue
        task.roo = task.roo or "apiProtocol" in info or "apiProtocol" in m
        # the range a request ran with is the one the entries after it carry: Cline
        # truncates once the request has started
        after = _range_after(ui, i) or deleted
        idx = m.get("conversationHistoryIndex")
        task.requests.append(
            _ApiReq(
                info,
                m.get("ts"),
                idx if isinstance(idx, int) and not isinstance(idx, bool) else None,
                after,
                _model_info(m.get("modelInfo")),
            )
        )
    task.model = _meta_model(meta)
    version = _meta_version(meta)
    task.client = ("roo-code/" if task.roo else "cline/") + (version or "")
    return task


def _range(value: Any) -> tuple[int, int] | None:
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        return (value[0], value[1])
    return None


def _range_after(ui: list[Any], i: int) -> tuple[int, int] | None:
    """The hidden range of the next entries, up to the next request."""
    for m in ui[i + 1 :]:
        if not isinstance(m, dict):
            continue
        if m.get("say") == "api_req_started":
            return _range(m.get("conversationHistoryDeletedRange"))
        rng = _range(m.get("conversationHistoryDeletedRange"))
        if rng is not None or "conversationHistoryDeletedRange" in m:
            return rng
    return None


def _effective(history: list[Any], hidden: tuple[int, int] | None) -> tuple[list[Any], int, int]:
    """The messages a request sent from ``history`` (those before its reply): Cline's
    hidden range left out; Roo Code's history from its last summary on, without the
    messages a truncation marker hides. Also how many summaries and markers it holds."""
    msgs = [m for m in history if isinstance(m, dict)]
    summaries = sum(1 for m in msgs if m.get("isSummary"))
    markers = {m.get("truncationId") for m in msgs if m.get("isTruncationMarker")}
    if hidden is not None:
        start, end = hidden
        msgs = msgs[:start] + msgs[end + 1 :]
    if summaries:
        last = max(i for i, m in enumerate(msgs) if m.get("isSummary"))
        msgs = msgs[last:]
    msgs = [
        m for m in msgs if not (m.get("truncationParent") and m.get("truncationParent") in markers)
    ]
    return msgs, summaries, len(markers)


def _usage(raw: dict[str, Any], ui: _ApiReq | None, roo: bool) -> tuple[Usage | None, str | None]:
    tokens = as_dict(as_dict(raw.get("metrics")).get("tokens"))
    if tokens:
        prompt, cached = as_int(tokens.get("prompt")), as_int(tokens.get("cached"))
        return Usage(
            input_tokens=max(0, prompt - cached),
            cache_read_input_tokens=min(cached, prompt),
            output_tokens=as_int(tokens.get("completion")),
        ), METRICS_NOTE
    if ui is not None:
        usage = _ui_usage(ui.info, roo)
        return usage, UI_NOTE if usage is not None else None
    return None, None


def _ui_usage(info: dict[str, Any], roo: bool) -> Usage | None:
    if not any(k in info for k in ("tokensIn", "tokensOut", "cacheWrites", "cacheReads")):
        return None
    tin, writes, reads = (as_int(info.get(k)) for k in ("tokensIn", "cacheWrites", "cacheReads"))
    out = as_int(info.get("tokensOut"))
    if tin == writes == reads == out == 0:
        return None  # a request that never got an answer
    if roo and (writes or reads) and tin >= writes + reads:  # Roo Code: tokensIn is the total
        tin -= writes + reads
    return Usage(
        input_tokens=tin,
        cache_creation_input_tokens=writes,
        cache_read_input_tokens=reads,
        output_tokens=out,
    )


def _model_info(value: Any) -> str | None:
    info = as_dict(value)
    model = info.get("modelId")
    return model if isinstance(model, str) and model else None


def _model(raw: dict[str, Any]) -> str | None:
    return _model_info(raw.get("modelInfo"))


def _meta_model(meta: dict[str, Any]) -> str | None:
    usage = meta.get("model_usage")
    if isinstance(usage, list):
        for entry in reversed(usage):
            model = as_dict(entry).get("model_id")
            if isinstance(model, str) and model:
                return model
    return None


def _meta_version(meta: dict[str, Any]) -> str | None:
    env = meta.get("environment_history")
    if isinstance(env, list):
        for entry in reversed(env):
            v = as_dict(entry).get("cline_version") or as_dict(entry).get("extension_version")
            if isinstance(v, str) and v:
                return v
    return None


class ClineTaskReader:
    name, label = TASK.name, TASK.label
    description, document = TASK.description, TASK.document
    own_document = True

    def sniff(self, head: Head) -> bool:
        return cline_task(head)

    def parser(self) -> ClineTaskParser:
        return ClineTaskParser()

    def read_document(self, path: str) -> dict[str, Any]:
        return read_document(path)

    def sources(self, path: str) -> tuple[str, ...]:
        return (
            path,
            *(p for p in task_files(path).values() if os.path.abspath(p) != os.path.abspath(path)),
        )


READER = ClineTaskReader()
