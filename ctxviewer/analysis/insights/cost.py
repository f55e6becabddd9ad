"""What a session cost, what caching saved, and where a budget was crossed.

Per request: the API usage priced with ``pricing`` at the prices in force when
it was sent and the tier its prompt size falls in (uncached input, cache writes
at the 5-minute and 1-hour rates, cache reads, output). The cost without
caching prices every prompt token as uncached input; ``saved`` is that minus
the actual cost (negative when cache writes were never read back). Requests
without usage cost nothing we know of. A request whose model has no price is
unknown, not free: its cost fields are None, the session's ``total_usd`` is
None, ``priced_usd`` adds up the requests that have a price and
``unknown_models`` names the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ctxviewer.analysis.compaction.base import is_prompt
from ctxviewer.analysis.pricing import Price, PriceTable, load_prices
from ctxviewer.fmt import usd
from ctxviewer.model import MAIN, Request, Session, Usage

PER = 1_000_000


@dataclass(frozen=True)
class RequestCost:
    """One request's tokens and dollars; the cost fields are None without a price."""

    index: int
    role: str
    model: str | None
    price_key: str | None
    input_tokens: int
    cache_write_5m_tokens: int
    cache_write_1h_tokens: int
    cache_read_tokens: int
    output_tokens: int
    uncached_input_usd: float | None
    cache_write_usd: float | None
    cache_read_usd: float | None
    output_usd: float | None
    has_usage: bool = True

    @property
    def prompt_tokens(self) -> int:
        return (
            self.input_tokens
            + self.cache_write_5m_tokens
            + self.cache_write_1h_tokens
            + self.cache_read_tokens
        )

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.output_tokens

    @property
    def total_usd(self) -> float | None:
        parts = (
            self.uncached_input_usd,
            self.cache_write_usd,
            self.cache_read_usd,
            self.output_usd,
        )
        return None if self.uncached_input_usd is None else sum(p or 0.0 for p in parts)

    @property
    def hit_rate(self) -> float | None:
        """cache_read / prompt tokens."""
        p = self.prompt_tokens
        return self.cache_read_tokens / p if p else None

    def waterfall(self) -> tuple[tuple[str, float], ...]:
        """(label, usd) steps in the order they add up to ``total_usd``."""
        if self.total_usd is None:
            return ()
        return (
            ("uncached input", self.uncached_input_usd or 0.0),
            ("cache write", self.cache_write_usd or 0.0),
            ("cache read", self.cache_read_usd or 0.0),
            ("output", self.output_usd or 0.0),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "role": self.role,
            "model": self.model,
            "price": self.price_key,
            "has_usage": self.has_usage,
            "tokens": {
                "input": self.input_tokens,
                "cache_write_5m": self.cache_write_5m_tokens,
                "cache_write_1h": self.cache_write_1h_tokens,
                "cache_read": self.cache_read_tokens,
                "output": self.output_tokens,
            },
            "usd": None
            if self.total_usd is None
            else {
                "uncached_input": self.uncached_input_usd,
                "cache_write": self.cache_write_usd,
                "cache_read": self.cache_read_usd,
                "output": self.output_usd,
                "total": self.total_usd,
            },
            "hit_rate": self.hit_rate,
        }


@dataclass(frozen=True)
class ModelCost:
    """What the requests of one model cost."""

    model: str
    price_key: str | None
    requests: int
    total_usd: float | None
    tokens: int
    source: str = ""  # the table the price came from (and its page)


@dataclass(frozen=True)
class SessionCost:
    """What a session cost, per request and per model, with and without caching."""

    requests: tuple[RequestCost, ...]
    priced_usd: float  # over the priced requests
    no_cache_usd: float  # the same requests priced without caching
    unknown_models: tuple[str, ...]
    unpriced_requests: tuple[int, ...]  # usage known, model not in the table
    by_model: tuple[ModelCost, ...]
    prices_as_of: str | None
    prices_source: str
    prices_user_file: str | None

    @property
    def total_usd(self) -> float | None:
        """The session's cost; None when a request with usage has no price."""
        return None if self.unpriced_requests else self.priced_usd

    def total_text(self) -> str:
        """The total as people read it: '$1.23', or 'unknown (no price for gpt-6.2-sol;
        $0.42 priced)' when a request has no price (never $0 for what is unknown)."""
        if self.total_usd is not None:
            return usd(self.total_usd)
        priced = f"; {usd(self.priced_usd)} priced" if self.priced_usd else ""
        return f"unknown (no price for {', '.join(self.unknown_models)}{priced})"

    @property
    def saved_usd(self) -> float:
        """What caching saved on the priced requests."""
        return self.no_cache_usd - self.priced_usd

    def _sum(self, attr: str) -> int:
        return sum(getattr(r, attr) for r in self.requests)

    @property
    def prompt_tokens(self) -> int:
        return self._sum("prompt_tokens")

    @property
    def cache_read_tokens(self) -> int:
        return self._sum("cache_read_tokens")

    @property
    def cache_write_tokens(self) -> int:
        return self._sum("cache_write_5m_tokens") + self._sum("cache_write_1h_tokens")

    @property
    def hit_rate(self) -> float | None:
        p = self.prompt_tokens
        return self.cache_read_tokens / p if p else None

    def cumulative_usd(self) -> tuple[float, ...]:
        """The running total of the priced requests (an unpriced one adds nothing)."""
        out, acc = [], 0.0
        for r in self.requests:
            acc += r.total_usd or 0.0
            out.append(acc)
        return tuple(out)

    def to_json(self, per_request: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "total_usd": self.total_usd,
            "priced_usd": self.priced_usd,
            "no_cache_usd": self.no_cache_usd,
            "saved_usd": self.saved_usd,
            "hit_rate": self.hit_rate,
            "tokens": {
                "prompt": self.prompt_tokens,
                "cache_read": self.cache_read_tokens,
                "cache_write": self.cache_write_tokens,
                "input": self._sum("input_tokens"),
                "output": self._sum("output_tokens"),
            },
            "unknown_models": list(self.unknown_models),
            "unpriced_requests": list(self.unpriced_requests),
            "by_model": [
                {
                    "model": m.model,
                    "price": m.price_key,
                    "requests": m.requests,
                    "total_usd": m.total_usd,
                    "tokens": m.tokens,
                    "source": m.source,
                }
                for m in self.by_model
            ],
            "prices": {
                "as_of": self.prices_as_of,
                "source": self.prices_source,
                "user_file": self.prices_user_file,
            },
        }
        if per_request:
            out["requests"] = [r.to_json() for r in self.requests]
        return out


def request_cost(req: Request, prices: PriceTable) -> RequestCost:
    """``req``'s usage priced at the prices of its model when it was sent, in the tier
    of its prompt size."""
    u = req.usage
    price = prices.lookup(req.model, req.timestamp)
    if price is not None and u is not None:
        price = price.at(u.prompt_tokens)
    if u is None:
        return RequestCost(
            req.index,
            req.role,
            req.model,
            price.key if price else None,
            0,
            0,
            0,
            0,
            0,
            0.0 if price else None,
            0.0 if price else None,
            0.0 if price else None,
            0.0 if price else None,
            has_usage=False,
        )
    w1h = min(u.cache_creation_1h_tokens, u.cache_creation_input_tokens)
    w5m = u.cache_creation_input_tokens - w1h
    if price is None:
        return RequestCost(
            req.index,
            req.role,
            req.model,
            None,
            u.input_tokens,
            w5m,
            w1h,
            u.cache_read_input_tokens,
            u.output_tokens,
            None,
            None,
            None,
            None,
        )
    return RequestCost(
        req.index,
        req.role,
        req.model,
        price.key,
        u.input_tokens,
        w5m,
        w1h,
        u.cache_read_input_tokens,
        u.output_tokens,
        *_usd(u, w5m, w1h, price),
    )


def _usd(u: Usage, w5m: int, w1h: int, price: Price) -> tuple[float, float, float, float]:
    """Uncached input, cache writes, cache reads and output of ``u``, in USD."""
    return (
        u.input_tokens * price.input / PER,
        (w5m * price.cache_write_5m + w1h * price.cache_write_1h) / PER,
        u.cache_read_input_tokens * price.cache_read / PER,
        u.output_tokens * price.output / PER,
    )


def cost_totals(
    requests: Sequence[Request], prices: PriceTable | None = None
) -> tuple[float | None, float | None]:
    """What ``summarize`` takes of ``session_cost``: its ``total_usd`` when some request
    has a price (None when none has, or a request with usage has none) and its
    ``hit_rate``, the same floats, without a ``RequestCost`` per request (a summary's
    row: ``session_summary.summarize`` without details)."""
    prices = prices or load_prices()
    totals: list[float] = []
    priced = unpriced = False
    read = prompt = 0
    for r in requests:
        u, price = r.usage, prices.lookup(r.model, r.timestamp)
        priced = priced or price is not None
        if u is None:
            continue
        read += u.cache_read_input_tokens
        prompt += u.prompt_tokens
        if price is None:
            unpriced = True
            continue
        price = price.at(u.prompt_tokens)
        w1h = min(u.cache_creation_1h_tokens, u.cache_creation_input_tokens)
        totals.append(sum(_usd(u, u.cache_creation_input_tokens - w1h, w1h, price)))
    total = sum(totals) if priced and not unpriced else None
    return total, (read / prompt if prompt else None)


Rates = tuple[float, float, float]  # USD per token: cache read, cache write, uncached input


def billed_rates(req: Request, prices: PriceTable) -> Rates | None:
    """USD per prompt token of ``req`` as billed: its model's prices when it was sent, in
    its prompt's tier, cache writes at its own 5-minute / 1-hour mix; None without a
    price."""
    price = prices.lookup(req.model, req.timestamp)
    if price is None:
        return None
    u = req.usage
    mix = 0.0
    if u is not None:
        price = price.at(u.prompt_tokens)
        if u.cache_creation_input_tokens:
            mix = (
                min(u.cache_creation_1h_tokens, u.cache_creation_input_tokens)
                / u.cache_creation_input_tokens
            )
    return (
        price.cache_read / PER,
        (price.cache_write_5m * (1 - mix) + price.cache_write_1h * mix) / PER,
        price.input / PER,
    )


def split_billed(req: Request, start: int, tokens: int, share: float = 1.0) -> tuple[int, int, int]:
    """``tokens`` at prompt position ``start`` of ``req`` split as the API billed them:
    (cache read, cache write, uncached). The API bills a prompt as a prefix read from
    the cache, then the part written to it, then uncached input. ``share``: the
    positions are in a part of the prompt that takes this share of each tier."""
    u = req.usage
    if u is None or tokens <= 0:
        return 0, 0, max(tokens, 0)
    read_end = round(u.cache_read_input_tokens * share)
    write_end = read_end + round(u.cache_creation_input_tokens * share)
    end = start + tokens
    read = max(0, min(end, read_end) - start)
    write = max(0, min(end, write_end) - max(start, read_end))
    return read, write, tokens - read - write


def no_cache_usd(rc: RequestCost, prices: PriceTable, at: str | None = None) -> float | None:
    """``rc``'s tokens priced as if nothing were cached (every prompt token uncached)."""
    price = prices.lookup(rc.model, at)
    if price is None:
        return None
    price = price.at(rc.prompt_tokens)
    return (rc.prompt_tokens * price.input + rc.output_tokens * price.output) / PER


def session_cost(
    session: Session | Sequence[Request], prices: PriceTable | None = None
) -> SessionCost:
    """Price every request of a session (or of a list of requests)."""
    prices = prices or load_prices()
    reqs = session.requests if isinstance(session, Session) else list(session)
    costs = tuple(request_cost(r, prices) for r in reqs)
    total = sum(c.total_usd or 0.0 for c in costs)
    nocache = sum(
        no_cache_usd(c, prices, r.timestamp) or 0.0
        for c, r in zip(costs, reqs, strict=True)
        if c.total_usd is not None
    )
    unpriced = tuple(c.index for c in costs if c.has_usage and c.price_key is None)
    unknown = tuple(
        sorted({c.model or "(no model)" for c in costs if c.has_usage and c.price_key is None})
    )
    groups: dict[str, list[RequestCost]] = {}
    for c in costs:
        groups.setdefault(c.model or "(no model)", []).append(c)
    by_model = tuple(
        sorted(
            (
                ModelCost(
                    m,
                    cs[0].price_key,
                    len(cs),
                    None if cs[0].price_key is None else sum(c.total_usd or 0.0 for c in cs),
                    sum(c.total_tokens for c in cs),
                    _source(prices, m),
                )
                for m, cs in groups.items()
            ),
            key=lambda m: -(m.total_usd or 0.0),
        )
    )
    return SessionCost(
        costs,
        total,
        nocache,
        unknown,
        unpriced,
        by_model,
        prices.as_of,
        prices.source,
        prices.user_file,
    )


def _source(prices: PriceTable, model: str) -> str:
    price = prices.lookup(model)
    return price.source if price is not None else ""


# --- budgets (as Shannon's: session / task budgets, warning threshold, hard or soft) ---


@dataclass(frozen=True)
class Budget:
    """A spending limit in USD or tokens, per session or per task (user prompt).

    ``hard``: the agent refuses the request that would cross the limit
    (Shannon's hard limit); soft: it warns and goes on.
    """

    limit: float
    unit: str = "usd"  # "usd" | "tokens"
    scope: str = "session"  # "session" | "task"
    warn_fraction: float = 0.8
    hard: bool = False

    def __post_init__(self) -> None:
        if (
            self.limit <= 0
            or self.unit not in ("usd", "tokens")
            or self.scope not in ("session", "task")
            or not 0 < self.warn_fraction <= 1
        ):
            raise ValueError(f"invalid budget {self}")

    @property
    def warn_at(self) -> float:
        """The spend (in ``unit``, per ``scope``) from which the budget warns:
        ``warn_fraction`` of the limit."""
        return self.limit * self.warn_fraction

    def threshold(self, kind: str) -> float:
        """The spend a crossing of ``kind`` is about: ``warn`` (``warn_at``) or ``limit``."""
        if kind == "warn":
            return self.warn_at
        if kind == "limit":
            return self.limit
        raise ValueError(f"a budget crossing is 'warn' or 'limit', not {kind!r}")


@dataclass(frozen=True)
class BudgetCrossing:
    """The request whose spend crossed a budget's warning or limit."""

    kind: str  # "warn" | "limit"
    request: int  # index of the request whose spend crossed it
    task: int  # task number (0-based; always 0 for a session budget)
    spent: float  # spend in the budget's unit after that request
    threshold: float

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "request": self.request,
            "task": self.task,
            "spent": self.spent,
            "threshold": self.threshold,
        }


@dataclass(frozen=True)
class BudgetReport:
    """One budget checked against a session: crossings, spend, where it stops."""

    budget: Budget
    crossings: tuple[BudgetCrossing, ...]
    spent: float  # session total, or the largest task's spend
    tasks: int
    stopped_at: int | None  # hard budget: the first request the agent would have refused
    skipped_requests: int  # hard budget: requests sent after a limit (in its task)

    @property
    def exceeded(self) -> bool:
        return any(c.kind == "limit" for c in self.crossings)

    def to_json(self) -> dict[str, Any]:
        b = self.budget
        return {
            "limit": b.limit,
            "unit": b.unit,
            "scope": b.scope,
            "warn_fraction": b.warn_fraction,
            "hard": b.hard,
            "spent": self.spent,
            "tasks": self.tasks,
            "exceeded": self.exceeded,
            "stopped_at": self.stopped_at,
            "skipped_requests": self.skipped_requests,
            "crossings": [c.to_json() for c in self.crossings],
        }


def task_starts(reqs: Sequence[Request]) -> list[int]:
    """Positions in ``reqs`` where a new task (a new user prompt on the main chain) starts."""
    out = []
    for i, r in enumerate(reqs):
        if r.role == MAIN and r.messages and is_prompt(r.messages[-1]):
            out.append(i)
    return out


def evaluate_budget(
    cost: SessionCost, budget: Budget, requests: Sequence[Request] | None = None
) -> BudgetReport:
    """Walk the session and record where the warning and the limit were crossed.

    A task budget resets at every user prompt (needs ``requests``; without
    them the whole session is one task).
    """
    starts = set(task_starts(requests)) if budget.scope == "task" and requests else set()
    warn_at = budget.warn_at
    crossings: list[BudgetCrossing] = []
    spent, task, peak = 0.0, 0, 0.0
    warned = limited = False
    stopped_at: int | None = None
    skipped = 0
    for i, rc in enumerate(cost.requests):
        if i in starts and i > 0:
            task += 1
            spent, warned, limited = 0.0, False, False
        amount = (rc.total_usd or 0.0) if budget.unit == "usd" else float(rc.total_tokens)
        spent += amount
        peak = max(peak, spent)
        if not warned and spent >= warn_at:
            warned = True
            crossings.append(BudgetCrossing("warn", rc.index, task, spent, warn_at))
        if not limited and spent > budget.limit:
            limited = True
            crossings.append(BudgetCrossing("limit", rc.index, task, spent, budget.limit))
            if budget.hard and stopped_at is None:
                stopped_at = rc.index
        elif limited and budget.hard:
            skipped += 1
    tasks = task + 1 if cost.requests else 0
    total = peak if budget.scope == "task" else spent
    return BudgetReport(budget, tuple(crossings), total, tasks, stopped_at, skipped)
