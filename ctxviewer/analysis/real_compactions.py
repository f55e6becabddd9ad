"""The compactions a session really went through, from its log.

One per request (a boundary and its summary count once), with the sizes before
and after: the log's own counts where it has them, else the main requests on
either side. The agent profile's predictions (``predicted_compactions``) and the
what-if replay (``whatif``) both compare against these.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ctxviewer.analysis.timeline import Point
from ctxviewer.model import COMPACT_BOUNDARY, COMPACT_SUMMARY, MAIN, Event, Session

COMPACTION_KINDS = (COMPACT_BOUNDARY, COMPACT_SUMMARY)


@dataclass(frozen=True, slots=True)
class RealCompaction:
    """A compaction that happened (from the log), just before request ``index``."""

    index: int
    pre_tokens: int | None  # the log's count, else the previous main request's size
    post_tokens: int | None  # the log's count, else this request's size
    trigger: str | None = None  # "auto" | "manual" | None


def request_events(session: Session) -> list[tuple[int, Event]]:
    """Every event of ``session`` as ``(request index, event)``.

    An event on request ``i`` happened just before it; events after the last
    request get the index ``len(session.requests)``.
    """
    out = [(r.index, e) for r in session.requests for e in r.events]
    out += [(len(session.requests), e) for e in session.events]
    return out


def main_points(points: Sequence[Point]) -> list[Point]:
    return [p for p in points if p.role == MAIN and not p.sidechain]


def real_compactions(
    points: Sequence[Point], events: Iterable[tuple[int, Event]] | None = None
) -> list[RealCompaction]:
    """Compactions that happened, one per request (boundary and summary count once).

    With ``events`` (from ``request_events``) the log's before/after counts
    are used where it has them; otherwise the sizes of the main requests on
    either side of the compaction.
    """
    logged: dict[int, Event] = {}
    for index, event in events or ():
        if event.kind in COMPACTION_KINDS:
            logged.setdefault(index, event)
    main = main_points(points)
    marked = {p.index for p in points if any(k in COMPACTION_KINDS for k in p.events)}
    out: list[RealCompaction] = []
    prev: Point | None = None
    for p in main:
        if p.index in marked or p.index in logged:
            e = logged.get(p.index)
            pre = e.pre_tokens if e and e.pre_tokens else (prev.prompt_tokens if prev else None)
            post = e.post_tokens if e and e.post_tokens else p.prompt_tokens
            out.append(RealCompaction(p.index, pre, post, e.trigger if e else None))
        prev = p
    return out
