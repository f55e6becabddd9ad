"""The per-category table of one request: where an estimator's error hides.

Agents derive Messages by subtracting the estimated overhead from the API total,
so each category is counted by every estimator (estimators as columns).
``compare(session, names, request=i)`` builds it with the comparison;
``category_table`` gives another request's table for an existing ``Comparison``,
with the calibration fits the comparison already made.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ctxviewer.analysis.breakdown import message_items, overhead_parts
from ctxviewer.analysis.timeline import estimate_request
from ctxviewer.analysis.tokens import calibrate
from ctxviewer.analysis.tokens.counter import CATEGORIES, PromptCounter
from ctxviewer.analysis.tokens.estimators import Estimator, for_session, names
from ctxviewer.model import Request, Session

if TYPE_CHECKING:
    from ctxviewer.analysis.compare.scoring import Comparison


@dataclass(frozen=True)
class LocalCounter:
    """A local estimator seen as a ``PromptCounter``."""

    estimator: Estimator

    @property
    def name(self) -> str:
        return self.estimator.name

    def prompt(self, req: Request) -> int | None:
        return estimate_request(req, self.estimator)

    def categories(self, req: Request) -> dict[str, int | None]:
        parts = overhead_parts(req, self.estimator)
        out: dict[str, int | None] = {name: tokens for name, (tokens, _) in parts.items()}
        out["messages"] = message_items(req.messages, self.estimator)[1]
        return out


@dataclass(frozen=True)
class CategoryTable:
    """One request's categories, estimators as columns."""

    request: int
    api_prompt_tokens: int | None
    estimates: dict[str, dict[str, int | None]]  # estimator -> category -> tokens

    def by_subtraction(self, name: str) -> int | None:
        """Messages as an agent shows it: API total minus the estimated overhead."""
        cats = self.estimates[name]
        if self.api_prompt_tokens is None or any(cats.get(c) is None for c in CATEGORIES[:-1]):
            return None
        return self.api_prompt_tokens - sum(cats[c] or 0 for c in CATEGORIES[:-1])


def category_table(
    session: Session, index: int, c: Comparison, counters: Mapping[str, PromptCounter] | None = None
) -> CategoryTable:
    """Request ``index``'s categories for every estimator of ``c`` (estimators as columns)."""
    extra = dict(counters or {})
    wanted = [n for n in (*c.estimators, *names()) if n != calibrate.NAME]
    by_name: dict[str, PromptCounter] = {
        n: extra[n] if n in extra else LocalCounter(for_session(session, n))
        for n in dict.fromkeys(wanted)
        if n in extra or n in names()
    }
    return request_table(session, index, c.estimators, by_name, c.calibration)


def request_table(
    session: Session,
    index: int,
    shown: Sequence[str],
    by_name: Mapping[str, PromptCounter],
    calibration: Mapping[str, Any],
) -> CategoryTable:
    req = session.requests[index]
    estimates: dict[str, dict[str, int | None]] = {}
    for n in shown:
        if n == calibrate.NAME:
            continue
        estimates[n] = by_name[n].categories(req)
    if calibrate.NAME in shown:
        estimates[calibrate.NAME] = _calibrated_categories(session, req, by_name, calibration)
    return CategoryTable(index, req.api_prompt_tokens, estimates)


def _calibrated_categories(
    session: Session,
    req: Request,
    by_name: Mapping[str, PromptCounter],
    calibration: Mapping[str, Any],
) -> dict[str, int | None]:
    """The base's categories times the ratio fitted on the requests before ``req``."""
    row = next((x for x in calibration.get("rows", []) if x["index"] == req.index), None)
    base = row["base"] if row else calibration.get("base")
    if base is None or base not in by_name:
        return dict.fromkeys(CATEGORIES)
    fit = (row["fit"] if row else None) or calibrate.Fit(1.0)
    # the offset is per request: it belongs to no category, so categories get the ratio only
    cats = by_name[base].categories(req)
    return {c: None if v is None else round(v * fit.ratio) for c, v in cats.items()}
