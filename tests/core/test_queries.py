"""Every query of docs/queries/ runs on DuckDB over a dataset of the demo and the corpus,
and its numbers equal those worked out here from ``report --json`` and ``insights
--json`` on the same files (not from the dataset)."""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest
from team_data import corpus_tree, query, run, run_json

from ctxviewer.analysis.agents.sessions import split
from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.breakdown import OVERHEAD
from ctxviewer.analysis.pricing import load_prices
from ctxviewer.analysis.report import report_json
from ctxviewer.cli import main
from ctxviewer.ingest.loader import load
from ctxviewer.resources import demo_session_path

QUERIES = Path(__file__).resolve().parents[2] / "docs" / "queries"
EIGHT_PLACES = Decimal("0.00000001")  # the scale a query rounds through


@dataclass
class Expected:
    """One session as ``report`` and ``insights`` print it."""

    agent: str
    day: date | None
    report: dict[str, Any]  # report --json (its default request)
    breakdowns: list[dict[str, Any]]  # report --json --request i, for every i: the breakdown
    cost: dict[str, Any]  # insights --json: cost


def _day(stamps: list[str | None]) -> date | None:
    times = [datetime.fromisoformat(s) for s in stamps if s]
    return min(times).date() if times else None


def _session(path: str, number: int) -> Expected:
    rep = run_json("report", path, "--json", "--session", str(number))
    cost = run_json("insights", path, "--json", "--session", str(number))["cost"]
    # report --json --request i for every i: the same function on one loaded session
    a = Analysis(split(load(path))[number])
    assert report_json(a, None) == rep
    breakdowns = [report_json(a, i)["breakdown"] for i in range(len(a.session.requests))]
    return Expected(
        rep["agent"]["id"], _day([r["timestamp"] for r in rep["requests"]]), rep, breakdowns, cost
    )


@pytest.fixture(scope="module")
def team(
    tmp_path_factory: pytest.TempPathFactory, corpus: Path
) -> Iterator[tuple[Path, list[Expected]]]:
    root = tmp_path_factory.mktemp("team")
    tree = corpus_tree(corpus, root / "tree")
    dataset = root / "ds"
    status, _, err = run("export", str(tree), str(demo_session_path()), "--parquet", str(dataset))
    assert status == 0, err
    listing = io.StringIO()
    with contextlib.redirect_stdout(listing):
        assert (
            main(
                [
                    "query",
                    str(_sql(root, "SELECT path, session_number FROM sessions")),
                    str(dataset),
                    "--json",
                ]
            )
            == 0
        )
    sessions = [_session(p, n) for p, n in json.loads(listing.getvalue())["rows"]]
    yield dataset, sessions


def _sql(root: Path, text: str) -> Path:
    path = root / "list.sql"
    path.write_text(text)
    return path


def _requests(
    sessions: list[Expected],
) -> Iterator[tuple[Expected, dict[str, Any], dict[str, Any], dict[str, Any]]]:
    """(session, request row, its breakdown, its cost) of every request the API counted."""
    for s in sessions:
        for r, b, c in zip(s.report["requests"], s.breakdowns, s.cost["requests"], strict=True):
            if r["api_prompt_tokens"]:
                yield s, r, b, c


def _prompt_usd(cost: dict[str, Any]) -> float | None:
    usd = cost["usd"]
    return None if usd is None else usd["uncached_input"] + usd["cache_write"] + usd["cache_read"]


def _share(tokens: int, r: dict[str, Any], cost: dict[str, Any]) -> float | None:
    prompt = _prompt_usd(cost)
    return None if prompt is None else tokens * prompt / r["api_prompt_tokens"]


def _sum(values: list[float | None]) -> float | None:
    """SQL's SUM: nulls left out, null when all are."""
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _close(got: float | None, want: float | None, places: int) -> bool:
    if got is None or want is None:
        return got is want
    return abs(got - want) <= 0.6 * 10**-places


def check_biggest_overheads(rows: list[dict[str, Any]], sessions: list[Expected]) -> None:
    tokens: dict[str, list[int]] = defaultdict(list)
    usd: dict[str, list[float | None]] = defaultdict(list)
    for _, r, b, c in _requests(sessions):
        for cat in b["categories"]:
            if cat["name"] in OVERHEAD:
                tokens[cat["name"]].append(cat["tokens"])
                usd[cat["name"]].append(_share(cat["tokens"], r, c))
    assert [row["category"] for row in rows] == sorted(tokens, key=lambda k: (-sum(tokens[k]), k))
    for row in rows:
        values = tokens[row["category"]]
        assert row["tokens_carried"] == sum(values) and row["max_tokens"] == max(values)
        assert row["requests_with_it"] == sum(1 for v in values if v > 0)
        assert _close(row["usd"], _sum(usd[row["category"]]), 4)
    assert {r["category"] for r in rows} >= {"unrecorded_overhead", "builtin_tools", "mcp_tools"}


def check_biggest_items(rows: list[dict[str, Any]], sessions: list[Expected]) -> None:
    carried: dict[tuple[str, str], list[int]] = defaultdict(list)
    for _, _, b, _ in _requests(sessions):
        for cat in b["categories"]:
            if cat["name"] in OVERHEAD:
                for item in cat["items"]:
                    carried[(cat["name"], item["name"])].append(item["tokens"])
    top = sorted(carried, key=lambda k: (-sum(carried[k]), k))[:25]
    assert [(r["category"], r["name"]) for r in rows] == top
    assert [(r["requests"], r["tokens_carried"]) for r in rows] == [
        (len(carried[k]), sum(carried[k])) for k in top
    ]


def check_cost_by_mcp_server(rows: list[dict[str, Any]], sessions: list[Expected]) -> None:
    tokens: dict[str, list[int]] = defaultdict(list)
    usd: dict[str, list[float | None]] = defaultdict(list)
    tools: dict[str, int] = defaultdict(int)
    keys: dict[str, set[int]] = defaultdict(set)
    for s, r, b, c in _requests(sessions):
        mcp = next((cat for cat in b["categories"] if cat["name"] == "mcp_tools"), None)
        for server in mcp["items"] if mcp else []:
            tokens[server["name"]].append(server["tokens"])
            usd[server["name"]].append(_share(server["tokens"], r, c))
            tools[server["name"]] = max(tools[server["name"]], len(server.get("items", [])))
            keys[server["name"]].add(id(s))
    assert (
        {r["server"] for r in rows}
        == set(tokens)
        >= {"github", "postgres", "ide", "notes-weather", "codegraph"}
    )
    for row in rows:
        name = row["server"]
        assert row["requests"] == len(tokens[name]) and row["sessions"] == len(keys[name])
        assert row["tokens_carried"] == sum(tokens[name]) and row["tools"] == tools[name]
        assert _close(row["usd"], _sum(usd[name]), 6), name
    priced = [r["usd"] for r in rows if r["usd"] is not None]
    assert priced == sorted(priced, reverse=True) and len(priced) >= 4
    # deepseek-v4-flash (the codegraph trace) has a price since the catalogue came in
    assert next(r for r in rows if r["server"] == "codegraph")["usd"] is not None


def check_compaction_rate(rows: list[dict[str, Any]], sessions: list[Expected]) -> None:
    want: dict[str, dict[str, Any]] = defaultdict(lambda: defaultdict(int))
    for s in sessions:
        if not s.report["requests"]:
            continue
        w = want[s.agent]
        comp = s.report["compactions"]
        w["sessions"] += 1
        w["sessions_compacted"] += bool(comp["observed"])
        w["main_requests"] += sum(r["role"] == "main" for r in s.report["requests"])
        w["compactions"] += len(comp["observed"])
        w["predicted"] += len(comp["predicted"])
        for trigger in comp["triggers"]:
            if trigger:
                w[trigger] += 1
    assert {r["agent"] for r in rows} == set(want)
    for row in rows:
        w = want[row["agent"]]
        for key in (
            "sessions",
            "sessions_compacted",
            "main_requests",
            "compactions",
            "predicted",
            "auto",
            "manual",
            "inferred",
        ):
            assert row[key] == w[key], (row["agent"], key)
        assert _close(row["per_100_main_requests"], 100 * w["compactions"] / w["main_requests"], 2)
    assert sum(r["compactions"] for r in rows) >= 3  # the demo, lemmy, spotter


def check_cache_miss_cost(rows: list[dict[str, Any]], sessions: list[Expected]) -> None:
    prices = load_prices()
    want: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for s in sessions:
        for c in s.cost["requests"]:
            if not c["has_usage"] or c["usd"] is None:
                continue
            price = prices.lookup(c["model"])
            t = c["tokens"]
            prompt = t["input"] + t["cache_write_5m"] + t["cache_write_1h"] + t["cache_read"]
            w = want[s.agent]
            w["requests"] += 1
            w["prompt_tokens"] += prompt
            w["missed_tokens"] += prompt - t["cache_read"]
            w["cache_read"] += t["cache_read"]
            w["cost_usd"] += c["usd"]["total"]
            w["cache_miss_usd"] += _prompt_usd(c) - prompt * price.cache_read / 1e6
            w["no_cache_usd"] += (prompt * price.input + t["output"] * price.output) / 1e6
    assert {r["agent"] for r in rows} == set(want)
    for row in rows:
        w = want[row["agent"]]
        assert (row["requests"], row["prompt_tokens"], row["missed_tokens"]) == (
            w["requests"],
            w["prompt_tokens"],
            w["missed_tokens"],
        )
        assert _close(row["hit_rate"], w["cache_read"] / w["prompt_tokens"], 4)
        for key in ("cost_usd", "cache_miss_usd", "no_cache_usd"):
            assert _close(row[key], w[key], 4), (row["agent"], key)
        assert _close(row["saved_usd"], w["no_cache_usd"] - w["cost_usd"], 4)
        assert 0 < row["cache_miss_usd"] < row["cost_usd"] < row["no_cache_usd"]


def check_cost_by_day(rows: list[dict[str, Any]], sessions: list[Expected]) -> None:
    want: dict[tuple[str | None, str], dict[str, Any]] = {}
    for s in sessions:
        key = (s.day.isoformat() if s.day else None, s.agent)
        w = want.setdefault(key, {"sessions": 0, "requests": 0, "costs": []})
        w["sessions"] += 1
        w["requests"] += len(s.report["requests"])
        priced = any(c["usd"] is not None for c in s.cost["requests"])
        w["costs"].append(s.cost["total_usd"] if priced else None)
    assert [(r["date"], r["agent"]) for r in rows] == sorted(
        want, key=lambda k: (k[0] is None, k[0] or "", k[1])
    )
    for row in rows:
        w = want[(row["date"], row["agent"])]
        assert (row["sessions"], row["requests"]) == (w["sessions"], w["requests"])
        assert _close(row["cost_usd"], _sum(w["costs"]), 4)


def check_sessions_near_the_window(rows: list[dict[str, Any]], sessions: list[Expected]) -> None:
    shares = sorted(
        (
            round(s.report["peak_prompt_tokens"] / s.report["window"], 4)
            for s in sessions
            if s.report["peak_prompt_tokens"] is not None
        ),
        reverse=True,
    )
    assert [r["peak_share"] for r in rows] == shares[:20]
    top = rows[0]
    assert top["peak_share"] == round(top["peak_prompt_tokens"] / top["window_tokens"], 4)


CHECKS: dict[str, Callable[[list[dict[str, Any]], list[Expected]], None]] = {
    name.removeprefix("check_") + ".sql": f
    for name, f in globals().items()
    if name.startswith("check_")
}


def test_every_shipped_query_is_checked() -> None:
    assert sorted(p.name for p in QUERIES.glob("*.sql")) == sorted(CHECKS)


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_query(name: str, team: tuple[Path, list[Expected]], tmp_path: Path) -> None:
    dataset, sessions = team
    rows = query(str(QUERIES / name), dataset, tmp_path)
    assert rows, name
    CHECKS[name](rows, sessions)


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_query_divides_as_trino_does(name: str, team: tuple[Path, list[Expected]]) -> None:
    """Trino divides an integer by an integer as integers; DuckDB does so with
    ``integer_division``: the same rows either way."""
    from ctxviewer.commands.query import run_query

    dataset, _ = team
    sql = (QUERIES / name).read_text()
    assert run_query("SET integer_division = true;\n" + sql, dataset) == run_query(sql, dataset)


def _round_calls(sql: str) -> Iterator[tuple[str, str]]:
    """The arguments of every ``ROUND(x, n)`` in ``sql``: (x, n), split at the top-level
    comma."""
    for start in (m.end() for m in re.finditer(r"\bROUND\(", sql)):
        depth, commas, end = 0, [], start
        while depth >= 0:
            ch = sql[end]
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if ch == "," and depth == 0:
                commas.append(end)
            end += 1
        assert len(commas) == 1, sql[start:end]
        yield " ".join(sql[start : commas[0]].split()), sql[commas[0] + 1 : end - 1].strip()


def test_every_round_goes_through_a_decimal() -> None:
    """docs/parquet.md, "Rounding": a shipped query rounds ``CAST(x AS DECIMAL(38, 8))``,
    never a double."""
    for path in sorted(QUERIES.glob("*.sql")):
        sql = "\n".join(line for line in path.read_text().splitlines() if not line.startswith("--"))
        calls = list(_round_calls(sql))
        assert calls, path.name
        for inner, places in calls:
            assert inner.startswith("CAST(") and inner.endswith(" AS DECIMAL(38, 8))"), inner
            assert places.isdigit() and int(places) <= 6, places


def test_decimal_rounding_rounds_a_half_up(team: tuple[Path, list[Expected]]) -> None:
    """Spark reads a double as its shortest decimal form (0.00015), rounding it half up;
    DuckDB's ROUND(double) rounds the binary value (0.000149999…: 0.0001), and the two
    differ on a half. Cast to DECIMAL(38, 8) first, both round the decimal (and a sum's
    last-bit noise goes: 0.35414999999999996 is 0.35415000): every priced request's
    dollar amounts round on DuckDB as Spark rounds them, halves included."""
    from ctxviewer.commands.query import run_query

    dataset, _ = team
    columns = (
        "cost_usd",
        "uncached_input_usd",
        "cache_write_usd",
        "cache_read_usd",
        "output_usd",
        "no_cache_usd",
    )
    halves = 0
    for places in (4, 6):
        unit = Decimal(1).scaleb(-places)
        sql = (
            "SELECT "
            + ", ".join(f"{c}, ROUND(CAST({c} AS DECIMAL(38, 8)), {places})" for c in columns)
            + " FROM requests WHERE price IS NOT NULL"
        )
        _, rows = run_query(sql, dataset)
        assert rows
        for row in rows:
            for raw, rounded in zip(row[::2], row[1::2], strict=True):
                spark = (
                    Decimal(repr(raw))
                    .quantize(EIGHT_PLACES, ROUND_HALF_UP)
                    .quantize(unit, ROUND_HALF_UP)
                )
                assert rounded == spark, (raw, places)
                halves += Decimal(raw).quantize(unit, ROUND_HALF_UP) != spark
    assert halves  # the dataset has halves that a double's ROUND gets wrong
