"""What every reader shares: the head of a file, a format and its reader, errors.

A reader is a small object in the registry (``ctxviewer.ingest.registry``).
It says whether a file looks like its format (``sniff``) and hands out a
*parser*: an incremental, stateful consumer of parsed records that yields
``Request``, ``Event`` and ``Skipped`` items. Loading a whole file and
following a growing one (live attach) use the same parser.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, fields, replace
from typing import Any, Protocol

from ctxviewer.model import Block, Event, Message, Request, Skipped, TokenCount

Item = Request | Event | Skipped | TokenCount


from ctxviewer.errors import Cancelled as Cancelled  # noqa: E402 - re-exported
from ctxviewer.errors import LoadError as LoadError  # noqa: E402 - re-exported


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


# A reader's note on a request whose body the log lost in part (the OpenTelemetry
# reader: an inline body cut inside its messages) or whole: the analysis takes no
# overhead from such a request, and shows the lost messages as such.
MESSAGES_CUT_NOTE = "request body cut inside its messages"
ONLY_USAGE = "only the usage is known"


def messages_unsure(notes: tuple[str, ...]) -> bool:
    """True when a request's notes say the log lost some or all of its messages."""
    return any(n.startswith(MESSAGES_CUT_NOTE) or ONLY_USAGE in n for n in notes)


MAX_TOKENS = 1_000_000_000  # no context window comes near: larger counts are damage


def as_int(value: Any) -> int:
    """A token count from a JSON value (None, floats and junk become 0 or int), at most
    ``MAX_TOKENS``: a count of 1e30 or 2**63 is a damaged file, not a prompt."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return min(MAX_TOKENS, max(0, value))
    if isinstance(value, float) and value == value:
        return min(MAX_TOKENS, max(0, int(min(value, MAX_TOKENS))))
    return 0


def as_dict(value: Any) -> dict[str, Any]:
    """A JSON object, or an empty one in place of anything else (None, a list, text)."""
    return value if isinstance(value, dict) else {}


_REQUEST_TEXT = (
    "model",
    "timestamp",
    "agent",
    "message_id",
    "request_id",
    "client",
    "conversation",
)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


_REQUEST_FIELDS = tuple(f.name for f in fields(Request))


def request_with(req: Request, **changes: Any) -> Request:
    """``dataclasses.replace(req, **changes)`` at less than half its cost (a Request has
    no ``__post_init__`` and no ``init=False`` field): the builder renumbers every one."""
    new = object.__new__(Request)
    for name in _REQUEST_FIELDS:
        object.__setattr__(new, name, changes[name] if name in changes else getattr(req, name))
    return new


def _well_typed_request(r: Request) -> bool:
    """True when ``well_typed`` keeps ``r`` as it is (the usual case), checked fast."""
    for name in _REQUEST_TEXT:
        v = getattr(r, name)
        if v is not None and v.__class__ is not str:
            return False
    hint, cap = r.window_hint, r.max_tokens
    return (
        (hint is None or (hint.__class__ is int and 0 < hint <= MAX_TOKENS))
        and (cap is None or cap.__class__ is int)
        and all(_well_typed_event(e) for e in r.events)
    )


def _well_typed_event(e: Event) -> bool:
    ts, trigger, pre, post = e.timestamp, e.trigger, e.pre_tokens, e.post_tokens
    return (
        (ts is None or ts.__class__ is str)
        and (trigger is None or trigger.__class__ is str)
        and (pre is None or pre.__class__ is int)
        and (post is None or post.__class__ is int)
        and e.detail.__class__ is str
    )


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def well_typed(value: Any) -> Any:
    """A Request, Event, Message, Block or tuple of them with the text fields a reader
    copied from odd JSON (a list, a number, an object) as None. They are hashed
    and compared: interning, the session's model, deduplication keys."""
    if isinstance(value, Request):  # most are fine: those stay the same object
        if _well_typed_request(value):
            return value
        hint = _count(value.window_hint)
        fixed: dict[str, Any] = {f: _text(getattr(value, f)) for f in _REQUEST_TEXT}
        fixed["window_hint"] = (
            hint if hint is not None and 0 < hint <= MAX_TOKENS else None
        )  # a window of 2**63 tokens is damage
        fixed["max_tokens"] = _count(value.max_tokens)
        fixed["events"] = tuple(well_typed(e) for e in value.events)
        changed = {f: v for f, v in fixed.items() if v is not getattr(value, f)}
        return request_with(value, **changed) if changed else value
    if isinstance(value, Event):  # a timestamp or trigger copied from odd JSON
        if _well_typed_event(value):
            return value
        return replace(
            value,
            timestamp=_text(value.timestamp),
            trigger=_text(value.trigger),
            pre_tokens=_count(value.pre_tokens),
            post_tokens=_count(value.post_tokens),
            detail=value.detail if isinstance(value.detail, str) else str(value.detail),
        )
    if isinstance(value, Message):
        return replace(
            value,
            role=value.role if isinstance(value.role, str) else "user",
            blocks=tuple(well_typed(b) for b in value.blocks),
            id=_text(value.id),
            timestamp=_text(value.timestamp),
        )
    if isinstance(value, Block):
        return replace(
            value,
            text=value.text if isinstance(value.text, str) else str(value.text),
            tag=_text(value.tag),
            name=_text(value.name),
            ref=_text(value.ref),
            fixed_tokens=value.fixed_tokens if isinstance(value.fixed_tokens, int) else None,
        )
    if isinstance(value, tuple):
        return tuple(well_typed(v) for v in value)
    return value


def lenient_loads(body: bytes) -> Any:
    """A JSON line orjson refuses only for a lone surrogate escape (``"\\ud800"``, which
    some clients write for cut emoji): parsed with each such escape as U+FFFD.
    Raises ``ValueError`` when the line is broken otherwise."""
    text = body.decode("utf-8", errors="strict")
    if "\\u" not in text:
        raise ValueError("not valid JSON")
    value = json.loads(text)
    return _no_lone_surrogates(value)


def _no_lone_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [_no_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_no_lone_surrogates(k): _no_lone_surrogates(v) for k, v in value.items()}
    return value


def new_parser(reader: Reader, path: str, messages: bool = True) -> Parser:
    """``reader.parser()``, told the path of the log when it asks for it (a ``source``
    attribute: the OpenTelemetry reader looks for body files beside the log), and
    (``messages`` False, a ``messages`` attribute) to leave the requests' messages out
    where it can: what only their usage needs (the library's rows)."""
    parser = reader.parser()
    if hasattr(parser, "source"):
        parser.source = path
    if not messages and hasattr(parser, "messages"):
        parser.messages = False
    return parser


def drain(items: Iterable[Item]) -> Iterator[Item]:
    yield from items


class Format:
    """One log format: what ``ctxviewer formats`` lists, its test, and where its reader is.

    Most formats are JSON lines (``feed`` per record) or one JSON document
    (``document``). A format whose session is not a JSON file (a Markdown log, an
    SQLite database, a folder of JSON files) is a document its reader loads itself
    (``own_document``): the reader's ``read_document(path)`` gives the value fed at
    line 1, and its ``sources(path)`` names every file that value was read from (a
    database's write-ahead log, the files of a task folder), so that live follow
    notices a change in any of them. ``magic``: the bytes a binary file of the
    format starts with, for the loader to let it reach ``sniff``.
    """

    __slots__ = (
        "name",
        "label",
        "description",
        "document",
        "sniff",
        "module",
        "attr",
        "companions",
        "own_document",
        "magic",
    )

    def __init__(
        self,
        name: str,
        label: str,
        description: str,
        document: bool,
        sniff: Callable[[Head], bool],
        module: str,
        attr: str = "READER",
        companions: str | None = None,
        own_document: bool = False,
        magic: bytes | None = None,
    ) -> None:
        self.name, self.label, self.description, self.document = (
            name,
            label,
            description,
            document or own_document,
        )
        self.sniff, self.module, self.attr = sniff, module, attr
        # "module:function" joining the files a session brings along (Claude Code's
        # sub-agent files), or None
        self.companions = companions
        self.own_document, self.magic = own_document, magic


def compression(path: str) -> str | None:
    """``"gzip"``, ``"xz"`` or None, from the file's magic bytes (never its name)."""
    with open(path, "rb") as f:
        magic = f.read(6)
    if magic[:2] == b"\x1f\x8b":
        return "gzip"
    if magic == b"\xfd7zXZ\x00":
        return "xz"
    return None


def open_log(path: str) -> io.BufferedIOBase:
    """Open a log for reading bytes, decompressing gzip and xz transparently (by magic bytes)."""
    kind = compression(path)
    if kind == "gzip":
        import gzip  # compressed logs only: kept off every command's start-up

        return gzip.open(path, "rb")
    if kind == "xz":
        import lzma

        return lzma.open(path, "rb")
    return open(path, "rb")
