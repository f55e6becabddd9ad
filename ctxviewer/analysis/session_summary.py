"""One session in one row: what a list of sessions (the library, a team's export) says
about each, computed from the same ``Analysis`` that ``report`` prints, so the numbers
agree with ``report``'s by construction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ctxviewer.model import MAIN

if TYPE_CHECKING:
    from ctxviewer.analysis.analysis import Analysis
    from ctxviewer.analysis.insights.cost import SessionCost
    from ctxviewer.analysis.pricing import PriceTable

TOP_CATEGORIES = 3  # categories kept per session: the largest at the peak request
TOP_SOURCES = 3  # sources kept per session: the costliest over the session
SKIP_CATEGORIES = frozenset({"free_space", "autocompact_buffer"})  # room, not content


@dataclass(frozen=True)
class SubagentSummary:
    """One sub-agent run of the session, as the library lists it."""

    agent_id: str | None  # e.g. "a93ccab"
    agent_type: str  # "Explore", "general-purpose", "compaction", … ("" when unknown)
    requests: int
    peak_prompt_tokens: int | None
    cost_usd: float | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "agent_id": self.agent_id,
            "agent_type": self.agent_type,
            "requests": self.requests,
            "peak_prompt_tokens": self.peak_prompt_tokens,
            "cost_usd": self.cost_usd,
        }


@dataclass(frozen=True)
class SourceSummary:
    """One of the session's costliest sources (``insights.sources``)."""

    kind: str
    name: str
    token_requests: int
    cost_usd: float | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "token_requests": self.token_requests,
            "cost_usd": self.cost_usd,
        }


@dataclass(frozen=True)
class SessionSummary:
    """A session's headline numbers (``docs/json.md``, the library's sessions)."""

    path: str | None
    format: str
    agent: str  # the agent profile's id: "claude-code", "codex", "gemini-cli", "qwen-code", …
    agent_label: str  # for people, with the version when known: "Claude Code 2.1.197"
    project: str | None  # the working directory the log records
    model: str | None
    start: str | None  # first request's timestamp (ISO 8601, as the log has it)
    end: str | None  # last request's timestamp
    requests: int  # as ``report``'s ``source.requests``: every request, sub-agents included
    main_requests: int
    peak_prompt_tokens: int | None  # as ``report``'s ``peak_prompt_tokens``
    peak_request: int | None
    window: int
    peak_share: float | None  # peak_prompt_tokens / window, 0..1 (may pass 1)
    compactions_observed: int
    compactions_predicted: int
    cost_usd: float | None  # None: a request with usage has no price (its cost is unknown)
    cache_hit_rate: float | None  # cache reads / prompt tokens over all requests
    top_categories: tuple[tuple[str, int], ...]  # (category name, tokens) at the peak request
    subagent_runs: tuple[SubagentSummary, ...]
    skipped_records: int
    top_sources: tuple[SourceSummary, ...] = ()  # the costliest sources over the session

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "format": self.format,
            "agent": self.agent,
            "agent_label": self.agent_label,
            "project": self.project,
            "model": self.model,
            "start": self.start,
            "end": self.end,
            "requests": self.requests,
            "main_requests": self.main_requests,
            "peak_prompt_tokens": self.peak_prompt_tokens,
            "peak_request": self.peak_request,
            "window": self.window,
            "peak_share": self.peak_share,
            "compactions_observed": self.compactions_observed,
            "compactions_predicted": self.compactions_predicted,
            "cost_usd": self.cost_usd,
            "cache_hit_rate": self.cache_hit_rate,
            "top_categories": [{"name": n, "tokens": t} for n, t in self.top_categories],
            "subagent_runs": [r.as_dict() for r in self.subagent_runs],
            "skipped_records": self.skipped_records,
            "top_sources": [x.as_dict() for x in self.top_sources],
        }


def summarize(
    a: Analysis,
    cost: SessionCost | None = None,
    prices: PriceTable | None = None,
    details: bool = True,
) -> SessionSummary:
    """``a``'s session in one row. ``cost``: the session's prices, when already computed
    (with the ``prices`` they came from). ``details`` False: without what needs the
    messages' text (the largest categories at the peak, the sub-agent runs, the
    costliest sources), for a session read without it (the library's rows), and with
    the cost's totals only."""
    from ctxviewer.analysis.insights.cost import cost_totals, session_cost
    from ctxviewer.analysis.insights.sources import session_sources
    from ctxviewer.analysis.insights.subagents import subagent_runs
    from ctxviewer.analysis.pricing import load_prices

    s = a.session
    reqs = s.requests
    peak_i: int | None = None
    peak: int | None = None
    for p in a.timeline:
        if p.api_prompt_tokens is not None and (peak is None or p.api_prompt_tokens > peak):
            peak, peak_i = p.api_prompt_tokens, p.index
    stamps = [r.timestamp for r in reqs if r.timestamp]
    prices = prices or load_prices()
    if details or cost is not None:
        cost = cost or session_cost(s, prices)
        priced = cost.total_usd is not None and any(c.total_usd is not None for c in cost.requests)
        total_usd, hit_rate = cost.total_usd if priced else None, cost.hit_rate
    else:
        total_usd, hit_rate = cost_totals(reqs, prices)
    sources = session_sources(s, a.estimator, prices).top(TOP_SOURCES) if details else []
    top: tuple[tuple[str, int], ...] = ()
    if reqs and details:
        cats = sorted(
            (
                c
                for c in a.category_tokens(peak_i if peak_i is not None else a.resolve_index(None))
                if c[0] not in SKIP_CATEGORIES and c[1] > 0
            ),
            key=lambda c: -c[1],
        )
        top = tuple(cats[:TOP_CATEGORIES])
    runs = (
        tuple(
            SubagentSummary(r.agent, r.agent_type, len(r.requests), r.peak_context, r.cost_usd)
            for r in subagent_runs(s, cost)
        )
        if details and cost
        else ()
    )
    ident = a.identity
    window = a.window
    return SessionSummary(
        path=s.path,
        format=s.format,
        agent=ident.profile.id,
        agent_label=ident.label,
        project=s.cwd,
        model=s.model,
        start=min(stamps) if stamps else None,
        end=max(stamps) if stamps else None,
        requests=len(reqs),
        main_requests=sum(1 for r in reqs if r.role == MAIN and not r.sidechain),
        peak_prompt_tokens=peak,
        peak_request=peak_i,
        window=window,
        peak_share=round(peak / window, 4) if peak is not None and window else None,
        compactions_observed=len(a.compactions.observed),
        compactions_predicted=len(a.compactions.predicted),
        cost_usd=total_usd,
        cache_hit_rate=hit_rate,
        top_categories=top,
        subagent_runs=runs,
        skipped_records=len(s.skipped),
        top_sources=tuple(
            SourceSummary(x.kind, x.name, x.token_requests, x.cost_usd) for x in sources
        ),
    )
