"""One session's rows of the team dataset (docs/parquet.md), column by column.

Every number comes from the ``Analysis`` that ``report`` prints: the requests'
columns are ``report --json``'s ``requests[]`` (the same functions make both), the
categories and items are ``Analysis.breakdown(i)`` of every request, the costs are
``insights.cost``'s and the session's row is ``session_summary.summarize``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.breakdown import OVERHEAD, Item
from ctxviewer.analysis.dataset.schema import RENAMED, TABLES
from ctxviewer.analysis.insights.cost import RequestCost, no_cache_usd, session_cost
from ctxviewer.analysis.pricing import PriceTable
from ctxviewer.analysis.report import point_json
from ctxviewer.analysis.session_summary import summarize

Columns = dict[str, list[Any]]


@dataclass(frozen=True)
class SessionRows:
    """A session's rows, per table as columns (name -> values), and its partition."""

    key: str
    agent: str  # the partition's agent: the agent profile's id
    day: date | None  # the partition's date: the UTC day of the session's first request
    tables: dict[str, Columns]

    def count(self, table: str) -> int:
        return len(self.tables[table]["session_key"])


def _empty() -> dict[str, Columns]:
    return {table: {c.name: [] for c in columns} for table, columns in TABLES.items()}


def parse_time(stamp: str | None) -> datetime | None:
    """An ISO 8601 timestamp as UTC (one without an offset is taken as UTC), or None."""
    if not stamp:
        return None
    try:
        when = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def session_rows(a: Analysis, key: str, number: int, prices: PriceTable) -> SessionRows:
    """The rows of ``a``'s session; ``key`` identifies it, ``number`` is its place in
    its file (``report --session N``)."""
    out = _empty()
    cost = session_cost(a.session, prices)
    summary = summarize(a, cost, prices)
    row = summary.as_dict()
    agent = row.pop("agent")
    row.update(session_key=key, session_number=number)
    for old, new in RENAMED.items():
        row[new] = row.pop(old)
    _append(out["sessions"], row)
    _requests(a, key, cost.requests, prices, out)
    start = parse_time(summary.start)
    return SessionRows(key, agent, start.date() if start else None, out)


def _append(table: Columns, row: dict[str, Any]) -> None:
    for name, values in table.items():
        values.append(row[name])


def _requests(
    a: Analysis,
    key: str,
    costs: tuple[RequestCost, ...],
    prices: PriceTable,
    out: dict[str, Columns],
) -> None:
    comp = a.compactions
    triggers = dict(zip(comp.observed, comp.triggers, strict=True))
    predicted = set(comp.predicted)
    for point, att, rc in zip(a.timeline, a.attribution, costs, strict=True):
        i = point.index
        b = a.breakdown(i)
        row = point_json(point) | att.as_dict()
        row.update(
            session_key=key,
            sent_at=parse_time(point.timestamp),
            subagent_id=point.agent,
            events=list(point.events),
            compaction_observed=i in triggers,
            compaction_trigger=triggers.get(i),
            compaction_predicted=i in predicted,
            breakdown_mode=b.mode,
            window_tokens=b.window,
            **_cost(rc, prices),
        )
        _append(out["requests"], row)
        for position, c in enumerate(b.categories):
            _append(
                out["categories"],
                {
                    "session_key": key,
                    "request": i,
                    "position": position,
                    "category": c.name,
                    "tokens": c.tokens,
                    "estimated": c.estimated,
                    "basis": c.basis,
                },
            )
            if c.name in OVERHEAD:
                _items(out["items"], key, i, c.name, c.items, None)


def _items(
    table: Columns,
    key: str,
    request: int,
    category: str,
    items: tuple[Item, ...],
    parent: str | None,
) -> None:
    """The rows of a category's items; an MCP server's tools follow it, ``parent`` naming it."""
    for position, item in enumerate(items):
        _append(
            table,
            {
                "session_key": key,
                "request": request,
                "category": category,
                "position": position,
                "name": item.name,
                "kind": item.kind,
                "parent": parent,
                "tokens": item.tokens,
                "leaf": not item.items,
            },
        )
        if item.items:
            _items(table, key, request, category, item.items, item.name)


def _cost(rc: RequestCost, prices: PriceTable) -> dict[str, Any]:
    price = prices.lookup(rc.model) if rc.price_key is not None else None
    return {
        "price": rc.price_key,
        "has_usage": rc.has_usage,
        "input_tokens": rc.input_tokens,
        "cache_write_5m_tokens": rc.cache_write_5m_tokens,
        "cache_write_1h_tokens": rc.cache_write_1h_tokens,
        "uncached_input_usd": rc.uncached_input_usd,
        "cache_write_usd": rc.cache_write_usd,
        "cache_read_usd": rc.cache_read_usd,
        "output_usd": rc.output_usd,
        "cost_usd": rc.total_usd,
        "no_cache_usd": no_cache_usd(rc, prices),
        "price_input_per_mtok": price.input if price else None,
        "price_cache_write_5m_per_mtok": price.cache_write_5m if price else None,
        "price_cache_write_1h_per_mtok": price.cache_write_1h if price else None,
        "price_cache_read_per_mtok": price.cache_read if price else None,
        "price_output_per_mtok": price.output if price else None,
    }
