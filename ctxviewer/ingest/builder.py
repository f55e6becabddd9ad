"""Assemble parser items into a ``Session``.

Rules that hold for every format live here, not in the readers:

- streamed duplicates of one API call (same message id and request id) count
  once, keeping the context of the first record and the largest usage;
- events attach to the next request (a compaction boundary shows on the first
  request after it); events after the last request stay on the session;
- indices are assigned in order of first appearance;
- side calls are marked auxiliary: requests that declare no tools while the
  session's main conversation does (Claude Code's title and topic calls).
"""

from __future__ import annotations

from dataclasses import replace

from ctxviewer.model import AUXILIARY, MAIN, Event, Request, Session, Skipped
from ctxviewer.ingest.base import Item


class SessionBuilder:
    def __init__(self, session: Session) -> None:
        self.session = session
        self._by_key: dict[tuple[str, str], int] = {}
        self._pending_events: list[Event] = []

    def add(self, item: Item) -> Request | None:
        """Add one item; returns the request that was added or updated."""
        if isinstance(item, Request):
            return self._add_request(item)
        if isinstance(item, Skipped):
            self.session.skipped.append(item)
        elif isinstance(item, Event):
            self._pending_events.append(item)
        return None

    def _add_request(self, req: Request) -> Request:
        requests = self.session.requests
        key = req.key
        if key is not None and key in self._by_key:
            pos = self._by_key[key]
            old = requests[pos]
            if _usage_size(req) > _usage_size(old):
                old = replace(old, usage=req.usage, response=req.response or old.response)
                requests[pos] = old
            return old
        events = tuple(self._pending_events) + req.events
        self._pending_events.clear()
        req = replace(req, index=len(requests), events=events)
        if key is not None:
            self._by_key[key] = len(requests)
        requests.append(req)
        return req

    def build(self) -> Session:
        """Finish: park trailing events, mark auxiliary calls."""
        self.session.events.extend(self._pending_events)
        self._pending_events.clear()
        mark_auxiliary(self.session)
        return self.session


def _usage_size(req: Request) -> tuple[int, int]:
    if req.usage is None:
        return (-1, -1)
    return (req.usage.prompt_tokens, req.usage.output_tokens)


def mark_auxiliary(session: Session) -> None:
    """Requests without tools beside a tool-using main conversation are side calls."""
    reqs = session.requests
    if not any(r.tools for r in reqs if r.complete):
        return
    for i, r in enumerate(reqs):
        if r.complete and r.role == MAIN and not r.tools and not r.sidechain:
            reqs[i] = replace(r, role=AUXILIARY)
