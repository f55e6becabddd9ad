"""What every reader shares: the sniffing head, the reader protocol, errors.

A reader is a small object in the registry (``ctxviewer.ingest.registry``).
It says whether a file looks like its format (``sniff``) and hands out a
*parser*: an incremental, stateful consumer of parsed records that yields
``Request``, ``Event`` and ``Skipped`` items. Loading a whole file and
following a growing one (live attach) use the same parser.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from ctxviewer.model import Event, Request, Skipped

Item = Request | Event | Skipped


class LoadError(Exception):
    """A file that cannot be read as a session. The message is one line for users."""


class Cancelled(Exception):
    """Loading was cancelled by the caller."""


@dataclass
class Head:
    """The start of a file, for format detection."""

    path: str
    text: str  # first bytes decoded as UTF-8 (errors replaced)
    records: list[dict[str, Any]] = field(default_factory=list)  # first parsed JSONL objects
    document: Any = None  # the whole file parsed as one JSON value, when it is one


class Parser(Protocol):
    def feed(self, line: int, record: Any) -> Iterable[Item]:
        """Consume one parsed record (a JSONL line, or a whole JSON document at line 1)."""
        ...

    def finish(self) -> Iterable[Item]:
        """The input ended (for now): yield what was held back."""
        ...


class Reader(Protocol):
    name: str  # registry key, shown in `ctxviewer formats` and the JSON report
    label: str  # for people
    description: str
    document: bool  # True: the file is one JSON document, not JSONL

    def sniff(self, head: Head) -> bool: ...

    def parser(self) -> Parser: ...


def as_int(value: Any) -> int:
    """A token count from a JSON value (None, floats and junk become 0 or int)."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(0, value)
    if isinstance(value, float) and value == value:
        return max(0, int(value))
    return 0


def drain(items: Iterable[Item]) -> Iterator[Item]:
    yield from items
