"""A finding: one thing to cut from the context, what it carried and what it cost."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

INFO, WARN, ERROR = "info", "warn", "error"
SEVERITIES = (INFO, WARN, ERROR)  # in rising order


def rank(severity: str) -> int:
    return SEVERITIES.index(severity)


@dataclass
class Cost:
    """Tokens of something carried, by how the API billed them, and their price.

    The USD fields stay None until a request of a priced model is added;
    ``unpriced`` counts the requests with usage whose model has no price, and
    with any of them the dollars are unknown (``usd`` None): the tokens say it."""

    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    uncached_tokens: int = 0
    cache_read_usd: float | None = None
    cache_write_usd: float | None = None
    uncached_usd: float | None = None
    unpriced: int = 0

    @property
    def tokens(self) -> int:
        return self.cache_read_tokens + self.cache_write_tokens + self.uncached_tokens

    @property
    def usd(self) -> float | None:
        parts = (self.cache_read_usd, self.cache_write_usd, self.uncached_usd)
        if self.unpriced or all(p is None for p in parts):
            return None
        return sum(p or 0.0 for p in parts)

    def add(
        self, read: int, write: int, uncached: int, prices: tuple[float, float, float] | None
    ) -> None:
        """Add tokens billed as cache reads, cache writes and uncached input, with the
        USD per token of each (None: the model has no price)."""
        self.cache_read_tokens += read
        self.cache_write_tokens += write
        self.uncached_tokens += uncached
        if prices is None:
            self.unpriced += 1
            return
        self.cache_read_usd = (self.cache_read_usd or 0.0) + read * prices[0]
        self.cache_write_usd = (self.cache_write_usd or 0.0) + write * prices[1]
        self.uncached_usd = (self.uncached_usd or 0.0) + uncached * prices[2]

    def merge(self, other: Cost) -> None:
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_tokens += other.cache_write_tokens
        self.uncached_tokens += other.uncached_tokens
        self.unpriced += other.unpriced
        for name in ("cache_read_usd", "cache_write_usd", "uncached_usd"):
            theirs = getattr(other, name)
            if theirs is not None:
                setattr(self, name, (getattr(self, name) or 0.0) + theirs)

    def to_json(self) -> dict[str, Any]:
        return {
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "uncached_tokens": self.uncached_tokens,
            "cache_read_usd": self.cache_read_usd,
            "cache_write_usd": self.cache_write_usd,
            "uncached_usd": self.uncached_usd,
            "unpriced_requests": self.unpriced,
        }


@dataclass(frozen=True)
class Finding:
    """One finding. ``items`` name the tools, servers, files or messages it is about;
    ``requests`` are request indices, ``focus`` the one to show (the first by default);
    ``messages``: positions in that request's messages of the content concerned;
    ``category``: the breakdown category its items are rows of."""

    code: str
    severity: str
    title: str
    items: tuple[str, ...]
    requests: tuple[int, ...]
    tokens_per_request: int | None
    tokens_carried: int | None
    usd: float | None
    action: str
    detail: str = ""
    cost: Cost | None = None  # the carry cost by billing tier, where it was priced
    saved_usd: float | None = None  # what removing it would have saved
    category: str | None = None
    messages: tuple[int, ...] = field(default=())
    focus: int | None = None

    @property
    def shown(self) -> int | None:
        """The request to show for this finding."""
        return self.focus if self.focus is not None else self.requests[0] if self.requests else None

    @property
    def sort_key(self) -> tuple[int, int, str]:
        return (-rank(self.severity), -(self.tokens_carried or 0), self.title)

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "title": self.title,
            "items": list(self.items),
            "requests": list(self.requests),
            "tokens_per_request": self.tokens_per_request,
            "tokens_carried": self.tokens_carried,
            "usd": self.usd,
            "saved_usd": self.saved_usd,
            "cost": self.cost.to_json() if self.cost is not None else None,
            "action": self.action,
            "detail": self.detail,
            "category": self.category,
            "messages": list(self.messages),
            "focus": self.shown,
        }
