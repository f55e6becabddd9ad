"""The registry of readers, in detection order (most specific first)."""

from __future__ import annotations

from ctxviewer.ingest.base import Reader
from ctxviewer.ingest.claude_code import READER as CLAUDE_CODE
from ctxviewer.ingest.codex import READER as CODEX
from ctxviewer.ingest.gemini import JSONL_READER as GEMINI_JSONL
from ctxviewer.ingest.gemini import READER as GEMINI
from ctxviewer.ingest.otel import READER as OTEL
from ctxviewer.ingest.qwen_code import READER as QWEN_CODE
from ctxviewer.ingest.trace import CLAUDE_TRACE, RECORDING

READERS: list[Reader] = [
    RECORDING,
    CLAUDE_TRACE,
    OTEL,  # OTLP export requests: no other reader takes their lines
    QWEN_CODE,  # before Claude Code: same record envelope, Claude's sniff would take it
    CLAUDE_CODE,
    CODEX,
    GEMINI,  # the JSON document layout; before the JSONL one
    GEMINI_JSONL,
]


def get_reader(name: str) -> Reader:
    for reader in READERS:
        if reader.name == name:
            return reader
    known = ", ".join(r.name for r in READERS)
    from ctxviewer.ingest.base import LoadError

    raise LoadError(f"unknown format {name!r} (known: {known})")
