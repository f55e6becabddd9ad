"""Per-model prices (USD per million tokens), from a shipped table plus a user file.

The shipped table is ``resources/prices.json``; a user file with the same
layout (``$CTXVIEWER_HOME/prices.json``, else
``$XDG_CONFIG_HOME/ctxviewer/prices.json`` or ``~/.config/ctxviewer/prices.json``)
is merged over it, model by model. Nothing is fetched from the network.

A model name is matched by its longest key prefix after provider prefixes and
date/version suffixes are stripped (``claude-sonnet-4-20250514``,
``gpt-4o-2024-08-06``, ``claude-opus-4-1@20250805``, ``anthropic.claude-...-v1:0``);
a key matches only whole ``-``-separated parts, so ``gpt-5`` prices
``gpt-5-codex`` but not ``gpt-5.2``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ctxviewer.resources import resource

FIELDS = ("input", "cache_write_5m", "cache_write_1h", "cache_read", "output")

_DATE = re.compile(r"(-\d{4}-\d{2}-\d{2}|-\d{8}|@\d{8}|@latest|-latest|-v\d+(:\d+)?|\[1m\])$")
_PROVIDER = re.compile(r"^(.*/)?((us|eu|apac|global)\.)?(anthropic\.|openai\.|google\.)?")


@dataclass(frozen=True)
class Price:
    """One model's prices in USD per million tokens."""

    key: str
    input: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float
    output: float

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, **{f: getattr(self, f) for f in FIELDS}}


@dataclass(frozen=True)
class PriceTable:
    """Prices per model, looked up by model name."""

    prices: tuple[Price, ...]
    as_of: str | None = None
    source: str = ""
    user_file: str | None = None  # the override file that was merged, if any
    _by_key: dict[str, Price] = field(default_factory=dict, repr=False, compare=False)
    # model -> its price, looked up once: a session names a few models in every request
    _found: dict[str, Price | None] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._by_key.update({p.key: p for p in self.prices})

    def lookup(self, model: str | None) -> Price | None:
        """The price of ``model`` by longest matching key, or None when unknown."""
        if not model:
            return None
        try:
            return self._found[model]
        except KeyError:
            best = self._found[model] = self._lookup(model)
            return best

    def _lookup(self, model: str) -> Price | None:
        name = normalize_model(model)
        best: Price | None = None
        for key, price in self._by_key.items():
            if (name == key or name.startswith(key + "-")) and (
                    best is None or len(key) > len(best.key)):
                best = price
        return best

    def to_json(self) -> dict[str, Any]:
        return {"as_of": self.as_of, "source": self.source, "user_file": self.user_file,
                "models": {p.key: p.to_json() for p in self.prices}}


def normalize_model(model: str) -> str:
    name = _PROVIDER.sub("", model.strip().lower(), count=1)
    previous = None
    while previous != name:
        previous, name = name, _DATE.sub("", name)
    return name


def user_prices_path() -> Path:
    home = os.environ.get("CTXVIEWER_HOME")
    if home:
        return Path(home) / "prices.json"
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "ctxviewer" / "prices.json"


def _entries(data: Any, origin: str) -> dict[str, Price]:
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, dict):
        raise ValueError(f"{origin}: no 'models' object")  # noqa: TRY004 - a bad file
    out: dict[str, Price] = {}
    for key, entry in models.items():
        if not isinstance(entry, dict) or "input" not in entry or "output" not in entry:
            raise ValueError(f"{origin}: model {key!r} needs at least 'input' and 'output'")
        inp = float(entry["input"])
        out[key.lower()] = Price(
            key.lower(), inp,
            float(entry.get("cache_write_5m", inp * 1.25)),
            float(entry.get("cache_write_1h", inp * 2)),
            float(entry.get("cache_read", inp * 0.1)),
            float(entry["output"]))
    return out


def load_prices(shipped: Path | None = None, user: Path | None = None) -> PriceTable:
    """The shipped table with the user's file (if present) merged over it.

    Raises ``ValueError`` when either file is malformed. A user entry may
    omit the cache fields: Anthropic's ratios (1.25x, 2x, 0.1x input) fill them.
    """
    shipped = shipped or resource("prices.json")
    data = orjson.loads(shipped.read_bytes())
    prices = _entries(data, str(shipped))
    as_of, source = data.get("as_of"), data.get("source", "")
    user = user or user_prices_path()
    user_file = None
    if user.is_file():
        try:
            extra = orjson.loads(user.read_bytes())
        except orjson.JSONDecodeError as e:
            raise ValueError(f"{user}: {e}") from None
        prices.update(_entries(extra, str(user)))
        user_file = str(user)
        as_of = extra.get("as_of", as_of)
    return PriceTable(tuple(prices.values()), as_of, source, user_file)
