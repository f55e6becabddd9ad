"""Prices by model name: the user's overrides, the catalogue, then ctxviewer's own table.

A model is looked up, in order, in
1. the user's file (``$CTXVIEWER_HOME/prices.json``, else
   ``$XDG_CONFIG_HOME/ctxviewer/prices.json`` or ``~/.config/ctxviewer/prices.json``):
   what the user set wins;
2. the catalogue (genai-prices, ``catalogue``): dated ids, aliases, prices over time
   and long-prompt tiers as it knows them;
3. ctxviewer's table (``resources/prices.json``): only models the catalogue lacks,
   each entry naming the page its numbers come from.
A key of the two tables matches a name by its longest whole ``-``-separated prefix
after a date suffix is stripped (``gpt-5`` prices ``gpt-5-codex``, not ``gpt-5.2``).

A name the agents send through a gateway is looked up again without the gateway's
part, only where the catalogue says it is the same model: a ``provider/`` prefix
naming a catalogue provider (``anthropic/claude-sonnet-4-5``, ``models/gemini-2.5-pro``
is the Gemini API's own form), Bedrock's ``us.anthropic.…-v1:0`` ids (the catalogue's
AWS provider lists them, at Bedrock's prices). Nothing is fetched from the network.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from ctxviewer.analysis.pricing.catalogue import Catalogue, snapshot
from ctxviewer.analysis.pricing.price import Price, from_entry
from ctxviewer.resources import resource

_DATE = re.compile(r"(-\d{4}-\d{2}-\d{2}|-\d{8}|@\d{8}|@latest|-latest|-v\d+(:\d+)?|\[1m\])$")
_BEDROCK = re.compile(r"^((us|eu|apac|au|jp|global)\.)?anthropic\.")
_GATEWAY = re.compile(r"^([a-z0-9_.-]+)/(.+)$")


def normalize_model(model: str) -> str:
    """``model`` lower-cased, without a gateway prefix and date or version suffixes: the
    form the keys of ctxviewer's and the user's tables are matched against."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    name = _BEDROCK.sub("", name, count=1)
    previous = None
    while previous != name:
        previous, name = name, _DATE.sub("", name)
    return name


def _by_prefix(entries: dict[str, Price], name: str) -> Price | None:
    best: Price | None = None
    for key, price in entries.items():
        if (name == key or name.startswith(key + "-")) and (
            best is None or len(key) > len(best.key)
        ):
            best = price
    return best


def _when(at: str | datetime | None) -> datetime | None:
    if at is None or isinstance(at, datetime):
        return at
    try:
        return datetime.fromisoformat(at)
    except ValueError:
        return None


@dataclass
class PriceTable:
    """Prices per model: the user's entries, the catalogue, ctxviewer's table."""

    own: dict[str, Price]  # ctxviewer's table: what the catalogue lacks
    user: dict[str, Price] = field(default_factory=dict)
    as_of: str | None = None  # of ctxviewer's table
    source: str = ""
    user_file: str | None = None  # the override file that was merged, if any
    catalogue: Catalogue | None = field(default=None, repr=False)  # None: read on first use
    _found: dict[str, tuple[str, Any] | None] = field(default_factory=dict, repr=False)

    @property
    def prices(self) -> tuple[Price, ...]:
        """The entries of the two tables (the user's over ctxviewer's)."""
        return tuple({**self.own, **self.user}.values())

    def catalogue_version(self) -> str | None:
        return self._catalogue().version

    def _catalogue(self) -> Catalogue:
        if self.catalogue is None:
            self.catalogue = Catalogue(snapshot())
        return self.catalogue

    def lookup(self, model: str | None, at: str | datetime | None = None) -> Price | None:
        """The price of ``model`` for a request sent at ``at`` (ISO 8601, or now), or
        None when neither the user, the catalogue nor ctxviewer's table knows it."""
        if not model:
            return None
        try:
            found = self._found[model]
        except KeyError:
            found = self._found[model] = self._find(model)
        if found is None:
            return None
        kind, what = found
        if kind != "catalogue":
            return what  # type: ignore[no-any-return]
        # one set of prices: the same at any time (no need to read ``at``)
        return what.price(None if len(what.prices) == 1 else _when(at))  # type: ignore[no-any-return]

    def _find(self, model: str) -> tuple[str, Any] | None:
        name = normalize_model(model)
        if (p := _by_prefix(self.user, name)) is not None:
            return "table", p
        cat = self._catalogue()
        ref = model.strip().lower()
        found = cat.find(ref)
        if found is None and _BEDROCK.match(ref):
            found = cat.find(ref, "aws")
        if found is None and (g := _GATEWAY.match(ref)) and g.group(1) in cat.provider_ids():
            found = cat.find(g.group(2), g.group(1))
        if found is None and (g := _GATEWAY.match(ref)) and g.group(1) == "models":
            found = cat.find(g.group(2), "google")  # the Gemini API's resource name
        if found is None and _BEDROCK.match(ref):
            found = cat.find(name)
        if found is not None:
            return "catalogue", found
        if (p := _by_prefix(self.own, name)) is not None:
            return "table", p
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "as_of": self.as_of,
            "source": self.source,
            "user_file": self.user_file,
            "catalogue": self.catalogue_version() and f"genai-prices {self.catalogue_version()}",
            "models": {p.key: p.to_json() for p in self.prices},
        }


def user_prices_path() -> Path:
    home = os.environ.get("CTXVIEWER_HOME")
    if home:
        return Path(home) / "prices.json"
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "ctxviewer" / "prices.json"


def _entries(data: Any, origin: str, source: str) -> dict[str, Price]:
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, dict):
        raise ValueError(f"{origin}: no 'models' object")
    return {
        key.lower(): from_entry(key.lower(), entry, origin, source) for key, entry in models.items()
    }


def load_prices(shipped: Path | None = None, user: Path | None = None) -> PriceTable:
    """ctxviewer's table with the user's file (if present) over it; the catalogue is
    read on the first lookup that needs it.

    Raises ``ValueError`` when either file is malformed. A user entry may omit the
    cache fields: Anthropic's ratios (1.25x, 2x, 0.1x input) fill them.
    """
    shipped = shipped or resource("prices.json")
    data = orjson.loads(shipped.read_bytes())
    own = _entries(data, str(shipped), "ctxviewer's table")
    user = user or user_prices_path()
    extra: dict[str, Price] = {}
    user_file = None
    if user.is_file():
        try:
            raw = orjson.loads(user.read_bytes())
        except orjson.JSONDecodeError as e:
            raise ValueError(f"{user}: {e}") from None
        extra = _entries(raw, str(user), f"your prices file ({user})")
        user_file = str(user)
    return PriceTable(own, extra, data.get("as_of"), data.get("source", ""), user_file)


_current: tuple[tuple[object, ...], PriceTable] | None = None


def current_prices() -> PriceTable:
    """``load_prices()`` as the user's prices file is now: made once per process (the
    catalogue and the models looked up kept with it) and made again when that file
    appears, changes or goes. For a caller that prices many sessions (the library's
    reads); raises ``ValueError`` as ``load_prices`` does."""
    global _current
    user = user_prices_path()
    try:
        st = user.stat()
        stamp: tuple[object, ...] = (str(user), st.st_mtime_ns, st.st_size)
    except OSError:
        stamp = (str(user),)
    if _current is None or _current[0] != stamp:
        _current = (stamp, load_prices(user=user))
    return _current[1]
