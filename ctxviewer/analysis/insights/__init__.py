"""Insights over a loaded session: cost, cache economics, cache breaks, every source
of the context over the session, redundant and stale content, sub-agent runs, and
request diffs.

May import ``ctxviewer.model``, ``ctxviewer.analysis`` (estimators, the
compaction package's trim rules), ``ctxviewer.resources`` and the standard
library. Never Qt. Every result is a frozen dataclass with ``to_json()``.

``insights(session, est)`` computes everything the CLI prints; the parts are
public for the GUI panels.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxviewer.analysis.insights.compaction_outcome import Outcome
    from ctxviewer.analysis.insights.cost import Budget, BudgetReport, SessionCost
    from ctxviewer.analysis.insights.sources import Sources
    from ctxviewer.analysis.insights.subagents import SubagentRun
    from ctxviewer.analysis.pricing import PriceTable
    from ctxviewer.analysis.tokens.estimators import Estimator
    from ctxviewer.model import Session

# Functions named as their module are bound now: importing a submodule sets the package's
# attribute of that name to the module, which would hide a function bound later.
from ctxviewer.analysis.insights.cache_breaks import CacheBreak, CacheSummary, cache_breaks
from ctxviewer.analysis.insights.conversations import Conversation, conversations
from ctxviewer.analysis.insights.redundancy import Finding, RedundancyReport, redundancy

# name -> the module defining it: imported on first use (PEP 562), so that a command
# needing a few parts (``findings``: redundancy, cache breaks, prices) loads only those
_LAZY = {
    **dict.fromkeys(("Outcome", "compaction_outcomes"), "compaction_outcome"),
    **dict.fromkeys(
        (
            "Budget",
            "BudgetCrossing",
            "BudgetReport",
            "RequestCost",
            "SessionCost",
            "evaluate_budget",
            "request_cost",
            "session_cost",
            "task_starts",
        ),
        "cost",
    ),
    **dict.fromkeys(("BlockChange", "RequestDiff", "diff_requests"), "diff"),
    **dict.fromkeys(
        ("Price", "PriceTable", "load_prices", "normalize_model", "user_prices_path"),
        "ctxviewer.analysis.pricing",
    ),
    **dict.fromkeys(("SubagentRun", "subagent_runs"), "subagents"),
    **dict.fromkeys(("Source", "Sources", "session_sources"), "sources"),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    path = module if "." in module else f"{__name__}.{module}"
    value = getattr(importlib.import_module(path), name)
    globals()[name] = value
    return value


__all__ = [
    "BlockChange",
    "Budget",
    "BudgetCrossing",
    "BudgetReport",
    "CacheBreak",
    "CacheSummary",
    "Conversation",
    "Finding",
    "Insights",
    "Price",
    "PriceTable",
    "RedundancyReport",
    "RequestCost",
    "RequestDiff",
    "SessionCost",
    "Source",
    "Sources",
    "SubagentRun",
    "cache_breaks",
    "conversations",
    "diff_requests",
    "evaluate_budget",
    "insights",
    "load_prices",
    "normalize_model",
    "redundancy",
    "request_cost",
    "session_cost",
    "session_sources",
    "subagent_runs",
    "task_starts",
    "user_prices_path",
]


@dataclass(frozen=True)
class Insights:
    """Everything Insights shows for a session: cost, cache, repeats, sub-agents."""

    cost: SessionCost
    cache: CacheSummary
    redundancy: RedundancyReport
    subagents: tuple[SubagentRun, ...]
    budgets: tuple[BudgetReport, ...] = ()
    compactions: tuple[Outcome, ...] = ()  # what each real compaction kept and dropped
    sources: Sources | None = None  # every source of the context, over the session

    def to_json(self, per_request: bool = True, top: int | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "cost": self.cost.to_json(per_request),
            "cache": self.cache.to_json(),
            "redundancy": self.redundancy.to_json(top),
            "subagents": [r.to_json() for r in self.subagents],
            "compactions": [c.to_json() for c in self.compactions],
            "sources": self.sources.to_json() if self.sources is not None else [],
        }
        if self.budgets:
            out["budgets"] = [b.to_json() for b in self.budgets]
        return out


def insights(
    session: Session,
    est: Estimator,
    prices: PriceTable | None = None,
    budgets: tuple[Budget, ...] = (),
) -> Insights:
    """All insights of a session (prices: the shipped table merged with the user's)."""
    from ctxviewer.analysis.insights.compaction_outcome import compaction_outcomes
    from ctxviewer.analysis.insights.cost import evaluate_budget, session_cost
    from ctxviewer.analysis.insights.sources import session_sources
    from ctxviewer.analysis.insights.subagents import subagent_runs
    from ctxviewer.analysis.pricing import load_prices

    prices = prices or load_prices()
    cost = session_cost(session, prices)
    saved = cost.saved_usd if cost.priced_usd or not cost.unpriced_requests else None
    cache = CacheSummary(cost.hit_rate, saved, cache_breaks(session, est))
    return Insights(
        cost,
        cache,
        redundancy(session, est),
        subagent_runs(session, cost),
        tuple(evaluate_budget(cost, b, session.requests) for b in budgets),
        tuple(compaction_outcomes(session, est)),
        session_sources(session, est, prices),
    )
