"""The session side of following a log (``ctxviewer.ingest.follow.follower``).

``Follower`` reads the file; this module grows the followed ``Session`` in
place and says what changed: ``Update`` (one poll's result), ``LiveBuilder``
(a ``SessionBuilder`` whose provisional requests can be taken back),
``peek`` (what a parser holds back, without finishing it) and
``merge_by_position`` (a re-read document taken into the session).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field

from ctxviewer.ingest.base import Item, Parser
from ctxviewer.ingest.builder import SessionBuilder
from ctxviewer.model import Event, Request, Session, Skipped


@dataclass(frozen=True)
class Update:
    """What one ``poll()`` changed.

    ``session`` is the session being followed (None until the format is
    known). It is the same object from poll to poll, except when ``reloaded``:
    then the caller drops what it derived and rebuilds from ``session`` (which
    may be None when the new file has no content yet). ``reloaded`` is also
    set, with the same session object, in the rare case that requests were
    taken away (a provisional request withdrawn, a document that shrank).
    """

    session: Session | None = None
    new: list[int] = field(default_factory=list)  # indices of requests added
    changed: list[int] = field(default_factory=list)  # indices replaced in place
    reloaded: bool = False
    provisional: list[int] = field(default_factory=list)  # shown before the reader let go
    more: bool = False  # ``max_bytes`` stopped the read before the end of the file

    def __bool__(self) -> bool:
        return bool(self.new or self.changed or self.reloaded)


class LiveBuilder(SessionBuilder):
    """A ``SessionBuilder`` that can add items tentatively and take them back."""

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._undo: tuple[int, list[Event], list[tuple[int, Request]]] | None = None

    @property
    def pending_events(self) -> list[Event]:
        """Events not attached to a request yet (they wait for the next one)."""
        return list(self._pending_events)

    def add_tentative(self, items: Iterable[Item]) -> list[int]:
        """Add requests and events until the next ``rollback``; returns the indices touched."""
        reqs = self.session.requests
        undo: tuple[int, list[Event], list[tuple[int, Request]]] = (
            len(reqs),
            list(self._pending_events),
            [],
        )
        touched: set[int] = set()
        for item in items:
            if isinstance(item, Skipped):
                continue  # counted when the real record is read
            if isinstance(item, Request) and item.key is not None and item.key in self._by_key:
                pos = self._by_key[item.key]
                if pos < undo[0]:  # one added in this batch goes with the batch
                    undo[2].append((pos, reqs[pos]))
            added = self.add(item)
            if added is not None:
                touched.add(added.index)
        self._undo = undo
        return sorted(touched)

    def rollback(self) -> None:
        if self._undo is None:
            return
        n, events, replaced = self._undo
        self._undo = None
        reqs = self.session.requests
        for req in reqs[n:]:
            if req.key is not None and self._by_key.get(req.key) == req.index:
                del self._by_key[req.key]
        del reqs[n:]
        del self._base[n:]
        for pos, old in reversed(replaced):
            reqs[pos] = old
        self._pending_events[:] = events


def peek(parser: Parser) -> list[Item]:
    """What ``parser.finish()`` would yield now, without finishing ``parser``.

    Uses the parser's own ``peek()`` when it has one; otherwise runs
    ``finish()`` on a copy whose containers (lists, dicts, sets) are copied
    one level deep, so the original's state is untouched. Parsers without an
    instance ``__dict__`` are not copied: their held requests show one poll
    late, when the next record releases them.
    """
    own = getattr(parser, "peek", None)
    if callable(own):
        return list(own())
    try:
        state = vars(parser)
    except TypeError:
        return []
    clone = copy.copy(parser)
    for name, value in state.items():
        if isinstance(value, (list, dict, set)):
            setattr(clone, name, copy.copy(value))
    try:
        return list(clone.finish())
    except Exception:  # noqa: BLE001 - a reader bug: the held request shows when released
        return []


def merge_by_position(s: Session, fresh: Session) -> Update:
    """Take a re-read document's requests into the followed session ``s``, by position."""
    old, new, changed = s.requests, [], []
    for i, req in enumerate(fresh.requests):
        if i >= len(old):
            old.append(req)
            new.append(i)
        elif _signature(old[i]) != _signature(req):
            old[i] = req
            changed.append(i)
    shrunk = len(fresh.requests) < len(old)
    del old[len(fresh.requests) :]
    s.skipped[:] = fresh.skipped
    s.events[:] = fresh.events
    s.title, s.session_id = fresh.title, fresh.session_id
    return Update(s, new, changed, reloaded=shrunk)


def _signature(req: Request) -> tuple[object, ...]:
    """What makes a re-read request differ from the one shown (cheap to compare)."""
    reply = len(req.response.blocks) if req.response is not None else -1
    return (
        req.message_id,
        req.request_id,
        req.model,
        req.timestamp,
        req.usage,
        req.role,
        req.events,
        len(req.messages),
        reply,
        req.sidechain,
    )
