"""The ``calibrated`` estimator: a base estimator times a ratio fitted on the session.

The ratio is ``sum(api) / sum(estimate)`` over the fit set. It is evaluated
honestly, walking the requests in order: request ``k`` is predicted from a
fit on requests ``< k`` only, so its error is a held-out error.

Requests of one session are of different kinds (Claude Code's main model
next to a small model doing titles and quota probes, whose prompts look
nothing alike), so the fit is per group: ``(model, role)``. A request whose
group has no earlier request uses ratio 1.0 (the base estimate unchanged,
counted as ``unfitted``); the first request of a session has nothing to fit
on and is not predicted at all.

By default the fit is affine, ``api ~ offset + ratio * estimate`` (least
squares, from 3 requests of the group on; the pure ratio before), because a
ratio alone cannot fit requests of very different sizes: on the lemmy trace
the per-group ratio loses to plain ``shannon`` while the affine fit quarters
its error. The squares are of the relative error (each request weighted by
``1 / api**2``): MAPE scores relative errors, and on plain squares the large
requests set the line while a transcript's small steps came out 50-150% off.
``how="ratio"`` gives the pure ratio, ``api ~ ratio * estimate``.

The base is either fixed (``base=``) or chosen per request as the local
estimator with the lowest MAPE on the fit set (same group if it has earlier
requests, else all earlier requests).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from ctxviewer.analysis.tokens.estimators import DEFAULT

NAME = "calibrated"

Group = TypeVar("Group", bound=Hashable)
G_co = TypeVar("G_co", bound=Hashable, covariant=True)


@dataclass(frozen=True, slots=True)
class Point(Generic[G_co]):
    """One request as the calibration sees it."""

    group: G_co
    api: int
    estimates: Mapping[str, int | None]  # base estimator name -> estimate


@dataclass(frozen=True, slots=True)
class Fit:
    """``api ~ offset + ratio * estimate``; ``offset`` is 0 for the pure ratio fit."""

    ratio: float
    offset: float = 0.0

    def apply(self, estimate: int) -> int:
        return max(0, round(self.offset + self.ratio * estimate))


@dataclass(frozen=True, slots=True)
class Prediction:
    """A calibrated estimate of one request's prompt, and the fit it came from."""

    estimate: int | None  # None: nothing to fit on (first request)
    base: str | None
    fit: Fit | None  # None when the group had no earlier request (ratio 1.0)

    @property
    def fitted(self) -> bool:
        return self.fit is not None


SLOPE_SPREAD = 0.5  # the estimates' range, relative to their mean, needed to fit a slope


def ratio(points: Sequence[Point[Hashable]], base: str) -> float | None:
    """``sum(api) / sum(estimate)`` over points where ``base`` has an estimate."""
    pairs = [(p.api, p.estimates.get(base)) for p in points]
    api = sum(a for a, e in pairs if e)
    est = sum(e for _, e in pairs if e)
    return api / est if est else None


def affine(points: Sequence[Point[Hashable]], base: str) -> Fit | None:
    """Least-squares ``api ~ offset + ratio * estimate`` on the relative error (weights
    ``1 / api**2``); the pure ratio below 3 points.

    The offset absorbs what every request costs whatever its size (message
    framing): without it a ratio fitted on 200-token requests misjudges the
    8-token quota probes of the same model by 25%.
    """
    r = ratio(points, base)
    pairs = [(float(e), float(p.api)) for p in points if (e := p.estimates.get(base))]
    if r is None:
        return None
    xs = [x for x, _ in pairs]
    # a slope needs leverage: estimates that span a real range, else it extrapolates wildly
    if len(pairs) < 3 or max(xs) - min(xs) < SLOPE_SPREAD * (sum(xs) / len(xs)):
        return Fit(r)
    ws = [1.0 / (y * y) if y else 0.0 for _, y in pairs]
    total = sum(ws)
    if not total:
        return Fit(r)
    mx = sum(w * x for w, (x, _) in zip(ws, pairs, strict=True)) / total
    my = sum(w * y for w, (_, y) in zip(ws, pairs, strict=True)) / total
    den = sum(w * (x - mx) ** 2 for w, (x, _) in zip(ws, pairs, strict=True))
    if not den:
        return Fit(r)
    slope = sum(w * (x - mx) * (y - my) for w, (x, y) in zip(ws, pairs, strict=True)) / den
    if slope <= 0:
        return Fit(r)
    return Fit(slope, my - slope * mx)


def fit(points: Sequence[Point[Hashable]], base: str, how: str = "affine") -> Fit | None:
    if how == "ratio":
        r = ratio(points, base)
        return None if r is None else Fit(r)
    return affine(points, base)


def mape(points: Sequence[Point[Hashable]], base: str) -> float | None:
    errs = [abs(e - p.api) / p.api for p in points if (e := p.estimates.get(base)) is not None]
    return sum(errs) / len(errs) if errs else None


def best_base(points: Sequence[Point[Hashable]], candidates: Sequence[str]) -> str | None:
    """The candidate with the lowest uncalibrated MAPE on ``points`` (ties: list order)."""
    scored = [(m, i, c) for i, c in enumerate(candidates) if (m := mape(points, c)) is not None]
    return min(scored)[2] if scored else None


def cold_start(candidates: Sequence[str]) -> str | None:
    """The base for a conversation with no earlier request: the default estimator."""
    return DEFAULT if DEFAULT in candidates else (candidates[0] if candidates else None)


def held_out(
    points: Sequence[Point[Hashable]],
    candidates: Sequence[str],
    base: str | None = None,
    how: str = "affine",
) -> list[Prediction]:
    """Predict every point from a fit on the points before it (see the module doc)."""
    out: list[Prediction] = []
    for k, p in enumerate(points):
        before = points[:k]
        if not before:
            out.append(Prediction(None, None, None))
            continue
        group = [q for q in before if q.group == p.group]
        # no evidence from this conversation yet: other conversations (side calls,
        # sub-agents) do not transfer, so use the default estimator as it is
        b = base or (best_base(group, candidates) if group else cold_start(candidates))
        est = p.estimates.get(b) if b else None
        f = fit(group, b, how) if (group and b) else None
        if est is None:
            out.append(Prediction(None, b, f))
        else:
            out.append(Prediction(f.apply(est) if f else est, b, f))
    return out


def final_fit(
    points: Sequence[Point[Group]],
    candidates: Sequence[str],
    base: str | None = None,
    how: str = "affine",
) -> tuple[str | None, dict[Group, Fit]]:
    """Base and per-group fits on all points (what the next request would use)."""
    b = base or best_base(points, candidates)
    if b is None:
        return None, {}
    groups: dict[Group, list[Point[Group]]] = {}
    for p in points:
        groups.setdefault(p.group, []).append(p)
    fits = {g: f for g, pts in groups.items() if (f := fit(pts, b, how)) is not None}
    return b, fits
