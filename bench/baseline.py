"""The baseline every load benchmark is measured against: ``orjson.loads`` of
every line of a file (gzip and xz decompressed, known by their magic bytes).

Lines are read the fast way (a large buffer), so the baseline is the parse.
It imports nothing of ctxviewer, so a process timing it pays no import cost
the baseline would not have.
"""

from __future__ import annotations

import gzip
import lzma
from typing import IO

import orjson

# Lines are read through a 4 MiB buffer, as ctxviewer reads them: with Python's
# default 8 KiB one, a trace of 300 kB lines spends more time joining reads
# than orjson spends parsing, and the ratio would measure that instead.
LINE_BUFFER = 1 << 22


def _open(path: str, buffering: int = LINE_BUFFER) -> IO[bytes]:
    with open(path, "rb") as f:
        magic = f.read(6)
    if magic[:2] == b"\x1f\x8b":
        return gzip.open(path, "rb")
    if magic == b"\xfd7zXZ\x00":
        return lzma.open(path, "rb")
    return open(path, "rb", buffering=buffering)


def raw_parse(path: str, buffering: int = LINE_BUFFER) -> None:
    """Parse every non-blank line, results dropped; broken lines are skipped.

    ``buffering=-1`` reads through Python's default buffer (8 KiB), the naive
    loop earlier measurements used."""
    with _open(path, buffering) as f:
        for line in f:
            if line.strip():
                try:
                    orjson.loads(line)
                except orjson.JSONDecodeError:
                    pass
