"""The maintained price catalogue: Pydantic's genai-prices, read offline.

genai-prices ships every provider's models with the rules that match a model
name to them (dated ids, aliases such as Gemini's ``-customtools``), their
prices over time (a price starts on a date; DeepSeek's differ by hour) and
their long-prompt tiers. Its network auto-update is never used.

Importing it builds some 2,300 pydantic objects (about 0.15 s, as long as a
whole ``report`` of a small transcript), so the catalogue is read from it
once, into a compact JSON snapshot kept in ctxviewer's cache folder and keyed
by the installed package's data file: the next run reads the snapshot, not
the package, and a new version of genai-prices makes a new snapshot. This
module evaluates the snapshot as genai-prices does: the first provider whose
match rule takes the name, then that provider's first matching model, then
its fallback providers' (Azure sells OpenAI's models), then the name with a
compact date (``-20251211``) written with dashes.
"""

from __future__ import annotations

import importlib.util
import os
import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any

import orjson

from ctxviewer.analysis.pricing.price import Price, Tier

FORMAT = 2  # of the snapshot file: a new layout makes a new file
# genai-prices' price keys -> ours (tokens only: searches, audio, images are not in a log)
KEYS = {
    "input_mtok": "input",
    "output_mtok": "output",
    "cache_read_mtok": "cache_read",
    "cache_write_mtok": "cache_write",
    "cache_write_5m_mtok": "cache_write_5m",
    "cache_write_1h_mtok": "cache_write_1h",
}
_COMPACT_DATE = re.compile(r"(-)(20\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?=-|:|$)")


# -- the snapshot: genai-prices' data as plain JSON -----------------------------------


def data_file() -> Path | None:
    """The data module of the installed genai-prices (found without importing it)."""
    try:
        spec = importlib.util.find_spec("genai_prices")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    path = Path(spec.origin).with_name("data.py")
    return path if path.is_file() else None


def cache_dir() -> Path:
    home = os.environ.get("CTXVIEWER_HOME")
    if home:
        return Path(home) / "cache"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ctxviewer"


def _clause(c: Any) -> list[Any]:
    from genai_prices import types as t

    for cls, name, attr in (
        (t.ClauseStartsWith, "starts_with", "starts_with"),
        (t.ClauseEndsWith, "ends_with", "ends_with"),
        (t.ClauseContains, "contains", "contains"),
        (t.ClauseRegex, "regex", "regex"),
        (t.ClauseEquals, "equals", "equals"),
    ):
        if isinstance(c, cls):
            return [name, getattr(c, attr)]
    if isinstance(c, t.ClauseOr):
        return ["or", [_clause(x) for x in c.or_]]
    if isinstance(c, t.ClauseAnd):
        return ["and", [_clause(x) for x in c.and_]]
    raise TypeError(f"unknown match clause {c!r}")


def _value(v: Any) -> Any:
    from genai_prices import types as t

    if isinstance(v, t.TieredPrices):
        return {"base": float(v.base), "tiers": [[x.start, float(x.price)] for x in v.tiers]}
    return float(v)


def _utc(value: time) -> str:
    if value.tzinfo is not None:
        value = datetime.combine(date(1970, 1, 1), value).astimezone(UTC).time()
    return value.replace(tzinfo=None).isoformat()


def _prices(model: Any) -> list[list[Any]]:
    """[[constraint, {key: rate}], ...] in the catalogue's order (the last active wins)."""
    from genai_prices import types as t

    conditional = (
        model.prices
        if isinstance(model.prices, list)
        else [t.ConditionalPrice(prices=model.prices)]
    )
    out: list[list[Any]] = []
    for cp in conditional:
        c = cp.constraint
        when: dict[str, Any] | None = None
        if isinstance(c, t.StartDateConstraint):
            when = {"from": c.start_date.isoformat()}
        elif isinstance(c, t.TimeOfDateConstraint):
            when = {"daily": [_utc(c.start_time), _utc(c.end_time)]}
        values = {
            ours: _value(v)
            for key, ours in KEYS.items()
            if (v := getattr(cp.prices, key, None)) is not None
        }
        out.append([when, values])
    return out


def build(path: Path) -> dict[str, Any]:
    """The snapshot of the installed genai-prices (imports it: about 0.15 s)."""
    from importlib.metadata import version

    from genai_prices.data import providers

    # a provider's models stay a JSON text until a lookup needs them: a run parses the
    # providers it prices with, not the 2,300 models (a few milliseconds)
    return {
        "format": FORMAT,
        "genai_prices": version("genai-prices"),
        "data_file": str(path),
        "providers": [
            {
                "id": p.id,
                "name": p.name,
                "url": (p.pricing_urls or [""])[0],
                "match": _clause(p.model_match) if p.model_match is not None else None,
                "fallback": list(p.fallback_model_providers or ()),
                "models": orjson.dumps(
                    [
                        {"id": m.id, "match": _clause(m.match), "prices": _prices(m)}
                        for m in p.models
                    ]
                ).decode(),
            }
            for p in providers
        ],
    }


def snapshot() -> dict[str, Any] | None:
    """The catalogue as JSON: read from the cache, or built and cached; None without
    genai-prices. Once per process."""
    with _LOCK:
        path = data_file()
        if path is None:
            return None
        try:
            st = path.stat()
        except OSError:
            return None
        key = f"{st.st_size}-{st.st_mtime_ns}"
        cached = _MEMO.get(key)
        if cached is not None:
            return cached
        file = cache_dir() / f"genai-prices-{FORMAT}-{key}.json"
        data: dict[str, Any] | None = None
        try:
            data = orjson.loads(file.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            pass
        if (
            not isinstance(data, dict)
            or data.get("format") != FORMAT
            or data.get("data_file") != str(path)
        ):
            data = build(path)
            _write(file, orjson.dumps(data))
        _MEMO.clear()
        _MEMO[key] = data
        return data


def _write(file: Path, raw: bytes) -> None:
    """Write the snapshot atomically; a read-only cache folder only costs the next run
    another build."""
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        tmp = file.with_name(f"{file.name}.{os.getpid()}.tmp")
        tmp.write_bytes(raw)
        os.replace(tmp, file)
    except OSError:
        pass


_LOCK = threading.Lock()
_MEMO: dict[str, dict[str, Any]] = {}


# -- matching and prices, as genai-prices evaluates them -------------------------------


def matches(clause: list[Any], text: str) -> bool:
    kind, arg = clause
    if kind == "starts_with":
        return text.startswith(str(arg).lower())
    if kind == "ends_with":
        return text.endswith(str(arg).lower())
    if kind == "contains":
        return str(arg).lower() in text
    if kind == "regex":
        return re.search(arg, text) is not None
    if kind == "equals":
        return bool(text == arg.lower())
    if kind == "or":
        return any(matches(c, text) for c in arg)
    if kind == "and":
        return all(matches(c, text) for c in arg)
    return False


def _active(when: dict[str, Any] | None, at: datetime) -> bool:
    if when is None:
        return True
    at = at.astimezone(UTC) if at.tzinfo is not None else at
    if "from" in when:
        return at.date() >= date.fromisoformat(when["from"])
    start, end = (time.fromisoformat(x) for x in when["daily"])
    now = at.time().replace(tzinfo=None)
    return bool(now >= start or now < end) if end < start else bool(start <= now < end)


def _rate(value: Any, start: int | None) -> float:
    """A key's rate at the tier starting at ``start`` (None: the base)."""
    if not isinstance(value, dict):
        return float(value)
    rate = float(value["base"])
    for tier_start, price in value["tiers"]:
        if start is not None and tier_start <= start:
            rate = float(price)
    return rate


def _rates(values: dict[str, Any], start: int | None) -> dict[str, float]:
    """Our five rates from the catalogue's keys: a token kind without its own price is
    billed as its parent (a 1-hour write as a write, a write or a read as input)."""
    inp = _rate(values["input"], start)
    write = _rate(values["cache_write"], start) if "cache_write" in values else inp
    return {
        "input": inp,
        "output": _rate(values["output"], start) if "output" in values else 0.0,
        "cache_read": _rate(values["cache_read"], start) if "cache_read" in values else inp,
        "cache_write_5m": _rate(values["cache_write_5m"], start)
        if "cache_write_5m" in values
        else write,
        "cache_write_1h": _rate(values["cache_write_1h"], start)
        if "cache_write_1h" in values
        else write,
    }


def to_price(key: str, values: dict[str, Any], source: str) -> Price | None:
    """A ``Price`` from one set of catalogue prices; None without an input price."""
    if "input" not in values:
        return None
    starts = sorted({s for v in values.values() if isinstance(v, dict) for s, _ in v["tiers"]})
    tiers = tuple(Tier(s, **_rates(values, s)) for s in starts)
    return Price(key, tiers=tiers, source=source, **_rates(values, None))


@dataclass
class Model:
    """One catalogue model: its prices over time."""

    id: str
    provider: str
    prices: list[list[Any]]
    source: str
    _built: dict[int, Price | None] = field(default_factory=dict)
    _days: dict[date, int] | None = None  # the choice per day, where it depends on the day

    def price(self, at: datetime | None) -> Price | None:
        """The price in force at ``at`` (now when None), as genai-prices picks it: the
        last set of prices whose constraint holds, else the first."""
        chosen = 0
        if len(self.prices) > 1:
            at = at or datetime.now(tz=UTC)
            if self._days is None and all(p[0] is None or "from" in p[0] for p in self.prices):
                self._days = {}  # start dates only: the choice is the (UTC) day's
            if self._days is not None:
                day = (at.astimezone(UTC) if at.tzinfo is not None else at).date()
                found = self._days.get(day)
                chosen = self._days[day] = self._choose(at) if found is None else found
            else:
                chosen = self._choose(at)
        if chosen not in self._built:
            self._built[chosen] = to_price(self.id, self.prices[chosen][1], self.source)
        return self._built[chosen]

    def _choose(self, at: datetime) -> int:
        for i in range(len(self.prices) - 1, -1, -1):
            if _active(self.prices[i][0], at):
                return i
        return 0


class Catalogue:
    """genai-prices' providers and models, looked up by the name a log records."""

    def __init__(self, data: dict[str, Any] | None) -> None:
        self.version: str | None = data.get("genai_prices") if data else None
        self.providers: list[dict[str, Any]] = list(data.get("providers", ())) if data else []
        self._by_id = {p["id"]: p for p in self.providers}
        self._found: dict[tuple[str, str | None], Model | None] = {}

    def provider_ids(self) -> set[str]:
        return set(self._by_id)

    def find(self, model: str, provider: str | None = None) -> Model | None:
        """The catalogue's model for ``model`` (lower-cased as genai-prices does), in
        ``provider`` when given (its id), else in the first provider that takes it."""
        ref = model.lower()
        key = (ref, provider)
        if key not in self._found:
            self._found[key] = self._find(ref, provider)
        return self._found[key]

    def _find(self, ref: str, provider: str | None) -> Model | None:
        if provider is not None:
            prov = self._by_id.get(provider)
        else:
            prov = next(
                (p for p in self.providers if p["match"] is not None and matches(p["match"], ref)),
                None,
            )
        if prov is None:
            return None
        found = self._in(prov, ref, fallback=True)
        if found is None:
            dashed = _COMPACT_DATE.sub(_dashed, ref)
            if dashed != ref:
                found = self._in(prov, dashed, fallback=True)
        return found

    def _models(self, prov: dict[str, Any]) -> list[dict[str, Any]]:
        models = prov["models"]
        if isinstance(models, str):
            models = prov["models"] = orjson.loads(models)
        return models  # type: ignore[no-any-return]

    def _in(self, prov: dict[str, Any], ref: str, fallback: bool) -> Model | None:
        for m in self._models(prov):
            if matches(m["match"], ref):
                name = self.version and f"genai-prices {self.version}"
                return Model(
                    m["id"],
                    prov["id"],
                    m["prices"],
                    f"{name} ({prov['name']}{', ' + prov['url'] if prov['url'] else ''})",
                )
        if fallback:
            for other in prov["fallback"]:
                if other in self._by_id:
                    found = self._in(self._by_id[other], ref, fallback=False)
                    if found is not None:
                        return found
        return None


def _dashed(m: re.Match[str]) -> str:
    y, mo, d = (int(m.group(i)) for i in range(2, 5))
    try:
        date(y, mo, d)
    except ValueError:
        return m.group(0)
    return f"-{y:04d}-{mo:02d}-{d:02d}"
