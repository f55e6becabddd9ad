"""Helpers of the team dataset's tests: a corpus tree laid out as the agents lay it out,
the CLI run in-process, a dataset read back with pyarrow."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from ctxviewer.cli import main

SPOTTER = "marot__spotter__test_fixtures_transcripts_fa812bfe-b295-4cca-9c2f-fdf01028cb46"
SPOTTER_ID = "fa812bfe-b295-4cca-9c2f-fdf01028cb46"
SUBAGENTS = ("a93ccab", "acompact-70d8e7")


def corpus_tree(corpus: Path, root: Path) -> Path:
    """Links to every corpus file under ``root/flat``, except spotter's: its session file
    and sub-agent files under ``root/project`` as Claude Code lays them out
    (``<id>.jsonl`` and ``<id>/subagents/agent-<id>.jsonl``). Returns ``root``."""
    flat = root / "flat"
    project = root / "project"
    (project / SPOTTER_ID / "subagents").mkdir(parents=True)
    flat.mkdir()
    for path in sorted(corpus.rglob("*")):
        if not path.is_file():
            continue
        if path.name.startswith(SPOTTER):
            continue
        (flat / f"{path.parent.name}__{path.name}").symlink_to(path)
    cc = corpus / "claude-code"
    (project / f"{SPOTTER_ID}.jsonl").symlink_to(cc / f"{SPOTTER}.jsonl")
    for agent in SUBAGENTS:
        (project / SPOTTER_ID / "subagents" / f"agent-{agent}.jsonl").symlink_to(
            cc / f"{SPOTTER}_subagents_agent-{agent}.jsonl"
        )
    return root


def run(*argv: str) -> tuple[int, str, str]:
    """``ctxviewer ARGV`` in this process: status, standard output and error."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def run_json(*argv: str) -> Any:
    status, out, err = run(*argv)
    assert status == 0, err
    return json.loads(out)


def read_table(dataset: Path, table: str) -> list[dict[str, Any]]:
    """A table's rows, read as a hive-partitioned pyarrow dataset (``agent`` and ``date``
    added, typed as docs/parquet.md says)."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    hive = ds.partitioning(
        pa.schema([("agent", pa.string()), ("date", pa.date32())]), flavor="hive"
    )
    return ds.dataset(dataset / table, format="parquet", partitioning=hive).to_table().to_pylist()


def query(sql: str, dataset: Path, tmp: Path) -> list[dict[str, Any]]:
    """``ctxviewer query`` on ``sql`` (text or a path), the rows as dicts."""
    path = Path(sql) if sql.endswith(".sql") else tmp / "q.sql"
    if path != Path(sql):
        path.write_text(sql, encoding="utf-8")
    out = run_json("query", str(path), str(dataset), "--json")
    names = [c["name"] for c in out["columns"]]
    return [dict(zip(names, row, strict=True)) for row in out["rows"]]
