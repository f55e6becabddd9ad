"""The registry of readers, in detection order (most specific first).

Each log format is a ``Format`` defined by its package (``ingest.claude``,
``ingest.codex``, …): its registry name, its description and a ``sniff`` test
on the file's head. The packages' ``__init__`` modules hold only those tests
and the record types they look for; a reader module is imported only when a
file of its format is opened, so ``ctxviewer report`` on a Claude Code
transcript never loads the Codex, Gemini or trace code. Adding an agent is
adding a package and its formats to ``FORMATS``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ctxviewer.ingest import aider, claude, cline, codex, gemini, opencode, otel, qwen, trace
from ctxviewer.ingest.base import Format, Head, LoadError, Parser, Reader
from ctxviewer.model import Session

# detection order: most specific first
FORMATS: tuple[Format, ...] = (
    trace.RECORDING,
    trace.CLAUDE_TRACE,
    otel.FORMAT,  # OTLP export requests: no other reader takes their lines
    qwen.FORMAT,  # before Claude Code: same record envelope, Claude's test would take it
    claude.FORMAT,
    codex.FORMAT,
    gemini.CHAT_DOCUMENT,  # the JSON document layout; before the JSONL one
    gemini.CHAT_JSONL,
    cline.TASK,  # a JSON array of messages: after every format with a stronger test
    opencode.DATABASE,
    opencode.SESSION,
    aider.CHAT_HISTORY,
    aider.LLM_HISTORY,
)


def binary_magic(start: bytes) -> bool:
    """Whether ``start`` (a file's first bytes) is the signature of a binary format some
    reader takes (an SQLite database), so that it reaches the formats' tests."""
    return any(f.magic is not None and start.startswith(f.magic) for f in FORMATS)


class LazyReader:
    """A format's reader, imported on first use."""

    def __init__(self, fmt: Format) -> None:
        self.format = fmt
        self.name, self.label = fmt.name, fmt.label
        self.description, self.document = fmt.description, fmt.document
        self.own_document = fmt.own_document
        self._reader: Reader | None = None

    def sniff(self, head: Head) -> bool:
        return self.format.sniff(head)

    @property
    def reader(self) -> Reader:
        if self._reader is None:
            reader: Reader = getattr(importlib.import_module(self.format.module), self.format.attr)
            self._reader = reader
        return self._reader

    def parser(self) -> Parser:
        return self.reader.parser()

    def read_document(self, path: str) -> Any:
        """The value an ``own_document`` reader loads from ``path`` (``LoadError`` when it
        cannot)."""
        # (getattr: only own_document readers have it; the Reader protocol does not)
        read: Callable[[str], Any] = getattr(self.reader, "read_document")  # noqa: B009
        return read(path)

    def sources(self, path: str) -> tuple[str, ...]:
        """Every file the session of ``path`` is read from: ``path`` itself, and for an
        ``own_document`` reader the files it reads beside it."""
        more: Callable[[str], tuple[str, ...]] | None = getattr(self.reader, "sources", None)
        return (path,) if more is None else more(path)

    def with_companions(self, session: Session, load: Callable[[Path], Session]) -> Session:
        """``session`` joined with the files its agent writes beside it (Claude Code's
        sub-agent files), each read by ``load``; the session itself for most formats."""
        if self.format.companions is None:
            return session
        module, _, attr = self.format.companions.partition(":")
        join: Callable[[Session, Callable[[Path], Session]], Session] = getattr(
            importlib.import_module(module), attr
        )
        return join(session, load)

    def __repr__(self) -> str:
        return f"<reader {self.name}>"


READERS: list[LazyReader] = [LazyReader(f) for f in FORMATS]


def get_reader(name: str) -> LazyReader:
    for reader in READERS:
        if reader.name == name:
            return reader
    known = ", ".join(r.name for r in READERS)
    raise LoadError(f"unknown format {name!r} (known: {known})")
