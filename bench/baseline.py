"""The baseline every load benchmark is measured against: ``orjson.loads`` of
every line of a file (gzip and xz decompressed, known by their magic bytes).

It imports nothing of ctxviewer, so a process timing it pays no import cost
the baseline would not have.
"""

from __future__ import annotations

import gzip
import lzma
from typing import IO

import orjson


def _open(path: str) -> IO[bytes]:
    with open(path, "rb") as f:
        magic = f.read(6)
    if magic[:2] == b"\x1f\x8b":
        return gzip.open(path, "rb")
    if magic == b"\xfd7zXZ\x00":
        return lzma.open(path, "rb")
    return open(path, "rb")


def raw_parse(path: str) -> None:
    """Parse every non-blank line, results dropped; broken lines are skipped."""
    with _open(path) as f:
        for line in f:
            if line.strip():
                try:
                    orjson.loads(line)
                except orjson.JSONDecodeError:
                    pass
