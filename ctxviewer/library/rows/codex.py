"""The requests of a Codex rollout, for its row: ``ingest.codex``'s, without their
messages.

A request is a ``token_count`` event that reports a new call; its model is the last
``turn_context``'s, its window the last ``model_context_window``. The conversation's
items (``response_item``: most lines and most bytes) are skipped unparsed; the
other lines are small. ``ingest.codex`` gives a call the window known when its next item
comes; a rollout whose window changes after its first call declines, as does an old rollout (no envelope:
no token counts).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ctxviewer.ingest.base import Item
from ctxviewer.ingest.codex import compacted_event, token_call, token_usage
from ctxviewer.ingest.gemini import error_event
from ctxviewer.ingest.loader import BOM, iter_lines
from ctxviewer.ingest.sniffing import CODEX_ENVELOPE
from ctxviewer.library.rows import Declined, parse
from ctxviewer.model import MAIN, SUBAGENT, Request, Usage

_HEAD = 100  # bytes of a line where its record's type is (``{"timestamp":…,"type":…``)


def items(path: str) -> Iterator[Item]:
    model: str | None = None
    window: int | None = None
    client: str | None = None
    subagent = False
    last_sig: tuple[Any, ...] | None = None
    number = -1  # of the pending request (no ids: none is a duplicate)
    last_prompt: int | None = None
    pending: tuple[int, str | None, Any, Usage, int] | None = None
    for lineno, raw, _ in iter_lines(path):
        if b"response_item" in raw[:_HEAD]:  # the conversation: most lines, most bytes
            continue
        record = parse(raw if lineno > 1 else raw.removeprefix(BOM))
        kind = record.get("type") if isinstance(record, dict) else None
        payload = record.get("payload") if isinstance(record, dict) else None
        if not (isinstance(kind, str) and kind in CODEX_ENVELOPE and isinstance(payload, dict)):
            if lineno == 1:
                raise Declined("an old rollout (no token counts)")
            continue
        ts = record.get("timestamp")
        if kind == "session_meta":
            version = payload.get("cli_version")
            if isinstance(version, str) and version:
                client = f"codex/{version}"
            source = payload.get("source")
            subagent = subagent or (isinstance(source, dict) and "subagent" in source)
        elif kind == "turn_context":
            if isinstance(payload.get("model"), str):
                model = payload["model"]
        elif kind == "compacted":
            if pending is not None:
                yield _request(pending, window, client, subagent)
                pending = None
            yield compacted_event(payload, ts, last_prompt)
        elif kind == "event_msg" and payload.get("type") == "error" and \
                isinstance(payload.get("message"), str):
            if pending is not None:
                yield _request(pending, window, client, subagent)
                pending = None
            yield error_event(payload["message"], ts)
        elif kind == "event_msg" and payload.get("type") == "token_count":
            call = token_call(payload)
            if call is None:
                continue
            if call.window and call.window != window:
                if last_sig is not None:  # a call before had another (or none)
                    raise Declined("the window changes within the rollout")
                window = call.window
            if call.last is None or call.sig == last_sig:
                continue
            last_sig = call.sig
            if pending is not None:
                yield _request(pending, window, client, subagent)
            usage = token_usage(call.last)
            last_prompt = usage.prompt_tokens
            number += 1
            pending = (number, model, ts, usage, lineno)
    if pending is not None:
        yield _request(pending, window, client, subagent)



def _request(pending: tuple[int, str | None, Any, Usage, int], window: int | None,
             client: str | None, subagent: bool) -> Request:
    """The call ``pending`` (index, model, timestamp, usage, line), as ``ingest.codex``
    gives it once its output has come."""
    index, model, ts, usage, line = pending
    return Request(index=index, model=model, timestamp=ts, system=(), tools=(), messages=(),
                   usage=usage, complete=False, sidechain=subagent,
                   role=SUBAGENT if subagent else MAIN, api="codex", window_hint=window,
                   line=line, client=client)
