"""Readers: turn session logs and API traces into ``ctxviewer.model`` objects.

May import: ``ctxviewer.model``, ``ctxviewer.jsonish`` and the standard
library. Never Qt.

``load(path)`` detects the format by content (never by file extension) and
returns a ``Session``. Unknown or broken records are skipped and counted,
never fatal; a truncated last line is tolerated.
"""

from __future__ import annotations

from ctxviewer.ingest.base import Cancelled, Head, LoadError, Parser, Reader
from ctxviewer.ingest.loader import detect, load, read_head
from ctxviewer.ingest.registry import READERS, get_reader

__all__ = [
    "Cancelled",
    "Head",
    "LoadError",
    "Parser",
    "Reader",
    "READERS",
    "detect",
    "get_reader",
    "load",
    "read_head",
]
