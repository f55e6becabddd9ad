"""Pixel geometry of the timeline plot, on the core's arrays (numpy, no Qt).

Which point is nearest the pointer, the range that shows every drawn request,
where the hover readout goes, lanes for labels, and the width and binning of
the output bars. The arrays themselves come from the core
(``analysis.timeline_view.series``, ``analysis.timeline_view.view``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ctxviewer.analysis.timeline_view.series import TimelineData


def nearest(
    x: np.ndarray, y: np.ndarray, x0: float, y0: float, px_w: float, px_h: float, radius: float
) -> tuple[int, float]:
    """Position of the point nearest ``(x0, y0)`` within ``radius`` pixels and its
    squared distance in pixels, or ``(-1, inf)``.

    ``px_w``/``px_h`` are the size of one pixel in data units.
    """
    if len(x) == 0 or px_w <= 0 or px_h <= 0:
        return -1, float("inf")
    d2 = ((x - x0) / px_w) ** 2 + ((y - y0) / px_h) ** 2
    d2 = np.where(np.isnan(d2), np.inf, d2)
    i = int(np.argmin(d2))
    return (i, float(d2[i])) if d2[i] <= radius * radius else (-1, float("inf"))


def full_range(
    data: TimelineData,
    window: int | None,
    extra_x: Sequence[float] = (),
    subagents: bool = True,
    auxiliary: bool = False,
) -> tuple[tuple[float, float], float]:
    """The x range showing every drawn request (padded) and the top of the y
    range: the highest drawn value or the window, whichever is larger."""
    shown = [data.main] + [
        s for s, on in ((data.subagent, subagents), (data.auxiliary, auxiliary)) if on
    ]
    x = np.concatenate([s.x for s in shown] + [np.asarray(extra_x, dtype=float)])
    ys = [s.y for s in shown] + [data.estimate]
    y_top = max([float(np.nanmax(v)) for v in ys if len(v)] + [1.0, float(window or 0)])
    if not len(x):
        return (-0.5, 1.5), y_top
    x0, x1 = float(np.nanmin(x)), float(np.nanmax(x))
    pad = max((x1 - x0) * 0.02, 1.0 if data.x_mode == "index" else 5.0)
    return (x0 - pad, x1 + pad), y_top


def label_spot(
    size: tuple[float, float],
    at: tuple[float, float],
    view: tuple[float, float, float, float],
    gap: float = 10.0,
) -> tuple[float, float]:
    """The top-left corner (screen pixels, y down) of a label of ``size`` (w, h) for
    the point ``at``: right of and below it, on the other side where that runs out of
    ``view`` (left, top, right, bottom), and moved inside it where neither side has
    room. A label larger than the view keeps its top-left corner in view."""
    w, h = size
    x, y = at
    left, top, right, bottom = view
    lx = x + gap if x + gap + w <= right else x - gap - w
    ly = y + gap if y + gap + h <= bottom else y - gap - h
    lx = max(left, min(lx, right - w))
    ly = max(top, min(ly, bottom - h))
    return lx, ly


def stack_slots(coords: Sequence[float], sizes: Sequence[float], max_slots: int = 8) -> list[int]:
    """Greedy lanes for labels along one axis (pixels): the lowest slot free of overlaps.

    Items closer than their size to an earlier item in a slot go to the next
    slot; -1 when all ``max_slots`` are taken (the caller hides that label).
    """
    taken: list[list[tuple[float, float]]] = [[] for _ in range(max_slots)]
    out = []
    for c, s in zip(coords, sizes, strict=True):
        slot = next(
            (
                k
                for k, lane in enumerate(taken)
                if all(abs(c - c2) >= max(s, s2) for c2, s2 in lane)
            ),
            -1,
        )
        if slot >= 0:
            taken[slot].append((c, s))
        out.append(slot)
    return out


def bar_width(x: np.ndarray, fill: float = 0.6) -> float:
    """Width of one bar per request: ``fill`` of the typical step between requests."""
    steps = np.diff(np.sort(np.asarray(x, dtype=float)))
    steps = np.sort(steps[steps > 0])  # the median, without np.median's lazy numpy.ma import
    if not len(steps):
        return fill
    mid = len(steps) // 2
    median = steps[mid] if len(steps) % 2 else (steps[mid - 1] + steps[mid]) / 2
    return fill * float(median)


def peak_bins(
    x: np.ndarray, y: np.ndarray, x0: float, step: float
) -> tuple[np.ndarray, np.ndarray]:
    """The largest ``y`` per bin of ``step`` starting at ``x0``, at the bin centres
    (what a bar chart denser than the screen can show: one bar per pixel)."""
    if len(x) == 0 or step <= 0:
        return np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    bins = np.floor((np.asarray(x, dtype=float) - x0) / step).astype(np.int64)
    order = np.argsort(bins, kind="stable")
    bins, values = bins[order], np.asarray(y, dtype=float)[order]
    starts = np.flatnonzero(np.r_[True, bins[1:] != bins[:-1]])
    return x0 + (bins[starts] + 0.5) * step, np.maximum.reduceat(values, starts)
