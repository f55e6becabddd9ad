"""The timeline's series as numpy arrays: what goes on which axis, which requests
form which series, where the log's compactions and overflows sit, and the readout
of one request.

Qt-free (numpy only), computed from ``Analysis.timeline`` (a list of ``Point``);
``timeline_view`` builds the whole view model of the Timeline tab on top of it.

Series:
- *main*: role ``main`` and not a sidechain; the prompt curves, tier dots,
  output tokens and cache areas are drawn from it;
- *subagent*: role ``subagent`` or sidechain requests;
- *auxiliary*: the agent's side calls (titles, topic checks, quota probes).

x is the request index (``x_mode="index"``) or wall-clock time in epoch
seconds (``"time"``); missing timestamps take their neighbour's time, and a
session without any timestamp stays on the index axis (``has_time`` False).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from ctxviewer.analysis.overflows import numbers, short_next
from ctxviewer.analysis.thresholds import Thresholds, tier_floors
from ctxviewer.analysis.timeline import Point
from ctxviewer.analysis.timeline_view.whatif import real_compactions
from ctxviewer.fmt import short_text
from ctxviewer.model import AUXILIARY, CONTEXT_OVERFLOW, MAIN, PROXY_UNDO, Event

X_MODES = ("index", "time")


@dataclass(frozen=True)
class Series:
    """Points of the timeline: request indices with their x and y."""

    index: np.ndarray  # request indices (int)
    x: np.ndarray
    y: np.ndarray  # prompt tokens: API count where known, else the estimate

    def __len__(self) -> int:
        return len(self.index)


@dataclass(frozen=True)
class EventMark:
    """A vertical marker: a real compaction or a context overflow before request ``index``."""

    index: int
    kind: str  # "compaction" | "overflow" | "failed" | "simulated" | "undone"
    x: float
    pre: int | None = None
    post: int | None = None
    trigger: str | None = None
    note: str = ""  # an overflow: its numbers and what the agent does next

    def label(self) -> str:
        if self.kind == "overflow":
            return "context overflow" + (f"\n{self.note}" if self.note else "")
        if self.kind == "simulated":
            return f"simulated #{self.index}\n(local estimate)"
        if self.kind == "undone":
            return "live compaction undone\n(the whole history again)"
        if self.kind == "failed":
            return f"failed call #{self.index}\n{short_text(self.trigger or '', 32)}"
        head = f"compaction ({self.trigger})" if self.trigger else "compaction"
        pre = f"{self.pre:,}" if self.pre is not None else "?"
        post = f"{self.post:,}" if self.post is not None else "?"
        return f"{head}\n{pre} \u2192 {post}"


@dataclass(frozen=True)
class TimelineData:
    """Everything the timeline plots, as arrays."""

    x_mode: str  # the mode actually used ("index" when there is no timestamp)
    has_time: bool
    main: Series
    api: np.ndarray  # per main point, NaN where the API count is unknown
    estimate: np.ndarray  # per main point
    output: np.ndarray  # per main point, NaN where unknown
    cache_x: np.ndarray  # main points with API usage
    cache: dict[str, np.ndarray]  # cache_read / cache_write / uncached at cache_x
    subagent: Series
    auxiliary: Series
    points: dict[int, Point]  # request index -> point
    x_of: dict[int, float]  # request index -> x


def parse_time(ts: str | None) -> float:
    """ISO 8601 -> epoch seconds, NaN when absent or unreadable."""
    if not ts:
        return float("nan")
    try:
        return datetime.fromisoformat(ts).timestamp()
    except ValueError:
        return float("nan")


def _filled(times: np.ndarray) -> np.ndarray:
    """Missing times take the previous known time (the next one at the start)."""
    ok = ~np.isnan(times)
    if not ok.any():
        return times
    idx = np.where(ok, np.arange(len(times)), 0)
    np.maximum.accumulate(idx, out=idx)
    out = times[idx]
    first = int(np.argmax(ok))
    out[:first] = times[first]
    return out


def _series(points: Sequence[Point], xs: np.ndarray, rows: list[int]) -> Series:
    return Series(
        np.array([points[i].index for i in rows], dtype=np.int64),
        xs[rows] if rows else np.empty(0),
        np.array(
            [np.nan if points[i].unanswered else points[i].prompt_tokens for i in rows], dtype=float
        ),
    )


def _nan(values: Iterable[int | None]) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def build(points: Sequence[Point], x_mode: str = "index") -> TimelineData:
    if x_mode not in X_MODES:
        raise ValueError(f"x_mode must be one of {X_MODES}, not {x_mode!r}")
    times = _filled(np.array([parse_time(p.timestamp) for p in points], dtype=float))
    has_time = bool(len(times)) and not np.isnan(times).all()
    mode = x_mode if has_time else "index"
    xs = times if mode == "time" else np.array([p.index for p in points], dtype=float)
    main_rows, sub_rows, aux_rows = [], [], []
    for i, p in enumerate(points):
        if p.role == AUXILIARY:
            aux_rows.append(i)
        elif p.role == MAIN and not p.sidechain:
            main_rows.append(i)
        else:
            sub_rows.append(i)
    main = [points[i] for i in main_rows]
    with_usage = [j for j, p in enumerate(main) if p.api_prompt_tokens is not None]
    main_series = _series(points, xs, main_rows)
    return TimelineData(
        x_mode=mode,
        has_time=has_time,
        main=main_series,
        api=_nan(None if p.simulated else p.api_prompt_tokens for p in main),
        estimate=np.array(
            [np.nan if p.unanswered else p.estimated_prompt_tokens for p in main], dtype=float
        ),
        output=_nan(p.output_tokens for p in main),
        cache_x=main_series.x[with_usage] if with_usage else np.empty(0),
        cache={
            "cache_read": np.array([main[j].cache_read or 0 for j in with_usage], dtype=float),
            "cache_write": np.array([main[j].cache_write or 0 for j in with_usage], dtype=float),
            "uncached": np.array([main[j].uncached or 0 for j in with_usage], dtype=float),
        },
        subagent=_series(points, xs, sub_rows),
        auxiliary=_series(points, xs, aux_rows),
        points={p.index: p for p in points},
        x_of={p.index: float(x) for p, x in zip(points, xs, strict=True)},
    )


def tier_codes(tokens: np.ndarray, t: Thresholds) -> np.ndarray:
    """``thresholds.tier_code`` of every value at once: how many of the core's tier
    floors each reaches (NaN, a request without a count, reaches none: ``safe``)."""
    codes = np.zeros(len(tokens), dtype=np.int8)
    for floor in tier_floors(t):
        codes += tokens >= floor
    return codes


def event_marks(
    points: Sequence[Point], data: TimelineData, events: Iterable[tuple[int, Event]] | None = None
) -> list[EventMark]:
    """Real compactions (before/after tokens from the log where it has them) and overflows."""
    events = list(events or ())
    out: list[EventMark] = []
    for c in real_compactions(points, events):
        x = _event_x(c.index, data, _event_time(events, c.index))
        out.append(EventMark(c.index, "compaction", x, c.pre_tokens, c.post_tokens, c.trigger))
    overflow = {i for i, e in events if e.kind == CONTEXT_OVERFLOW}
    overflow |= {p.index for p in points if CONTEXT_OVERFLOW in p.events}
    for i in sorted(overflow):
        said = next(
            (e.overflow for j, e in events if j == i and e.kind == CONTEXT_OVERFLOW and e.overflow),
            None,
        )
        note = "\n".join(x for x in (numbers(said), short_next(said)) if x) if said else ""
        out.append(EventMark(i, "overflow", _event_x(i, data, _event_time(events, i)), note=note))
    for i in sorted({i for i, e in events if e.kind == PROXY_UNDO}):
        out.append(EventMark(i, "undone", _event_x(i, data, _event_time(events, i))))
    for p in points:
        if p.simulated:
            out.append(EventMark(p.index, "simulated", data.x_of.get(p.index, float(p.index))))
        if p.unanswered:  # at the call itself, not half a step before it
            out.append(
                EventMark(
                    p.index, "failed", data.x_of.get(p.index, float(p.index)), trigger=p.failure
                )
            )
    return out


def _event_time(events: list[tuple[int, Event]], index: int) -> str | None:
    return next((e.timestamp for i, e in events if i == index and e.timestamp), None)


def _event_x(index: int, data: TimelineData, timestamp: str | None) -> float:
    """Half a step before request ``index`` (or the event's time on the time axis)."""
    if data.x_mode == "index":
        return index - 0.5
    t = parse_time(timestamp)
    if not np.isnan(t):
        return t
    if index in data.x_of:
        return data.x_of[index]
    return max(data.x_of.values(), default=0.0)


def describe(p: Point, tier: str | None = None, attribution: dict[str, int] | None = None) -> str:
    """The hover readout of one request (``attribution``: its prompt as exact growth,
    estimate and unattributed tokens, ``analysis.attribution``)."""
    when = p.timestamp or "no timestamp"
    t = parse_time(p.timestamp)
    if not np.isnan(t):
        when = datetime.fromtimestamp(t).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    role = p.role + (" (sidechain)" if p.sidechain and p.role != "subagent" else "")
    lines = [f"#{p.index}  {when}", f"{p.model or 'unknown model'} \u00b7 {role}"]
    if p.api_prompt_tokens is not None:
        err = (p.estimated_prompt_tokens - p.api_prompt_tokens) / max(1, p.api_prompt_tokens)
        lines.append(
            f"API {p.api_prompt_tokens:,} \u00b7 estimate "
            f"{p.estimated_prompt_tokens:,} ({err:+.1%})"
        )
    else:
        lines.append(f"API unknown \u00b7 estimate {p.estimated_prompt_tokens:,}")
    if attribution and (attribution["attributed_exact"] or attribution["unattributed"]):
        lines.append(
            f"exact {attribution['attributed_exact']:,} \u00b7 estimated "
            f"{attribution['estimated']:,} \u00b7 unattributed "
            f"{attribution['unattributed']:,}"
        )
    if p.output_tokens is not None:
        lines.append(f"output {p.output_tokens:,}")
    lines.append(f"tier {tier or p.tier}")
    if p.events:
        lines.append("events: " + ", ".join(p.events))
    return "\n".join(lines)
