"""Follow a session log that is still being written (live attach, ``ctxviewer tail``).

``Follower(path).poll()`` reads what was appended since the last call and
feeds it through the same reader and ``SessionBuilder`` rules that ``load``
uses, so one ``Session`` object grows in place; the ``Update`` says which
request indices are new and which changed. That session is the follower's own:
``snapshot()`` is the copy to show (the window shows one snapshot per step). Callers poll on a timer (the GUI
from a QTimer, ``ctxviewer tail`` in a loop); nothing here blocks or sleeps.

- Cheap when idle: ``os.stat`` first; nothing is opened when size, mtime and
  inode are unchanged, and only the bytes after the last complete line are
  read otherwise.
- Only complete lines are consumed. A last line without its newline is a
  write in progress: it waits for its end, it is neither an error nor skipped.
- The file got shorter than what was consumed (truncated), is another file
  (new inode, or its first bytes differ): the file is read again from scratch
  into a new ``Session`` (``Update.reloaded``).
- Document formats (``reader.document``: Gemini CLI's JSON chat, rewritten
  whole on every change) and compressed logs (gzip, xz) are re-read whole when they change;
  the result is merged into the same session by position.
- A file that does not exist yet, is empty, or whose format cannot be told
  from what is there yet gives empty updates (``Follower.error`` says why)
  until it can be read.

Held-back requests. A parser may hold the last call until the next record
shows it is over: the Codex reader keeps a call open while its output items
follow, Gemini CLI's JSONL reader until the next message. Live, that call
would show only when the user's next turn starts. The follower shows it at
once: after each poll it asks a throwaway copy of the parser what ``finish()``
would yield (a parser may offer a ``peek()`` method to do that itself) and
appends those requests *provisionally* (``Update.provisional``). On the next
poll they are taken back before new lines are fed; the final request takes
the same index and is listed in ``changed`` when it differs.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable

import orjson

from ctxviewer.ingest.base import (
    Head,
    Item,
    LoadError,
    Parser,
    Reader,
    compression,
    lenient_loads,
    new_parser,
)
from ctxviewer.ingest.builder import mark_auxiliary
from ctxviewer.ingest.follow.builder import LiveBuilder, merge_by_position, peek
from ctxviewer.ingest.follow.builder import Update as Update  # re-exported
from ctxviewer.ingest.loader import (
    BOM,
    HEAD_BYTES,
    HEAD_RECORDS,
    LINE_BUFFER,
    READER_ERROR,
    detect,
    load,
    read_head,
    recorded_cwd,
)
from ctxviewer.ingest.registry import get_reader
from ctxviewer.model import Request, Session, Skipped

FINGERPRINT_BYTES = 64  # first bytes remembered to notice a replaced file


class Follower:
    """Follows one file; see the module docstring. Not thread-safe (one caller)."""

    def __init__(self, path: str | os.PathLike[str], format: str | None = None) -> None:
        self.path = os.fspath(path)
        self._forced: Reader | None = get_reader(format) if format else None
        self.error: str | None = None  # why nothing can be shown yet (waiting states)
        self._finished = False
        self._reset()

    def _reset(self) -> None:
        self.reader: Reader | None = None
        self.session: Session | None = None
        self._parser: Parser | None = None
        self._builder: LiveBuilder | None = None
        self._stamp: tuple[int, ...] | None = None
        self._ident: tuple[int, int] | None = None
        self._offset = 0  # bytes consumed: the end of the last complete line
        self._lineno = 0
        self._fp = b""
        self._tail = b""  # the last bytes read (before ``_offset``)
        self._whole = False
        self._more = False
        self._provisional: list[int] = []

    @property
    def format(self) -> str | None:
        """The reader's name once detected."""
        return self.reader.name if self.reader is not None else None

    @property
    def offset(self) -> int:
        return self._offset

    def snapshot(self) -> Session | None:
        """The session read so far, as a copy later polls never touch (new lists, the
        same immutable requests): what a caller may hand to other threads or views.
        ``session`` itself grows in place, for this follower alone."""
        s = self.session
        if s is None:
            return None
        return Session(
            path=s.path,
            format=s.format,
            requests=list(s.requests),
            skipped=list(s.skipped),
            events=list(s.events),
            title=s.title,
            session_id=s.session_id,
            token_counts=list(s.token_counts),
            cwd=s.cwd,
        )

    @property
    def rereads_whole(self) -> bool:
        """The file is read whole on every change (a JSON document, a compressed log)."""
        return self._whole

    def poll(self, max_bytes: int | None = None) -> Update:
        """Read what was appended since the last poll.

        ``max_bytes`` bounds the work of one call (a huge existing file can
        be taken in steps; ``Update.more`` says there is more to read).
        Raises ``LoadError`` for a directory, an unreadable or binary file, or
        content that is definitely not a session log.
        """
        if self._finished:
            return self._nothing()
        st = self._stat()
        if st is None:
            self.error = f"no such file: {self.path}"
            return self._nothing()
        stamp = self._stamp_of(st)
        if stamp == self._stamp and not self._more:
            return self._nothing()
        if self.reader is None:
            return self._start(st, max_bytes)
        if self._whole:  # rewritten whole anyway (in place or by rename): merge by position
            return self._reread(stamp)
        if (st.st_dev, st.st_ino) != self._ident or st.st_size < self._offset:
            return self._reload(st, max_bytes)
        if not self._same_start():
            return self._reload(st, max_bytes)
        return self._append(stamp, max_bytes)

    def finish(self) -> Update:
        """Stop following: read to the end, including a last line without newline.

        Releases what the parser held back and builds the session the way
        ``load`` would. Later polls return empty updates. Raises ``LoadError``
        when the file is missing or its format is still unknown.
        """
        if self._finished:
            return self._nothing()
        before = self.session
        prev = list(before.requests) if before is not None else []
        self.poll()
        while self._more:
            self.poll()
        if self.reader is None or self.session is None:
            head = read_head(self.path)  # raises for a missing or unreadable file
            detect(head)  # raises: empty or unknown format
            raise LoadError(self.error or f"{self.path}: no session content yet")
        if not self._whole:
            self._drain()
        self._finished = True
        if self.session is not before:
            return Update(
                self.session,
                new=list(range(len(self.session.requests))),
                reloaded=before is not None,
            )
        return self._diff(prev, [])

    # -- starting, reloading ------------------------------------------------

    def _stat(self) -> os.stat_result | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        except OSError as e:
            raise LoadError(f"cannot read {self.path}: {e.strerror or e}") from None
        if stat.S_ISDIR(st.st_mode):
            raise LoadError(f"{self.path} is a directory, not a session log")
        return st

    def _start(self, st: os.stat_result, max_bytes: int | None) -> Update:
        stamp = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if st.st_size == 0:
            self.error = f"{self.path} is empty"
            self._stamp = stamp
            return self._nothing()
        head = read_head(self.path)
        reader = self._forced
        if reader is None:
            try:
                reader = detect(head)
            except LoadError as e:
                if not _undecided(head, st.st_size):
                    raise
                self.error = str(e)  # more lines may tell; try again when it grows
                self._stamp = stamp
                return self._nothing()
        self.error = None
        self.reader = reader
        self._ident = (st.st_dev, st.st_ino)
        self._whole = reader.document or compression(self.path) is not None
        if self._whole:
            return self._reread(self._stamp_of(st))
        self.session = Session(path=self.path, format=reader.name, cwd=recorded_cwd(head))
        self._parser = new_parser(reader, self.path)
        self._builder = LiveBuilder(self.session)
        return self._append(stamp, max_bytes)

    def _stamp_of(self, st: os.stat_result) -> tuple[int, ...]:
        """What a poll compares: the file's stat, and for a reader that loads its own
        document, the size and time of every other file it reads (a database's
        write-ahead log, a task folder's files): a change in any of them is new data."""
        stamp: tuple[int, ...] = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        reader = self.reader
        if reader is None or not getattr(reader, "own_document", False):
            return stamp
        sources = getattr(reader, "sources", None)
        for other in (sources(self.path) if sources is not None else ())[1:]:
            try:
                o = os.stat(other)
                stamp += (o.st_size, o.st_mtime_ns)
            except OSError:
                stamp += (-1, -1)
        return stamp

    def _reload(self, st: os.stat_result, max_bytes: int | None) -> Update:
        self._reset()
        up = self._start(st, max_bytes)
        return Update(
            up.session, new=up.new, reloaded=True, provisional=up.provisional, more=up.more
        )

    def _same_start(self) -> bool:
        """Whether the file still holds the bytes read before, at its start and where the
        read stopped (not replaced: ``cp`` over it, or truncated and written again, keeps
        the inode, and a recording of the same day keeps the first bytes too)."""
        if not self._fp:
            return True
        try:
            with open(self.path, "rb") as f:
                if f.read(len(self._fp)) != self._fp:
                    return False
                if self._tail:
                    f.seek(self._offset - len(self._tail))
                    return f.read(len(self._tail)) == self._tail
                return True
        except OSError:
            return True  # vanished between stat and open: decided on the next poll

    # -- whole-file formats -------------------------------------------------

    def _reread(self, stamp: tuple[int, ...]) -> Update:
        assert self.reader is not None
        self._stamp = stamp
        try:
            fresh = load(self.path, format=self.reader.name)
        except LoadError as e:
            other = self._redetect()
            if other is not None:  # e.g. a one-line JSONL file first taken for a document
                st = self._stat()
                if st is not None:
                    self._reset()
                    return self._restart_as(other, st)
            self.error = str(e)  # a document caught mid-rewrite: keep the last good one
            return self._nothing()
        self.error = None
        if self.session is None:
            self.session = fresh
            return Update(fresh, new=list(range(len(fresh.requests))))
        return self._merge(fresh)

    def _redetect(self) -> Reader | None:
        if self._forced is not None:
            return None
        try:
            reader = detect(read_head(self.path))
        except LoadError:
            return None
        return reader if reader is not self.reader else None

    def _restart_as(self, reader: Reader, st: os.stat_result) -> Update:
        forced, self._forced = self._forced, reader
        try:
            up = self._start(st, None)
        finally:
            self._forced = forced
        return Update(up.session, new=up.new, reloaded=True, provisional=up.provisional)

    def _merge(self, fresh: Session) -> Update:
        """Take a re-read document's requests into the followed session, by position."""
        assert self.session is not None
        return merge_by_position(self.session, fresh)

    # -- line formats -------------------------------------------------------

    def _append(self, stamp: tuple[int, ...], max_bytes: int | None) -> Update:
        assert self.session is not None and self._builder is not None
        assert self._parser is not None
        prev: list[Request] | None = None
        consumed = 0
        self._more = False
        with open(self.path, "rb", buffering=LINE_BUFFER) as f:
            f.seek(self._offset)
            for raw in f:
                if not raw.endswith(b"\n"):
                    break  # a line still being written: wait for its end
                if prev is None:
                    prev = list(self.session.requests)
                    self._builder.rollback()
                consumed += len(raw)
                self._lineno += 1
                self._feed(raw)
                if max_bytes is not None and consumed >= max_bytes:
                    self._more = True
                    break
            self._offset += consumed
            if len(self._fp) < FINGERPRINT_BYTES and consumed:
                f.seek(0)
                self._fp = f.read(min(FINGERPRINT_BYTES, self._offset))
            if consumed:  # the bytes that end what was read: an append never changes them
                f.seek(max(0, self._offset - FINGERPRINT_BYTES))
                self._tail = f.read(min(FINGERPRINT_BYTES, self._offset))
        self._stamp = stamp
        if prev is None:
            return self._nothing()
        self._provisional = self._builder.add_tentative(peek(self._parser))
        return self._diff(prev, self._provisional)

    def _feed(self, raw: bytes, last: bool = False) -> None:
        """One line to the parser; bad JSON or a reader bug skips it (as ``load`` does)."""
        assert self._parser is not None and self._builder is not None
        body = raw.strip()
        if self._lineno == 1:
            body = body.removeprefix(BOM)  # an editor's byte order mark, as ``load`` drops it
        if not body:
            return
        parser, line = self._parser, self._lineno
        try:
            record = getattr(parser, "decode", orjson.loads)(body)
        except orjson.JSONDecodeError:
            try:
                record = lenient_loads(body)  # a lone surrogate escape, as ``load`` reads it
            except ValueError:
                self._builder.add(
                    Skipped(line, "truncated last line" if last else "not valid JSON")
                )
                return
        self._guarded(lambda: parser.feed(line, record), line)

    def _guarded(self, items: Callable[[], Iterable[Item]], line: int) -> None:
        """Add a parser's items; a reader bug on odd JSON skips the record (as ``load``)."""
        assert self._builder is not None
        try:
            for item in list(items()):
                self._builder.add(item)
        except Exception as e:  # noqa: BLE001 - broken records are skipped and counted
            self._builder.add(Skipped(line, f"{READER_ERROR}: {type(e).__name__}: {e}"[:200]))

    def _drain(self) -> None:
        """The end of the input: a last line without newline, then ``parser.finish()``."""
        assert self.session is not None and self._builder is not None
        assert self._parser is not None
        self._builder.rollback()
        with open(self.path, "rb") as f:
            f.seek(self._offset)
            rest = f.read()
        if rest.strip():
            self._lineno += 1
            self._feed(rest, last=True)
        self._offset += len(rest)
        self._guarded(self._parser.finish, 0)
        self.session.events.clear()
        self._builder.build()
        self._provisional = []

    def _diff(self, prev: list[Request], provisional: list[int]) -> Update:
        s = self.session
        assert s is not None
        if self._builder is not None:
            self._builder.classify()  # as a full load of the same bytes would
        else:
            mark_auxiliary(s)
        if self._builder is not None and not self._finished:
            s.events[:] = self._builder.pending_events
        reqs = s.requests
        new = list(range(len(prev), len(reqs)))
        changed = [
            i
            for i in range(min(len(prev), len(reqs)))
            if reqs[i] is not prev[i] and reqs[i] != prev[i]
        ]
        return Update(
            s,
            new,
            changed,
            reloaded=len(reqs) < len(prev),
            provisional=list(provisional),
            more=self._more,
        )

    def _nothing(self) -> Update:
        return Update(self.session, provisional=list(self._provisional))


def _undecided(head: Head, size: int) -> bool:
    """Whether a file may still turn out to be a session log as it grows.

    A JSON document being written (or a first line not finished) parses as
    nothing yet; a small file with few lines may be a log whose first records
    say too little. Anything else that no reader takes is not a session log.
    """
    if head.document is None and not head.records and head.text.lstrip()[:1] in ("", "{", "["):
        return True
    return size < HEAD_BYTES and head.text.count("\n") < HEAD_RECORDS
