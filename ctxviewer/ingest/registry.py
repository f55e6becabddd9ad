"""The registry of readers, in detection order (most specific first).

Each entry is a ``LazyReader``: it sniffs with the format's test
(``ingest.sniffing``) and imports its reader module only when asked for a parser.
"""

from __future__ import annotations

import importlib

from ctxviewer.ingest.base import Head, LoadError, Parser, Reader
from ctxviewer.ingest.sniffing import FORMATS, Format


class LazyReader:
    """A format's reader, imported on first use."""

    def __init__(self, fmt: Format) -> None:
        self.format = fmt
        self.name, self.label = fmt.name, fmt.label
        self.description, self.document = fmt.description, fmt.document
        self._reader: Reader | None = None

    def sniff(self, head: Head) -> bool:
        return self.format.sniff(head)

    @property
    def reader(self) -> Reader:
        if self._reader is None:
            reader: Reader = getattr(importlib.import_module(self.format.module),
                                     self.format.attr)
            self._reader = reader
        return self._reader

    def parser(self) -> Parser:
        return self.reader.parser()

    def __repr__(self) -> str:
        return f"<reader {self.name}>"


READERS: list[Reader] = [LazyReader(f) for f in FORMATS]


def get_reader(name: str) -> Reader:
    for reader in READERS:
        if reader.name == name:
            return reader
    known = ", ".join(r.name for r in READERS)
    raise LoadError(f"unknown format {name!r} (known: {known})")
