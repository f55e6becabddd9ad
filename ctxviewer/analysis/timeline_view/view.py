"""What the Timeline tab shows, computed without Qt: its view model.

``TimelineView`` holds, for one timeline under one policy, everything the plot
draws: the series (``timeline_series.TimelineData``), each main request's tier,
the threshold lines with their label texts, the log's compactions and
overflows, where the policy predicts compactions, the what-if replay (its
markers, its curve and the title naming it), and the budget crossings. The plot
(``gui.timeline.plot.TimelinePlot``) only turns it into pyqtgraph items.

A view is immutable; each change makes a new one that shares the parts it
keeps, so the plot redraws only the parts that are new objects:

- ``build``: from timeline points (a new series);
- ``from_analysis``: from an ``Analysis``; the same session analysed again with
  another policy or window (same estimator, same number of requests) keeps the
  previous view's series and only moves its lines;
- ``with_thresholds``, ``with_predicted``, ``with_budget``, ``with_x_mode``.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.attribution import Attribution
from ctxviewer.analysis.thresholds import Thresholds
from ctxviewer.analysis.timeline import Point
from ctxviewer.analysis.timeline_view.series import (
    X_MODES,
    EventMark,
    TimelineData,
    event_marks,
    tier_codes,
)
from ctxviewer.analysis.timeline_view.series import build as build_series
from ctxviewer.analysis.timeline_view.whatif import WhatIf, replay, request_events
from ctxviewer.fmt import fmt_tokens
from ctxviewer.model import Event, Session

THRESHOLD_KEYS = ("warn", "auto", "hard", "effective", "window", "target")
BudgetMark = tuple[int, str, str]  # (request index, "warn" | "limit", label)


@dataclass(frozen=True)
class ThresholdLine:
    """A horizontal line of the policy; ``value`` None: the policy has no such line.

    Lines of equal value share one label: the first of them carries it
    (``labelled``) and names them all ("auto = hard = effective  150,000 (75%)").
    ``compact`` is the label where the full one does not fit ("... 150.0k").
    """

    key: str
    value: int | None
    full: str = ""
    compact: str = ""
    labelled: bool = False
    below: bool = False  # the window's label hangs below its line, the others sit on it


@dataclass(frozen=True)
class BudgetLine:
    """A budget crossing drawn at ``x``; ``slot`` 0 or 1 staggers neighbours' labels."""

    index: int
    kind: str  # "warn" draws in the warn tier's colour, anything else in the hard tier's
    label: str
    x: float
    slot: int


@dataclass(frozen=True, eq=False)
class WhatIfView:
    """The what-if replay as drawn: markers where it fires, its curve where it differs
    from the real one (NaN elsewhere), and its title, long and short."""

    replay: WhatIf
    marker_x: list[float]
    marker_y: list[int]
    curve_x: np.ndarray
    curve_y: np.ndarray
    title: str
    short_title: str


@dataclass(frozen=True, eq=False)
class TimelineView:
    """Everything the timeline plot shows (see the module docstring)."""

    points: tuple[Point, ...]
    events: tuple[tuple[int, Event], ...] | None  # the log's, else marks come from points
    x_mode: str  # as asked; ``data.x_mode`` is the one in use
    data: TimelineData
    marks: tuple[EventMark, ...]
    thresholds: Thresholds
    tiers: np.ndarray  # per main point, an index into ``TIERS``
    lines: tuple[ThresholdLine, ...]  # one per ``THRESHOLD_KEYS``
    whatif: WhatIfView
    predicted: tuple[int, ...] = ()
    predicted_x: tuple[float, ...] = ()
    predicted_y: tuple[float, ...] = ()
    budget: tuple[BudgetMark, ...] = ()
    budget_lines: tuple[BudgetLine, ...] = ()
    attribution: Sequence[Attribution] | None = None  # for the hover readout
    source: tuple[Session, str, int] | None = None  # session, estimator, requests

    @property
    def has_api(self) -> bool:
        """Whether any main request has the API's count (the API curve is drawn)."""
        return bool((~np.isnan(self.data.api)).any())

    @property
    def has_output(self) -> bool:
        return bool((~np.isnan(self.data.output)).any())

    def marks_x(self) -> list[float]:
        return [m.x for m in self.marks]


def threshold_lines(t: Thresholds) -> tuple[ThresholdLine, ...]:
    """The lines of ``t``, in ``THRESHOLD_KEYS`` order (``target`` only when the
    policy has one), with their label texts."""
    values = {
        "warn": t.warn,
        "auto": t.auto,
        "hard": t.hard,
        "effective": t.effective,
        "window": t.window,
        "target": t.target,
    }
    groups: dict[int, list[str]] = {}
    for key in THRESHOLD_KEYS:
        v = values[key]
        if v is not None:
            groups.setdefault(v, []).append(key)
    out = []
    for key in THRESHOLD_KEYS:
        v = values[key]
        if v is None:
            out.append(ThresholdLine(key, None))
            continue
        same = groups[v]
        names = " = ".join(same)
        out.append(
            ThresholdLine(
                key,
                v,
                f"{names}  {v:,} ({v / t.window:.0%})",
                f"{names} {fmt_tokens(v)}",
                same[0] == key,
                "window" in same,
            )
        )
    return tuple(out)


def whatif_view(
    points: Sequence[Point],
    data: TimelineData,
    t: Thresholds,
    events: Sequence[tuple[int, Event]] | None,
) -> WhatIfView:
    """The core what-if replay of ``points`` under ``t``, placed on ``data``'s x axis."""
    w = replay(points, t, events=events)
    real = {int(i): y for i, y in zip(data.main.index, data.main.y, strict=True)}
    fired = set(w.fired_indices)
    xs = np.array([data.x_of[i] for i, _ in w.simulated], dtype=float)
    ys = np.array(
        [y if (y != real.get(i) or i in fired) else np.nan for i, y in w.simulated], dtype=float
    )
    return WhatIfView(
        w,
        [data.x_of[f.index] for f in w.fired],
        [f.tokens for f in w.fired],
        xs,
        ys,
        f"{w.label()} \u00b7 window {w.window:,}",
        f"policy {w.policy}: {w.count} would fire ({w.real_count} happened)"
        f" \u00b7 window {fmt_tokens(w.window)}",
    )


def predicted_spots(
    data: TimelineData, indices: Iterable[int]
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Where the markers of predicted compactions go: at each request (``indices``:
    the requests before which the policy compacts), at the size of the main request
    before it, what the agent would have compacted."""
    order = [int(i) for i in data.main.index]  # ascending request indices
    xs, ys = [], []
    for i in indices:
        if i not in data.x_of:
            continue
        k = bisect.bisect_left(order, i)  # after it: the last main request before ``i``
        own = k < len(order) and order[k] == i
        xs.append(data.x_of[i])
        ys.append(float(data.main.y[k - 1]) if k else float(data.main.y[k]) if own else 0.0)
    return tuple(xs), tuple(ys)


def budget_spots(data: TimelineData, marks: Iterable[BudgetMark]) -> tuple[BudgetLine, ...]:
    """The budget crossings on ``data``'s x axis (those of requests it has), in order;
    labels of neighbours in the sorted list alternate between two heights."""
    out = []
    for k, (index, kind, label) in enumerate(sorted(marks)):
        x = index if data.x_mode == "index" else data.x_of.get(index)
        if x is not None:
            out.append(BudgetLine(index, kind, label, float(x), k % 2))
    return tuple(out)


def build(
    points: Sequence[Point],
    thresholds: Thresholds,
    events: Iterable[tuple[int, Event]] | None = None,
    *,
    x_mode: str = "index",
    predicted: Iterable[int] = (),
    budget: Iterable[BudgetMark] = (),
    attribution: Sequence[Attribution] | None = None,
    source: tuple[Session, str, int] | None = None,
) -> TimelineView:
    """The view of ``points`` against ``thresholds``.

    ``events`` (``whatif.request_events(session)``) give compaction markers the
    log's own before/after counts and times; without them, markers come from each
    point's ``events`` and read before/after off the curve.
    """
    if x_mode not in X_MODES:
        raise ValueError(f"x_mode must be one of {X_MODES}, not {x_mode!r}")
    pts = tuple(points)
    evs = tuple(events) if events is not None else None
    data = build_series(pts, x_mode)
    keep = tuple(i for i in predicted if i < len(pts))
    px, py = predicted_spots(data, keep)
    marks = tuple(budget)
    return TimelineView(
        pts,
        evs,
        x_mode,
        data,
        tuple(event_marks(pts, data, evs)),
        thresholds,
        tier_codes(data.main.y, thresholds),
        threshold_lines(thresholds),
        whatif_view(pts, data, thresholds, evs),
        keep,
        px,
        py,
        marks,
        budget_spots(data, marks),
        attribution,
        source,
    )


def with_thresholds(view: TimelineView, thresholds: Thresholds) -> TimelineView:
    """``view`` under another policy or window: lines, tiers and what-if; same series."""
    return replace(
        view,
        thresholds=thresholds,
        tiers=tier_codes(view.data.main.y, thresholds),
        lines=threshold_lines(thresholds),
        whatif=whatif_view(view.points, view.data, thresholds, view.events),
    )


def with_predicted(view: TimelineView, indices: Iterable[int]) -> TimelineView:
    keep = tuple(indices)
    px, py = predicted_spots(view.data, keep)
    return replace(view, predicted=keep, predicted_x=px, predicted_y=py)


def with_budget(view: TimelineView, marks: Iterable[BudgetMark]) -> TimelineView:
    keep = tuple(marks)
    return replace(view, budget=keep, budget_lines=budget_spots(view.data, keep))


def with_x_mode(view: TimelineView, x_mode: str) -> TimelineView:
    """The same timeline on the other x axis (its series, marks and spots move)."""
    return replace(
        build(
            view.points,
            view.thresholds,
            view.events,
            x_mode=x_mode,
            predicted=view.predicted,
            budget=view.budget,
            attribution=view.attribution,
        ),
        source=view.source,
    )


def from_analysis(
    a: Analysis,
    *,
    x_mode: str = "index",
    budget: Iterable[BudgetMark] = (),
    previous: TimelineView | None = None,
) -> TimelineView:
    """The view of an analysis. When ``previous`` showed the same session with the same
    estimator and number of requests (another policy or window, say), it keeps
    ``previous``'s series: only the lines, tiers and what-if are new."""
    s = a.session
    source = (s, a.estimator_name, len(s.requests))
    old = previous.source if previous is not None else None
    if (
        previous is not None
        and old is not None
        and old[0] is s
        and old[1:] == source[1:]
        and previous.x_mode == x_mode
    ):
        view = with_thresholds(previous, a.thresholds)
        marks = tuple(budget)
        if marks != previous.budget:
            view = with_budget(view, marks)
    else:
        view = build(
            a.timeline, a.thresholds, request_events(s), x_mode=x_mode, budget=budget, source=source
        )
    return replace(with_predicted(view, a.compactions.predicted), attribution=a.attribution)
