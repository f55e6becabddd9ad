"""Open a file, detect its format, stream its records through a reader."""

from __future__ import annotations

import functools
import io
import os
import stat
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from ctxviewer.ingest.base import (
    Cancelled,
    Head,
    LoadError,
    compression,
    lenient_loads,
    new_parser,
    open_log,
)
from ctxviewer.ingest.builder import SessionBuilder
from ctxviewer.ingest.collector import collector_paused
from ctxviewer.ingest.registry import READERS, LazyReader, binary_magic, get_reader
from ctxviewer.model import Session, Skipped
from ctxviewer.special_files import pseudo_root

HEAD_BYTES = 256 * 1024
HEAD_RECORDS = 30

Progress = Callable[[int, int], None]  # (bytes read, total bytes)
CancelCheck = Callable[[], bool]


def read_head(path: str) -> Head:
    """Read the start of ``path`` for sniffing. Raises ``LoadError`` for unreadable files."""
    _check_file(path)
    chunks: list[bytes] = []
    size = 0
    damage: BaseException | None = None  # what the decompressor said, when it stopped
    try:
        with open_log(path) as f:
            while size < HEAD_BYTES:
                try:  # read1: a compressed file cut short gives what it holds before the cut
                    chunk = f.read1(min(1 << 16, HEAD_BYTES - size))
                except truncated_errors() as e:  # cut short: its start still counts
                    damage = e
                    break
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            if (
                size >= HEAD_BYTES
                and b"\n" not in chunks[-1]
                and not any(b"\n" in c for c in chunks)
            ):
                _read_first_line(f, chunks)  # a trace can start with one long request
    except OSError as e:
        raise LoadError(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
    data = b"".join(chunks).removeprefix(BOM)
    if len(data) > HEAD_BYTES and b"\n" in data:  # a long first line, read whole
        data = data[: data.index(b"\n") + 1]
    if not data and compression(path):
        why = (
            "ends before any data"
            if damage is None or isinstance(damage, EOFError)
            else f"is damaged before any data ({str(damage) or type(damage).__name__})"
        )
        raise LoadError(f"cannot read {path}: the compressed file {why}")
    whole = len(data) < HEAD_BYTES
    # sniffers read the text's start only: a huge first line is not decoded whole
    head = Head(path=path, text=data[:HEAD_BYTES].decode("utf-8", errors="replace"))
    stripped = data.lstrip()
    if stripped[:1] in (b"{", b"[") and whole:
        try:
            head.document = orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    elif stripped[:1] in (b"{", b"[") and not whole:
        # A large single JSON document (e.g. a Gemini chat file): parse it when
        # the first line does not end: JSONL lines are self-contained.
        first = data.split(b"\n", 1)[0]
        try:
            value = orjson.loads(first)
            if isinstance(value, list):  # a JSON array on one line: a document, not JSONL
                head.document = value
        except orjson.JSONDecodeError:
            head.document = _parse_document(path)
    head.records = head_records(data.split(b"\n", HEAD_RECORDS))  # the rest in one piece
    if (
        b"\x00" in data[:8192]
        and not head.records
        and head.document is None
        and not binary_magic(data)
    ):
        if _utf16(data[:8192]):
            raise LoadError(
                f"{path} is UTF-16 text: ctxviewer reads logs in UTF-8 (save it as UTF-8)"
            )
        raise LoadError(f"{path} is a binary file, not a session log")
    return head


BOM = b"\xef\xbb\xbf"  # an editor's UTF-8 byte order mark: not part of the first record


def _utf16(start: bytes) -> bool:
    """A byte order mark of UTF-16, or text whose every other byte (and only those) is
    a NUL, as ASCII is in UTF-16."""
    if start[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return True
    halves = sorted((start[0::2].count(0), start[1::2].count(0)))
    n = len(start) // 2
    return n >= 8 and halves[1] >= 0.9 * n and halves[0] <= 0.1 * n


FIRST_LINE_MAX = 64 * 1024 * 1024  # the longest first line read to recognise a format


def _read_first_line(f: io.BufferedIOBase, chunks: list[bytes]) -> None:
    """Read on until the first line ends (or ``FIRST_LINE_MAX``): its record says the format."""
    size = sum(len(c) for c in chunks)
    while size < FIRST_LINE_MAX:
        try:
            chunk = f.read1(1 << 20)
        except truncated_errors():
            return
        if not chunk:
            return
        chunks.append(chunk)
        size += len(chunk)
        if b"\n" in chunk:
            return


def recorded_cwd(head: Head) -> str | None:
    """The working directory the first records name (transcripts: ``cwd``)."""
    for r in head.records:
        payload = r.get("payload")
        for where in (r, payload if isinstance(payload, dict) else {}):
            cwd = where.get("cwd")
            if isinstance(cwd, str) and cwd:
                return cwd
    return None


def head_records(lines: list[bytes]) -> list[dict[str, Any]]:
    """The JSON objects among the first ``HEAD_RECORDS`` lines (for sniffing)."""
    records: list[dict[str, Any]] = []
    for raw in lines[:HEAD_RECORDS]:
        raw = raw.strip()
        if raw[:1] == b"{":
            try:
                value = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            if isinstance(value, dict):
                records.append(value)
    return records


def is_gzip(path: str) -> bool:
    return compression(path) is not None


def _parse_document(path: str) -> Any:
    try:
        with open_log(path) as f:
            return orjson.loads(f.read().removeprefix(BOM))
    except (OSError, EOFError, orjson.JSONDecodeError):
        return None


def _check_file(path: str) -> None:
    root = pseudo_root(path)
    if root is not None:  # /proc/kmsg is "regular" and blocks the reader for good
        raise LoadError(f"{path} is in {root}, the system's files, not a session log")
    if not os.path.exists(path):
        raise LoadError(f"no such file: {path}")
    if os.path.isdir(path):
        raise LoadError(f"{path} is a directory, not a session log")
    if not stat.S_ISREG(os.stat(path).st_mode):  # a pipe would block, a device never end
        raise LoadError(
            f"{path} is not a regular file (a pipe or a device): save it to a "
            "file, or pipe it in as - (standard input)"
        )
    if not os.access(path, os.R_OK):
        raise LoadError(f"cannot read {path}: permission denied")


def detect(head: Head) -> LazyReader:
    """The reader whose ``sniff`` accepts ``head``; ``LoadError`` when none does."""
    if not head.text.strip():
        raise LoadError(f"{head.path} is empty")
    for reader in READERS:
        try:
            if reader.sniff(head):
                return reader
        except Exception:  # noqa: BLE001 - a sniff that trips on odd JSON says "not mine"
            continue
    raise LoadError(f"{head.path}: unknown format (not a session log or API trace ctxviewer reads)")


# Read buffer for line logs. Python's default (8 KiB) makes a trace whose lines
# are 300 kB each (every request repeats the history) spend longer joining
# reads than parsing; 4 MiB reads 223 MB in 0.09 s instead of 0.5 s.
LINE_BUFFER = 1 << 22


def iter_lines(path: str, start: int = 0) -> Iterator[tuple[int, bytes, int]]:
    """Yield (line number, raw line, offset in the file on disk after it).

    A last line without a newline is yielded too; callers decide whether it is
    complete. For gzip files the offset is the compressed position (progress).
    """
    kind = compression(path)
    if kind is not None:
        import gzip
        import lzma

        opener = gzip.open if kind == "gzip" else lzma.open
        with open(path, "rb") as raw_file, opener(raw_file, "rb") as f:
            lineno = 0
            try:
                for lineno, raw in enumerate(f, 1):
                    yield lineno, raw, raw_file.tell()
            except truncated_errors() as e:
                raise Truncated(lineno + 1, str(e)) from None
        return
    with open(path, "rb", buffering=LINE_BUFFER) as f:
        f.seek(start)
        offset = start
        for lineno, raw in enumerate(f, 1):
            offset += len(raw)
            yield lineno, raw, offset


class Truncated(Exception):
    """A compressed log ends early: the lines before ``line`` were read."""

    def __init__(self, line: int, why: str) -> None:
        super().__init__(why)
        self.line = line


@functools.cache
def truncated_errors() -> tuple[type[BaseException], ...]:
    """What a compressed stream cut short raises (gzip: EOFError or zlib.error; xz:
    LZMAError). A function, evaluated only when something is raised: the compression
    modules stay off the start-up of commands that read plain logs."""
    import gzip
    import lzma
    import zlib

    return (EOFError, zlib.error, lzma.LZMAError, gzip.BadGzipFile)


def _intact_lines(path: str, builder: SessionBuilder) -> Iterator[tuple[int, bytes, int]]:
    """``iter_lines``; a compressed file cut short ends with a skipped record that says so."""
    try:
        yield from iter_lines(path)
    except Truncated as e:
        builder.add(
            Skipped(
                e.line,
                f"the compressed file is truncated here ({e}): the rest of it cannot be read",
            )
        )


READER_ERROR = "reader error"  # prefix of the Skipped reason for a record a reader tripped on


def _feed(parser: Any, builder: SessionBuilder, line: int, record: Any) -> None:
    """Feed one record; a reader bug on odd JSON skips that record, never the file."""
    try:
        for item in list(parser.feed(line, record)):
            builder.add(item)
    except Exception as e:  # noqa: BLE001 - broken records are skipped and counted, never fatal
        builder.add(Skipped(line, f"{READER_ERROR}: {type(e).__name__}: {e}"[:200]))


def load(
    path: str,
    *,
    format: str | None = None,
    progress: Progress | None = None,
    cancelled: CancelCheck | None = None,
    limit: int | None = None,
    subagents: bool = True,
    messages: bool = True,
    head: Head | None = None,
) -> Session:
    """Read a whole file into a ``Session``.

    A session brings along the files its agent writes beside it (``subagents``:
    Claude Code's sub-agent files, ``Format.companions``).

    Raises ``LoadError`` (one-line message) for files that are not session
    logs, ``Cancelled`` when ``cancelled()`` turns true. With ``limit``, a line
    log is read only until ``limit`` bytes of it (decompressed) have been read
    (``head_session``). ``messages`` False: a reader that can leaves the requests'
    messages out (``new_parser``). ``head``: what ``read_head(path)`` gave, when the
    caller has read it already (a JSON document's head holds it parsed). The cyclic
    garbage collector waits meanwhile (``collector_paused``).
    """
    with collector_paused():
        return _load(path, format, progress, cancelled, limit, subagents, messages, head)


def _load(
    path: str,
    format: str | None,
    progress: Progress | None,
    cancelled: CancelCheck | None,
    limit: int | None,
    subagents: bool,
    messages: bool = True,
    head: Head | None = None,
) -> Session:
    head = head if head is not None else read_head(path)
    reader = get_reader(format) if format else detect(head)
    total = os.path.getsize(path)
    builder = SessionBuilder(Session(path=path, format=reader.name))
    parser = new_parser(reader, path, messages)
    cwd = recorded_cwd(head)
    doc = head.document
    del head  # its first line may be huge: not kept while the file is read again
    if reader.own_document:  # a Markdown log, a database, a folder: its reader loads it
        del doc
        _feed(parser, builder, 1, reader.read_document(path))
    elif reader.document:
        doc = doc if doc is not None else _parse_document(path)
        if doc is None:
            raise LoadError(f"{path}: not valid JSON")
        _feed(parser, builder, 1, doc)
        del doc
    else:
        del doc
        decode = getattr(parser, "decode", orjson.loads)
        step = max(total // 100, 1 << 16)  # progress per percent
        next_report = step
        read = 0
        for lineno, raw, offset in _intact_lines(path, builder):
            read += len(raw)
            if limit is not None and read > limit:
                break
            if cancelled is not None and cancelled():
                raise Cancelled()
            if raw and not raw.isspace():  # no strip(): it copies the line; JSON allows the blanks
                body = raw if lineno > 1 else raw.removeprefix(BOM)
                try:
                    record = decode(body)
                except orjson.JSONDecodeError:
                    try:
                        record = lenient_loads(body)  # a lone surrogate escape
                    except ValueError:
                        last = not raw.endswith(b"\n")
                        why = "truncated last line" if last else "not valid JSON"
                        builder.add(Skipped(lineno, why))
                        continue
                _feed(parser, builder, lineno, record)
            if progress is not None and offset >= next_report:
                progress(offset, total)
                next_report = offset + step
    try:
        for item in list(parser.finish()):
            builder.add(item)
    except Exception as e:  # noqa: BLE001 - as in _feed
        builder.add(Skipped(0, f"{READER_ERROR}: {type(e).__name__}: {e}"[:200]))
    if progress is not None:
        progress(total, total)
    session = builder.build()
    session.cwd = cwd
    if limit is None and subagents:
        session = reader.with_companions(
            session, lambda f: load(str(f), format=reader.name, subagents=False)
        )
    return session


def head_session(path: str, limit: int, format: str | None = None) -> Session | None:
    """The session of the first ``limit`` bytes of a line log (decompressed), or None
    when the whole log is shorter or is one JSON document: a first view of a big
    file, shown while ``load`` reads all of it."""
    head = read_head(path)
    reader = get_reader(format) if format else detect(head)
    if reader.document:
        return None
    if _readable_bytes(path, limit + 1) <= limit:
        return None
    return load(path, format=reader.name, limit=limit)


def _readable_bytes(path: str, most: int) -> int:
    """How many bytes of ``path`` (decompressed) can be read, up to ``most``: a
    compressed file cut short or damaged counts until the damage (``load`` says
    where it stops)."""
    size = 0
    with open_log(path) as f:
        try:
            while size < most:
                chunk = f.read1(min(1 << 20, most - size))
                if not chunk:
                    break
                size += len(chunk)
        except truncated_errors():
            pass
    return size
