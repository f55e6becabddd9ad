"""The requests of a qwen-code chat, for its row: ``ingest.qwen.chat``'s, without their
messages.

A request is an ``assistant`` record with ``usageMetadata``; the events are the
``system`` records of a compression checkpoint and of an API error's telemetry. Only
the lines that name one of those are parsed: the user's messages and the tool results
(the rest of the bytes) are skipped unparsed.
"""

from __future__ import annotations

from collections.abc import Iterator

from ctxviewer.ingest.base import Item
from ctxviewer.ingest.loader import BOM, iter_lines
from ctxviewer.ingest.qwen.chat import reply_request, system_events
from ctxviewer.library.rows import Numbering, parse

_WANTED = (b"usageMetadata", b"chat_compression", b"ui_telemetry")


def items(path: str) -> Iterator[Item]:
    number = Numbering()
    for lineno, raw, _ in iter_lines(path):
        if not (_WANTED[0] in raw or _WANTED[1] in raw or _WANTED[2] in raw):
            continue
        record = parse(raw if lineno > 1 else raw.removeprefix(BOM))
        if not isinstance(record, dict):
            continue
        kind = record.get("type")
        if kind == "system":
            yield from system_events(record)
        elif kind == "assistant" and isinstance(record.get("usageMetadata"), dict):
            uuid = u if isinstance(u := record.get("uuid"), str) else f"line:{lineno}"
            yield reply_request(lineno, uuid, record, index=number(uuid, None))
