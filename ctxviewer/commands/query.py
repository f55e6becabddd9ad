"""``ctxviewer query FILE.sql DIR``: one SQL query over a dataset ``export`` wrote, on
DuckDB in this process (docs/parquet.md, the shipped questions: docs/queries/).

The query names the tables ``sessions``, ``requests``, ``categories`` and ``items``:
views over ``DIR/<table>/**/*.parquet`` with the hive partition columns ``agent``
(VARCHAR) and ``date`` (DATE). A table with no file yet is an empty view of the
same columns. Text table, ``--json`` (docs/json.md) or ``--csv``.

A query file is shared like a script (a team's ``queries/``), so it runs boxed
in: one SELECT, reading the dataset and nothing else. DuckDB's own file-system
guard does that (``enable_external_access`` off, the dataset as the only
``allowed_directories``, the configuration locked, no extension installed or
loaded, no spill files), and the statement is checked to be a single SELECT,
so nothing is written even inside the dataset.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from ctxviewer.analysis.dataset import schema
from ctxviewer.commands.common import UsageError, add_json_argument, print_json

HELP = "run a SQL file on DuckDB over the tables an export wrote (docs/queries/ has some)"

GLOB_CHARS = frozenset("*?[]{}")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "sql",
        metavar="FILE.sql",
        help="the query: standard SQL over the tables sessions, requests, "
        "categories, items (docs/parquet.md)",
    )
    p.add_argument("dataset", metavar="DIR", help="the folder `export --parquet DIR` wrote")
    out = p.add_mutually_exclusive_group()
    add_json_argument(out, "print the result as JSON")
    out.add_argument("--csv", action="store_true", help="print the result as CSV, with a header")


def duckdb_type(type_name: str, fields: tuple[tuple[str, str], ...] = ()) -> str:
    if type_name == schema.STRUCTS:
        return "STRUCT(" + ", ".join(f"{n} {duckdb_type(t)}" for n, t in fields) + ")[]"
    return {
        schema.STRING: "VARCHAR",
        schema.INT: "BIGINT",
        schema.FLOAT: "DOUBLE",
        schema.BOOL: "BOOLEAN",
        schema.TIMESTAMP: "TIMESTAMPTZ",
        schema.DATE: "DATE",
        schema.STRINGS: "VARCHAR[]",
    }[type_name]


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def view_sql(root: Path, table: str) -> str:
    """The view a query sees as ``table``."""
    folder = root / table
    files = sorted(str(p) for p in folder.rglob("*.parquet")) if folder.is_dir() else []
    if not files:
        cols = ", ".join(
            f'CAST(NULL AS {duckdb_type(c.type, c.fields)}) AS "{c.name}"'
            for c in (*schema.TABLES[table], *schema.PARTITION)
        )
        return f"CREATE VIEW {table} AS SELECT {cols} WHERE false"
    where = (
        f"[{', '.join(map(_literal, files))}]"
        if GLOB_CHARS & set(str(folder))
        else _literal(f"{folder}/**/*.parquet")
    )
    return (
        f"CREATE VIEW {table} AS SELECT * FROM read_parquet({where}, hive_partitioning = "
        "true, hive_types = {'agent': VARCHAR, 'date': DATE}, union_by_name = true)"
    )


# Set before the user's SQL runs, in this order (a setting cannot change once external
# access is off, and none can once the configuration is locked).
CONNECT_CONFIG = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "allow_unsigned_extensions": False,
}


# the settings a query may still SET: how it computes, not what it reaches
QUERY_SETTINGS = ("integer_division", "default_order", "default_null_order", "TimeZone")


def _sandbox(con: Any, root: Path) -> None:
    """Let ``con`` read ``root`` (the dataset) and nothing else, for good."""
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET temp_directory = ''")  # no spill files anywhere
    con.execute(f"SET allowed_configs = [{', '.join(map(_literal, QUERY_SETTINGS))}]")
    con.execute(f"SET allowed_directories = [{_literal(str(root) + os.sep)}]")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def _one_select(con: Any, duckdb: Any, sql: str) -> None:
    """Raise ``UsageError`` unless ``sql`` is one SELECT (WITH, FROM-first, DESCRIBE,
    SUMMARIZE and VALUES are SELECTs too), after any SET of ``QUERY_SETTINGS``."""
    kinds = [s.type for s in con.extract_statements(sql)]
    if not kinds:
        raise UsageError("holds no SQL statement")
    select, settings = duckdb.StatementType.SELECT, duckdb.StatementType.SET
    others = [k for k in kinds[:-1] if k != settings] + ([kinds[-1]] if kinds[-1] != select else [])
    if others:
        name = getattr(others[0], "name", str(others[0]))
        raise UsageError(
            f"holds a {name} statement: a query is one SELECT (after SETs of "
            f"{', '.join(QUERY_SETTINGS)}); it reads the dataset and writes "
            "nothing"
        )


def run_query(sql: str, root: Path) -> tuple[list[tuple[str, str]], list[tuple[Any, ...]]]:
    """``sql`` run over the dataset at ``root``: its columns (name, DuckDB type) and rows.

    It may read the files under ``root`` and nothing else (``_sandbox``)."""
    from ctxviewer.commands.team_extra import require

    duckdb = require("duckdb", "query")
    root = root.resolve()
    # no extension is fetched from the network: Parquet and time zones are built in
    con = duckdb.connect(config=CONNECT_CONFIG)
    try:
        _sandbox(con, root)
        for table in schema.TABLES:
            con.execute(view_sql(root, table))
        _one_select(con, duckdb, sql)
        result = con.execute(sql)
        if result.description is None:
            return [], []
        columns = [(d[0], str(d[1])) for d in result.description]
        return columns, result.fetchall()
    except duckdb.Error as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UsageError(first) from None
    finally:
        con.close()


def run(args: argparse.Namespace) -> int:
    from ctxviewer.commands.result_table import csv_text, json_value, text_table
    from ctxviewer.commands.team_extra import require

    require("duckdb", "query")
    try:
        sql = Path(args.sql).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"{args.sql}: {getattr(e, 'strerror', None) or e}") from None
    root = Path(args.dataset)
    tables = schema.TABLES
    if not root.is_dir() or not any((root / t).is_dir() for t in tables):
        raise UsageError(
            f"{args.dataset}: not a dataset (no {', '.join(tables)} folder in it; "
            "`ctxviewer export PATHS --parquet DIR` writes one)"
        )
    try:
        columns, rows = run_query(sql, root)
    except UsageError as e:
        raise UsageError(f"{args.sql}: {e}") from None
    if args.json:
        print_json(
            {
                "query": args.sql,
                "dataset": args.dataset,
                "columns": [{"name": n, "type": t} for n, t in columns],
                "rows": [[json_value(v) for v in row] for row in rows],
            }
        )
    elif args.csv:
        sys.stdout.write(csv_text([n for n, _ in columns], rows))
    else:
        sys.stdout.write(text_table([n for n, _ in columns], rows))
    return 0
