"""``ctxviewer query``: its text table, CSV and errors; a table with no file is an empty
view of the same columns."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from team_data import run

from ctxviewer.analysis.dataset.schema import PARTITION, TABLES
from ctxviewer.resources import demo_session_path

SQL = (
    "SELECT agent, date, COUNT(*) AS requests, SUM(cost_usd) AS cost_usd,\n"
    "       MIN(sent_at) AS first_sent, MAX(failure) AS failure\n"
    "FROM requests GROUP BY agent, date"
)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("query") / "ds"
    assert run("export", str(demo_session_path()), "--parquet", str(out))[0] == 0
    return out


def _sql(tmp_path: Path, text: str) -> str:
    path = tmp_path / "q.sql"
    path.write_text(text)
    return str(path)


def test_text_table(dataset: Path, tmp_path: Path) -> None:
    status, out, err = run("query", _sql(tmp_path, SQL), str(dataset))
    assert status == 0 and err == ""
    header, rule, row, count = out.splitlines()
    assert header.split() == ["agent", "date", "requests", "cost_usd", "first_sent", "failure"]
    assert set(rule.replace(" ", "")) == {"-"}
    assert row.split()[:3] == ["claude-code", "2025-11-18", "55"]
    assert row.endswith("NULL") and "2025-11-18T13:42:07.318000+00:00" in row
    assert row.index("55") + 2 == header.index("requests") + len("requests")  # right-aligned
    assert count == "(1 row)"


def test_csv(dataset: Path, tmp_path: Path) -> None:
    status, out, _ = run("query", _sql(tmp_path, SQL), str(dataset), "--csv")
    assert status == 0
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["agent", "date", "requests", "cost_usd", "first_sent", "failure"]
    assert rows[1][:3] == ["claude-code", "2025-11-18", "55"] and rows[1][5] == ""
    assert abs(float(rows[1][3]) - 2.11661205) < 1e-6  # insights --json's total_usd


def test_a_table_without_files_is_an_empty_view(tmp_path: Path) -> None:
    dataset = tmp_path / "ds"
    (dataset / "items").mkdir(parents=True)
    for table, columns in TABLES.items():
        status, out, err = run(
            "query", _sql(tmp_path, f"SELECT * FROM {table}"), str(dataset), "--csv"
        )
        assert status == 0, err
        assert out.splitlines() == [",".join(c.name for c in (*columns, *PARTITION))]


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("SELECT nosuch FROM requests", 'Referenced column "nosuch" not found'),
        ("SELEC 1", "syntax error"),
    ],
)
def test_sql_errors_are_one_line(dataset: Path, tmp_path: Path, sql: str, message: str) -> None:
    path = _sql(tmp_path, sql)
    status, out, err = run("query", path, str(dataset))
    assert status == 2 and out == ""
    assert err.startswith(f"ctxviewer: {path}: ") and message in err and err.count("\n") == 1


def test_bad_arguments(dataset: Path, tmp_path: Path) -> None:
    sql = _sql(tmp_path, "SELECT 1")
    status, _, err = run("query", str(tmp_path / "none.sql"), str(dataset))
    assert status == 2 and "none.sql" in err
    status, _, err = run("query", sql, str(tmp_path / "nowhere"))
    assert status == 2 and "not a dataset" in err
    status, _, err = run("query", sql, str(dataset), "--json", "--csv")
    assert status == 2 and "not allowed with" in err
