"""The per-category table of one request for an existing ``Comparison``.

``compare(session, names, request=i)`` recomputes every row to give one
request's table; a viewer that moves between requests needs the table alone,
with the calibration fits the comparison already made.
"""

from __future__ import annotations

from collections.abc import Mapping

from ctxviewer.analysis import calibrate
from ctxviewer.analysis.compare import (
    CategoryTable,
    Comparison,
    LocalCounter,
    PromptCounter,
    _table,
)
from ctxviewer.analysis.estimators import for_session, names
from ctxviewer.model import Session


def category_table(session: Session, index: int, c: Comparison,
                   counters: Mapping[str, PromptCounter] | None = None) -> CategoryTable:
    """Request ``index``'s categories for every estimator of ``c`` (estimators as columns)."""
    extra = dict(counters or {})
    wanted = [n for n in (*c.estimators, *names()) if n != calibrate.NAME]
    by_name: dict[str, PromptCounter] = {
        n: extra[n] if n in extra else LocalCounter(for_session(session, n))
        for n in dict.fromkeys(wanted) if n in extra or n in names()}
    return _table(session, index, c.estimators, by_name, c.calibration)
