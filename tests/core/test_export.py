"""``export --parquet``: its rows agree with ``report`` (the demo, the corpus), a second
export replaces a file's rows, bad paths are listed and counted, and without the
``team`` extra both team commands say how to install it."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest
from team_data import SPOTTER_ID, corpus_tree, read_table, run, run_json

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.breakdown import OVERHEAD
from ctxviewer.analysis.dataset.schema import RENAMED, TABLES
from ctxviewer.analysis.session_summary import summarize
from ctxviewer.ingest.loader import load
from ctxviewer.resources import demo_session_path

CODEX = "codex/Mai0313__VibeCodingTracker__tests_fixtures_sessions_codex.jsonl"
GEMINI = "gemini-cli/Mai0313__VibeCodingTracker__tests_fixtures_sessions_gemini.jsonl"
REQUEST_KEYS = (
    "index",
    "timestamp",
    "model",
    "role",
    "sidechain",
    "api_prompt_tokens",
    "estimated_prompt_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "tier",
    "events",
    "failure",
    "attributed_exact",
    "estimated",
    "unattributed",
)


def _day(stamps: list[str | None]) -> date | None:
    times = [datetime.fromisoformat(s) for s in stamps if s]
    return min(times).date() if times else None


def _items(categories: list[dict[str, Any]]) -> list[tuple[str, str, int, str | None]]:
    """(category, name, tokens, parent) of the overhead categories' rows, nested ones
    after their server, as report --json lists them."""
    out = []

    def walk(cat: str, items: list[dict[str, Any]], parent: str | None) -> None:
        for item in items:
            out.append((cat, item["name"], item["tokens"], parent))
            walk(cat, item.get("items", []), item["name"])

    for c in categories:
        if c["name"] in OVERHEAD:
            walk(c["name"], c["items"], None)
    return out


def _check_request(
    rows: dict[str, list[dict[str, Any]]], key: str, breakdown: dict[str, Any]
) -> None:
    """The categories and items rows of one request equal ``report --json``'s breakdown."""
    i = breakdown["request"]
    cats = sorted(
        (r for r in rows["categories"] if r["session_key"] == key and r["request"] == i),
        key=lambda r: r["position"],
    )
    assert [(c["category"], c["tokens"], c["estimated"], c["basis"]) for c in cats] == [
        (c["name"], c["tokens"], c["estimated"], c["basis"]) for c in breakdown["categories"]
    ]
    items = sorted(
        (r for r in rows["items"] if r["session_key"] == key and r["request"] == i),
        key=lambda r: (r["category"], r["parent"] or "", r["position"]),
    )
    expected = _items(breakdown["categories"])
    assert sorted((r["category"], r["name"], r["tokens"], r["parent"]) for r in items) == sorted(
        expected
    )


def _tables(dataset: Path) -> dict[str, list[dict[str, Any]]]:
    return {t: read_table(dataset, t) for t in TABLES}


def test_demo_rows_agree_with_report(tmp_path: Path) -> None:
    demo = str(demo_session_path())
    status, out, err = run("export", demo, "--parquet", str(tmp_path / "ds"))
    assert status == 0 and err == ""
    assert out.startswith("exported 1 session to ") and "55 requests" in out
    rows = _tables(tmp_path / "ds")
    rep = run_json("report", demo, "--json")
    first = run_json("report", demo, "--json", "--request", "0")
    (session,) = rows["sessions"]
    key = session["session_key"]
    assert len(rows["requests"]) == rep["source"]["requests"] == 55
    got = sorted(rows["requests"], key=lambda r: r["index"])
    assert [{k: r[k] for k in REQUEST_KEYS} for r in got] == [
        {k: r[k] for k in REQUEST_KEYS} for r in rep["requests"]
    ]
    assert {r["agent"] for r in got} == {rep["agent"]["id"]} == {session["agent"]}
    assert {r["date"] for r in got} == {_day([r["timestamp"] for r in rep["requests"]])}
    assert [r["index"] for r in got if r["compaction_observed"]] == rep["compactions"]["observed"]
    assert [r["index"] for r in got if r["compaction_predicted"]] == rep["compactions"]["predicted"]
    # every request has its breakdown; two of them checked against report's, row by row
    assert len(rows["categories"]) == 55 * len(rep["breakdown"]["categories"])
    for breakdown in (rep["breakdown"], first["breakdown"]):
        _check_request(rows, key, breakdown)
    mcp = [r for r in rows["items"] if r["category"] == "mcp_tools" and r["parent"] is None]
    assert {r["name"] for r in mcp} == {"github", "postgres"}
    # the session row: the summary's fields (three renamed), the agent in the partition
    want = summarize(Analysis(load(demo))).as_dict()
    want = {RENAMED.get(k, k): v for k, v in want.items() if k not in ("path",)}
    assert session["path"] == os.path.abspath(demo) and session["session_number"] == 0
    assert {k: session[k] for k in want} == want
    assert session["requests"] == rep["source"]["requests"]
    assert session["peak_prompt_tokens"] == rep["peak_prompt_tokens"]


def test_corpus_sessions_agree_with_report(corpus: Path, tmp_path: Path) -> None:
    tree = corpus_tree(corpus, tmp_path / "tree")
    status, out, err = run("export", str(tree), "--parquet", str(tmp_path / "ds"))
    assert status == 0, err
    assert "2 sub-agent files read with their session" in out
    assert "2 other files in folders not read" in out  # MANIFEST.md, the /context text
    rows = _tables(tmp_path / "ds")
    sessions = rows["sessions"]
    assert len(sessions) >= 17 and {s["agent"] for s in sessions} >= {
        "claude-code",
        "codex",
        "gemini-cli",
        "anthropic-client",
        "openai-client",
    }
    assert any(s["requests"] == 0 for s in sessions)  # a transcript with a summary only
    for s in sessions:
        rep = run_json("report", s["path"], "--json", "--session", str(s["session_number"]))
        mine = [r for r in rows["requests"] if r["session_key"] == s["session_key"]]
        assert len(mine) == s["requests"] == rep["source"]["requests"], s["path"]
        assert {r["agent"] for r in mine} <= {rep["agent"]["id"]} and s["agent"] == rep["agent"][
            "id"
        ]
        if rep["breakdown"] is not None:
            _check_request(rows, s["session_key"], rep["breakdown"])
        assert s["date"] == _day([r["timestamp"] for r in rep["requests"]])
    # spotter, read from its Claude Code layout, carries its sub-agents' requests
    spotter = next(s for s in sessions if s["path"].endswith(f"{SPOTTER_ID}.jsonl"))
    subs = {
        r["subagent_id"]
        for r in rows["requests"]
        if r["session_key"] == spotter["session_key"] and r["role"] == "subagent"
    }
    assert {"a93ccab", "acompact-70d8e7"} <= subs
    assert not any("subagents" in s["path"] and SPOTTER_ID in s["path"] for s in sessions)
    # a recording of two agents: two sessions of one file, numbered as report numbers them
    two = [s for s in sessions if "vibe-coding-proxy_log-2026-06-16" in s["path"]]
    assert sorted(s["session_number"] for s in two) == [0, 1]


def test_hive_partitions_read_with_pyarrow(corpus: Path, tmp_path: Path) -> None:
    import pyarrow.dataset as ds

    paths = [str(demo_session_path()), str(corpus / CODEX), str(corpus / GEMINI)]
    assert run("export", *paths, "--parquet", str(tmp_path / "ds"))[0] == 0
    table = ds.dataset(tmp_path / "ds" / "requests", format="parquet", partitioning="hive")
    assert {"agent", "date"} <= set(table.schema.names)
    agents = table.to_table(columns=["agent"]).column("agent").to_pylist()
    assert {a: agents.count(a) for a in set(agents)} == {
        "claude-code": 55,
        "codex": 19,
        "gemini-cli": 6,
    }
    parts = sorted(
        str(p.relative_to(tmp_path / "ds" / "requests").parent)
        for p in (tmp_path / "ds" / "requests").rglob("*.parquet")
    )
    assert parts == [
        "agent=claude-code/date=2025-11-18",
        "agent=codex/date=2025-09-19",
        "agent=gemini-cli/date=2026-04-23",
    ]
    only = table.to_table(filter=ds.field("agent") == "codex")
    assert only.num_rows == 19  # a partition filter reads one folder


def _counts(dataset: Path) -> dict[str, int]:
    return {t: len(read_table(dataset, t)) for t in TABLES}


def _codex_and_demo(corpus: Path, tmp_path: Path) -> tuple[Path, Path, str]:
    """A copy of a Codex log and the demo, exported into ``tmp_path/ds``."""
    log = tmp_path / "codex.jsonl"
    shutil.copyfile(corpus / CODEX, log)
    dataset = tmp_path / "ds"
    demo = str(demo_session_path())
    assert run("export", str(log), demo, "--parquet", str(dataset))[0] == 0
    return log, dataset, demo


def test_export_again_replaces_a_files_rows(corpus: Path, tmp_path: Path) -> None:
    log, dataset, demo = _codex_and_demo(corpus, tmp_path)
    before = _counts(dataset)
    files = sorted(dataset.rglob("*.parquet"))
    assert run("export", str(log), demo, "--parquet", str(dataset))[0] == 0
    assert _counts(dataset) == before
    assert sorted(dataset.rglob("*.parquet")) == files
    # the same path, now another agent's log on another day: its old partition is emptied
    shutil.copyfile(corpus / GEMINI, log)
    assert run("export", str(log), "--parquet", str(dataset))[0] == 0
    agents = [r["agent"] for r in read_table(dataset, "requests")]
    assert agents.count("gemini-cli") == 6 and "codex" not in agents
    assert agents.count("claude-code") == 55  # the demo's rows stay
    assert not list(dataset.rglob("agent=codex*"))  # its empty partition folders too
    assert not list(dataset.rglob(".*.tmp"))


def test_bad_paths_are_listed_never_fatal(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "broken.jsonl").write_text("not json at all\n")
    (folder / "notes.txt").write_text("a note\n")
    os.mkfifo(folder / "pipe.jsonl")
    text = tmp_path / "readme.md"
    text.write_text("# not a session\n")
    bad = [str(tmp_path / "missing.jsonl"), str(text), str(folder), "/proc/self/status"]
    status, out, err = run("export", *bad, "--parquet", str(tmp_path / "ds"))
    assert status == 2
    lines = err.splitlines()
    assert len(lines) == 5 and all(line.startswith("ctxviewer: skipped ") for line in lines)
    reasons = {line.split(": ")[1].removeprefix("skipped "): line for line in lines}
    assert "no such file" in reasons[str(tmp_path / "missing.jsonl")]
    assert "a pipe" in reasons[str(folder / "pipe.jsonl")]
    assert "/proc" in reasons["/proc/self/status"]
    assert str(folder / "broken.jsonl") in reasons and str(text) in reasons
    assert out.startswith("exported 0 sessions") and "5 paths skipped" in out
    assert "1 other file in folders not read" in out
    # with one good file among them: exported, the bad ones still listed
    status, out, err = run(
        "export", *bad, str(demo_session_path()), "--parquet", str(tmp_path / "ds")
    )
    assert status == 0 and len(err.splitlines()) == 5
    assert out.startswith("exported 1 session") and "5 paths skipped" in out


def test_dataset_path_that_is_a_file(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    status, _, err = run("export", str(demo_session_path()), "--parquet", str(target))
    assert status == 2 and err == f"ctxviewer: --parquet {target}: not a folder\n"


BLOCKED = (
    "import sys\n"
    "sys.modules['pyarrow'] = sys.modules['duckdb'] = None  # as if not installed\n"
    "from ctxviewer.cli import main\n"
    "status = main(sys.argv[1:])\n"
    "assert not [m for m in sys.modules if m.split('.')[0] in ('pyarrow', 'duckdb') "
    "and sys.modules[m] is not None]\n"
    "sys.exit(status)\n"
)


@pytest.mark.parametrize("command", ["export", "query"])
def test_without_the_team_extra(command: str, tmp_path: Path) -> None:
    sql = tmp_path / "q.sql"
    sql.write_text("SELECT 1")
    argv = (
        ["export", str(demo_session_path()), "--parquet", str(tmp_path / "ds")]
        if command == "export"
        else ["query", str(sql), str(tmp_path)]
    )
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED, *argv], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "pip install 'ctxviewer[team]'" in done.stderr
    assert not (tmp_path / "ds").exists()


def test_other_commands_need_no_team_extra() -> None:
    for argv in (["--help"], ["report", str(demo_session_path())], ["export", "--help"]):
        done = subprocess.run(
            [sys.executable, "-c", BLOCKED, *argv], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr


def test_prune_removes_the_rows_of_logs_that_are_gone(corpus: Path, tmp_path: Path) -> None:
    log, dataset, demo = _codex_and_demo(corpus, tmp_path)
    with_codex = _counts(dataset)
    assert run("export", demo, "--parquet", str(dataset))[0] == 0
    log.unlink()
    # by default the rows of a log deleted since stay: agents delete old logs
    status, out, _ = run("export", demo, "--parquet", str(dataset))
    assert status == 0 and "removed" not in out
    assert _counts(dataset) == with_codex
    status, out, _ = run("export", demo, "--parquet", str(dataset), "--prune")
    assert status == 0 and "rows of 1 session file no longer on disk removed" in out
    agents = {r["agent"] for r in read_table(dataset, "requests")}
    assert agents == {"claude-code"}
    assert len(read_table(dataset, "requests")) == 55  # the demo's, untouched
    assert not list(dataset.rglob("agent=codex*"))


def test_one_export_at_a_time_per_folder(tmp_path: Path) -> None:
    dataset = tmp_path / "ds"
    from ctxviewer.commands.parquet_store import ParquetStore
    from ctxviewer.errors import UsageError

    with ParquetStore(str(dataset)):  # another export holds the folder
        status, out, err = run("export", str(demo_session_path()), "--parquet", str(dataset))
        assert status == 2 and out == ""
        assert err == (
            f"ctxviewer: --parquet {dataset}: another export is writing this "
            "folder; run one at a time\n"
        )
        with pytest.raises(UsageError):
            ParquetStore(str(dataset))
    assert run("export", str(demo_session_path()), "--parquet", str(dataset))[0] == 0
    assert len(read_table(dataset, "requests")) == 55


def test_an_export_that_fails_midway_keeps_the_old_rows(tmp_path: Path) -> None:
    from ctxviewer.analysis.pricing import load_prices
    from ctxviewer.commands.export import file_key, file_rows
    from ctxviewer.commands.parquet_store import ParquetStore

    dataset = tmp_path / "ds"
    demo = str(demo_session_path())
    assert run("export", demo, "--parquet", str(dataset))[0] == 0
    before = sorted(p.read_bytes() for p in dataset.rglob("*.parquet"))

    from ctxviewer.analysis.tokens.estimators import DEFAULT

    args = argparse.Namespace(estimator=DEFAULT, policy="agent")
    rows = file_rows(demo, args, load_prices())
    store = ParquetStore(str(dataset))
    broken = rows[0]
    broken.tables["items"] = {"session_key": ["x"]}  # wrong columns: pyarrow refuses
    with pytest.raises(Exception):  # noqa: B017 - whatever pyarrow raises
        store.replace(file_key(demo), rows)
    store.close()
    assert sorted(p.read_bytes() for p in dataset.rglob("*.parquet")) == before
    assert not list(dataset.rglob(".*.tmp"))
