"""One model's prices: the rates of a prompt tier, the tiers above it, and their source.

Rates are USD per million tokens. Uncached input, cache reads, cache writes
(5-minute and 1-hour) and output each have a rate. A provider may bill a
long prompt higher (Claude and Gemini above 200k tokens, Qwen above 32k,
128k, 256k): a ``Tier`` starting at N tokens applies to every token of a
request whose prompt is above N (the cliff the providers bill, as
genai-prices models it), output included.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

FIELDS = ("input", "cache_write_5m", "cache_write_1h", "cache_read", "output")
PER = 1_000_000


@dataclass(frozen=True)
class Tier:
    """The rates of every token of a request whose prompt is above ``start`` tokens."""

    start: int
    input: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float
    output: float

    def to_json(self) -> dict[str, Any]:
        return {"above": self.start, **{f: getattr(self, f) for f in FIELDS}}


@dataclass(frozen=True)
class Price:
    """One model's prices in USD per million tokens (the base tier) and where they come from.

    ``key`` names the entry that priced the model (the catalogue's model id, or
    the key of ctxviewer's or the user's table); ``source`` says which table and,
    for ctxviewer's own entries, the page the numbers were read from.
    """

    key: str
    input: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float
    output: float
    tiers: tuple[Tier, ...] = ()
    source: str = ""

    def at(self, prompt_tokens: int) -> Price:
        """The rates billed for a request whose prompt is ``prompt_tokens`` long."""
        tier = None
        for t in self.tiers:
            if prompt_tokens > t.start:
                tier = t
        if tier is None:
            return self
        return replace(
            self,
            input=tier.input,
            cache_write_5m=tier.cache_write_5m,
            cache_write_1h=tier.cache_write_1h,
            cache_read=tier.cache_read,
            output=tier.output,
            tiers=(),
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, **{f: getattr(self, f) for f in FIELDS}}
        if self.tiers:
            out["tiers"] = [t.to_json() for t in self.tiers]
        out["source"] = self.source
        return out


def rates(entry: dict[str, Any], origin: str) -> dict[str, float]:
    """The five rates of a table entry (``input`` and ``output`` required): a missing
    cache write costs Anthropic's 1.25x (5 minutes) and 2x (1 hour) of input, a missing
    cache read 0.1x."""
    if not isinstance(entry, dict) or "input" not in entry or "output" not in entry:
        raise ValueError(f"{origin} needs at least 'input' and 'output'")
    try:
        inp = float(entry["input"])
        out = {
            "input": inp,
            "output": float(entry["output"]),
            "cache_write_5m": float(entry.get("cache_write_5m", inp * 1.25)),
            "cache_write_1h": float(entry.get("cache_write_1h", inp * 2)),
            "cache_read": float(entry.get("cache_read", inp * 0.1)),
        }
    except (TypeError, ValueError):
        raise ValueError(f"{origin}: prices are numbers (USD per million tokens)") from None
    if any(v < 0 or v != v for v in out.values()):
        raise ValueError(f"{origin}: a price is negative or not a number")
    return out


def from_entry(key: str, entry: dict[str, Any], origin: str, source: str) -> Price:
    """A ``Price`` from an entry of a JSON table: the rates, and ``tiers`` as a list of
    ``{"above": N, "input": .., "output": .., ...}``."""
    base = rates(entry, f"{origin}: model {key!r}")
    tiers = []
    raw = entry.get("tiers", [])
    if not isinstance(raw, list):
        raise ValueError(f"{origin}: model {key!r}: 'tiers' is a list")
    for t in raw:
        if not isinstance(t, dict) or not isinstance(t.get("above"), int):
            raise ValueError(f"{origin}: model {key!r}: each tier has 'above' (tokens)")
        tiers.append(Tier(t["above"], **rates(t, f"{origin}: model {key!r} tier")))
    tiers.sort(key=lambda t: t.start)
    return Price(key, tiers=tuple(tiers), source=str(entry.get("source") or source), **base)
