"""The agent profile table (``profiles.toml``), loaded into frozen dataclasses.

Every constant an agent lives by (windows, compaction formulas, how its
``/context`` counts) is data in ``profiles.toml``, with its source and the
versions it holds for; ``docs/agents.md`` cites each one. Code elsewhere
reads these dataclasses and never branches on an agent's name for a number.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import orjson

Version = tuple[int, ...]


def dotted(version: Version) -> str:
    """(2, 1, 197) -> '2.1.197'."""
    return ".".join(map(str, version))


def parse_version(text: str | None) -> Version | None:
    """'2.1.197' -> (2, 1, 197); None when ``text`` holds no version."""
    m = re.search(r"\d+(?:\.\d+)*", text or "")
    return tuple(int(p) for p in m.group(0).split(".")) if m else None


@dataclass(frozen=True)
class PolicyRule:
    """One compaction formula with its constants (see ``thresholds.agent_thresholds``)."""

    kind: str  # reserve-buffer | ladder | ladder-min | fraction | limit | window-table | ...
    label: str
    constants: dict[str, float] = field(default_factory=dict)
    # (model prefix, auto-compact limit): kind "limit"; (window, limit): kind "window-table"
    limits: tuple[tuple[str, int], ...] = ()
    source: str = ""

    def constant(self, name: str, default: float = 0.0) -> float:
        return float(self.constants.get(name, default))

    def limit_for(self, model: str | None) -> int | None:
        name = (model or "").lower().rsplit("/", 1)[-1]
        return next((v for prefix, v in self.limits if name.startswith(prefix)), None)


@dataclass(frozen=True)
class Era:
    """What holds for a range of an agent's versions."""

    since: Version | None  # inclusive; None: from the first version
    until: Version | None  # exclusive; None: up to now
    windows: tuple[tuple[str, int], ...]  # (model prefix, window); "" matches any model
    window_source: str
    policy: PolicyRule
    counting: dict[str, Any] = field(default_factory=dict)  # the agent's /context rules
    extended_window: int | None = None  # a larger window the agent opens on some condition
    extended_when: tuple[str, ...] = ()  # model-suffix | interactive-beta | beta | observed-over
    effective_pct: float | None = None  # the agent records/uses this share of the model's window
    until_date: str | None = None  # ISO date of the era's last release (logs without a version)
    fallback_source: str = ""  # why the window of "" (a model the agent's list lacks) is that

    def window_match(self, model: str | None) -> tuple[str, int] | None:
        """(the model prefix that matched, its window); "" is the agent's window for a model
        its own list lacks. None when the era names no window for it."""
        name = (model or "").lower().rsplit("/", 1)[-1]
        return next(
            (
                (prefix, w)
                for prefix, w in self.windows
                if name.startswith(prefix) or (prefix and f"-{prefix}" in name)
            ),
            None,
        )

    def covers(self, version: Version | None) -> bool:
        if version is None:
            return self.until is None  # an unknown version is taken as the newest
        return (self.since is None or version >= self.since) and (
            self.until is None or version < self.until
        )

    def window_for(self, model: str | None) -> int | None:
        match = self.window_match(model)
        return match[1] if match else None


@dataclass(frozen=True)
class Profile:
    """One agent of the table: its eras (versions with their rules) and estimator."""

    id: str  # claude-code | qwen-code | codex | gemini-cli | anthropic-client | openai-client
    label: str
    eras: tuple[Era, ...]
    estimator: (
        str  # the agent's own estimator where it has one (a name in analysis.tokens.estimators)
    )
    docs: str = ""
    injected: tuple[str, ...] = ()  # how text the agent injects into the history begins
    known: Version | None = None  # the newest version whose rules were checked (profiles.toml)

    def newer_than_rules(self, version: Version | None) -> str | None:
        """One line saying that ``version`` is newer than the rules ctxviewer knows and whose
        rules stand in for it; None when it is not (or either is unknown)."""
        if version is None or self.known is None or version <= self.known:
            return None
        known = dotted(self.known)
        return (
            f"{self.label} {dotted(version)} is newer than the rules ctxviewer knows "
            f"(up to {known}); using {known}'s"
        )

    def era(self, version: Version | None, date: str | None = None) -> Era:
        """The era of ``version``; without one, the era of the log's ``date`` (ISO) where
        eras have release dates, else the newest."""
        if version is None and date:
            for era in self.eras:
                if era.until_date is None or date[:10] < era.until_date:
                    return era
        for era in self.eras:
            if era.covers(version):
                return era
        if (
            version is not None
            and self.eras
            and self.eras[0].since is not None
            and version < self.eras[0].since
        ):
            return self.eras[0]
        return self.eras[-1]


def _pairs(raw: dict[str, Any] | None) -> tuple[tuple[str, int], ...]:
    return tuple((str(k).lower(), int(v)) for k, v in (raw or {}).items())


def _rule(raw: dict[str, Any]) -> PolicyRule:
    known = {"kind", "label", "limits", "source"}
    return PolicyRule(
        raw["kind"],
        raw["label"],
        {k: float(v) for k, v in raw.items() if k not in known},
        _pairs(raw.get("limits")),
        raw.get("source", ""),
    )


def _era(raw: dict[str, Any]) -> Era:
    return Era(
        parse_version(raw.get("since")),
        parse_version(raw.get("until")),
        _pairs(raw.get("windows")),
        raw.get("window_source", ""),
        _rule(raw["policy"]),
        dict(raw.get("counting", {})),
        raw.get("extended_window"),
        tuple(raw.get("extended_when", ())),
        raw.get("effective_pct"),
        raw.get("until_date"),
        raw.get("fallback_source", ""),
    )


PROFILES_TOML = Path(__file__).with_name("profiles.toml")
# profiles.toml, parsed: written by tools/agent_tables.py, checked by tests/core/test_agents.py.
# Reading it is 0.1 ms where importing tomllib and parsing the TOML is 6 ms of every command.
PROFILES_JSON = PROFILES_TOML.with_suffix(".json")


def read_profiles_toml() -> dict[str, Any]:
    """``profiles.toml`` as parsed data: from its parsed copy when that was made from these
    very bytes (their CRC-32 says so), else parsed here."""
    raw = PROFILES_TOML.read_bytes()
    try:
        parsed = orjson.loads(PROFILES_JSON.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        parsed = None
    if isinstance(parsed, dict) and parsed.get("toml_crc32") == zlib.crc32(raw):
        data: dict[str, Any] = parsed["data"]
        return data
    import tomllib

    return tomllib.loads(raw.decode("utf-8"))


@cache
def profiles() -> dict[str, Profile]:
    """Every profile of ``profiles.toml``, by id (read once)."""
    data = read_profiles_toml()
    out: dict[str, Profile] = {}
    for pid, raw in data["profiles"].items():
        out[pid] = Profile(
            pid,
            raw["label"],
            tuple(_era(e) for e in raw["eras"]),
            raw.get("estimator", "qwen"),
            raw.get("docs", ""),
            tuple(raw.get("injected", ())),
            parse_version(raw.get("known")),
        )
    return out


def profile(pid: str) -> Profile:
    return profiles()[pid]
