"""The prompt a Claude Code transcript records of each API call (2.1.332 on).

Claude Code 2.1.332 writes what it sent beside the conversation:

- ``api-request-shape``: the system prompt and every tool schema, under a hash
  (``shapeHash``) that later calls name again when they send the same ones;
- ``api-request``: one per call, with its ``id``, the ``shapeHash`` it sent
  and its parameters (``model``, ``betas``, ``max_tokens``); the assistant
  records of its answer name it back (``requestRef``);
- ``api-request-blob``: a message as sent, by hash (the conversation's own
  records hold the others); ctxviewer rebuilds the messages from the
  conversation and the ``rendered`` text of its attachments instead.

The system prompt recorded has no billing header (``x-anthropic-billing-
header``), which Claude Code does not count either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctxviewer.ingest.api.anthropic import Interner, system_from, tools_from
from ctxviewer.ingest.base import as_dict, as_int
from ctxviewer.model import Block, ToolDef

ONE_M = 1_000_000
NOTE = (
    "system prompt and tools: as the transcript records them (api-request-shape); "
    "messages: rebuilt from its records"
)


@dataclass(frozen=True)
class SentPrompt:
    """What one API call sent besides its messages."""

    system: tuple[Block, ...]
    tools: tuple[ToolDef, ...]
    max_tokens: int | None
    window_hint: int | None  # 1M when the call asked for the context-1m beta


class RecordedPrompts:
    """The shapes and calls a transcript records, joined to the answers that name them."""

    def __init__(self, intern: Interner) -> None:
        self.intern = intern
        self.shapes: dict[str, tuple[tuple[Block, ...], tuple[ToolDef, ...]]] = {}
        self.calls: dict[str, SentPrompt] = {}

    def feed(self, record: dict[str, Any]) -> bool:
        """Take an ``api-request-shape`` / ``api-request`` / ``api-request-blob`` record;
        False for any other record."""
        kind = record.get("type")
        if kind == "api-request-shape":
            shape = as_dict(record.get("shape"))
            key = record.get("shapeHash")
            if isinstance(key, str):
                self.shapes[key] = (
                    system_from(shape.get("system"), self.intern),
                    tools_from(shape.get("tools"), self.intern),
                )
            return True
        if kind == "api-request":
            key, sent = record.get("id"), self.shapes.get(str(record.get("shapeHash")))
            if isinstance(key, str) and sent is not None:
                params = as_dict(record.get("params"))
                betas = params.get("betas")
                wide = isinstance(betas, list) and any(
                    isinstance(b, str) and "context-1m" in b for b in betas
                )
                self.calls[key] = SentPrompt(
                    sent[0],
                    sent[1],
                    as_int(params.get("max_tokens")) or None,
                    ONE_M if wide else None,
                )
            return True
        return kind == "api-request-blob"

    def sent(self, record: dict[str, Any]) -> SentPrompt | None:
        """The prompt of the call an assistant record answers (its ``requestRef``)."""
        ref = record.get("requestRef")
        return self.calls.get(ref) if isinstance(ref, str) else None
