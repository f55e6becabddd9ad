"""The registry of readers, in detection order (most specific first)."""

from __future__ import annotations

from ctxviewer.ingest.base import Reader
from ctxviewer.ingest.claude_code import READER as CLAUDE_CODE
from ctxviewer.ingest.trace import CLAUDE_TRACE, RECORDING

READERS: list[Reader] = [
    RECORDING,
    CLAUDE_TRACE,
    CLAUDE_CODE,
]


def get_reader(name: str) -> Reader:
    for reader in READERS:
        if reader.name == name:
            return reader
    known = ", ".join(r.name for r in READERS)
    from ctxviewer.ingest.base import LoadError

    raise LoadError(f"unknown format {name!r} (known: {known})")
