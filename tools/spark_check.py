"""Run every shipped query (docs/queries/*.sql) on Spark SQL and on DuckDB over one
dataset, and say whether each gives the same columns and rows on both.

    /path/to/spark-python tools/spark_check.py DATASET [--python PROJECT_PYTHON]
        [--queries DIR] [--timeout SECONDS]

Run it under a Python that has pyspark (a separate environment: pyspark is no
dependency of ctxviewer, about 300 MB, and needs Java 17 or later). Spark runs in
this process, as docs/parquet.md shows it ("The same SQL on other engines"): a
``local[2]`` session in UTC, each table read with
``spark.read.option("basePath", DIR/t).parquet(DIR/t)``. DuckDB runs as ``ctxviewer
query FILE DATASET --json`` under ``--python`` (the project's Python, by default
``.venv/bin/python`` of this checkout).

The same means: the same column names in the same order, the same number of rows in
the same order (NULLs sorted where the other engine sorts them), and in each cell the
same value: strings, booleans, dates and integers equal, floating-point numbers within
1e-9 relative, an integer never where the other engine gives a floating-point number.

One line per query, ``same`` or ``DIFFERENT`` (with the first differences under it),
then a summary. Exit status 0 when every query is the same on both, 1 when one
differs or fails on an engine, 2 on bad arguments (no dataset, no pyspark, no
project Python), 3 when ``--timeout`` ran out.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import threading
import time
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TABLES = ("sessions", "requests", "categories", "items")
REL_TOL = 1e-9
SHOWN = 5  # differences shown per query


def _args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("dataset", type=Path, help="the folder `ctxviewer export --parquet` wrote")
    p.add_argument(
        "--python",
        type=Path,
        default=ROOT / ".venv" / "bin" / "python",
        help="the Python that has ctxviewer and its team extra (DuckDB); "
        "default: .venv/bin/python of this checkout",
    )
    p.add_argument(
        "--queries",
        type=Path,
        default=ROOT / "docs" / "queries",
        help="the folder of *.sql files to run (default: docs/queries)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=1200,
        help="stop with exit status 3 after this many seconds (default 1200)",
    )
    return p.parse_args(argv)


def _fail(message: str) -> int:
    print(f"spark_check: {message}", file=sys.stderr)
    return 2


# --- values as `ctxviewer query --json` writes them ---------------------------------


def plain(v: Any) -> Any:
    """A Spark value as DuckDB's result is written as JSON (commands/result_table.py):
    dates and times as ISO 8601, decimals as floats, records as objects."""
    if v is None or isinstance(v, bool | int | float | str):
        return v
    if isinstance(v, Decimal):
        return float(v)
    if isinstance(v, datetime):
        # pyspark gives a naive datetime in this process's zone, UTC (see main)
        return (v if v.tzinfo else v.replace(tzinfo=UTC)).isoformat()
    if isinstance(v, date):
        return v.isoformat()
    if hasattr(v, "asDict"):  # a Row: a struct
        return {k: plain(x) for k, x in v.asDict().items()}
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [plain(x) for x in v]
    if isinstance(v, bytes | bytearray):
        return bytes(v).hex()
    return str(v)


def _kind(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "floating"
    return type(v).__name__


def differs(duck: Any, spark: Any) -> str | None:
    """Why two cells are not the same, or None when they are."""
    if duck is None or spark is None:
        return None if duck is None and spark is None else "NULL on one engine only"
    if _kind(duck) != _kind(spark):
        return f"{_kind(duck)} on DuckDB, {_kind(spark)} on Spark"
    if isinstance(duck, float):
        if math.isnan(duck) and math.isnan(spark):
            return None
        return None if math.isclose(duck, spark, rel_tol=REL_TOL, abs_tol=0.0) else "values"
    if isinstance(duck, list):
        if len(duck) != len(spark):
            return "list lengths"
        return next((d for d in map(differs, duck, spark) if d), None)
    if isinstance(duck, dict):
        if list(duck) != list(spark):
            return "record fields"
        return next((d for d in (differs(duck[k], spark[k]) for k in duck) if d), None)
    return None if duck == spark else "values"


def compare(duck: dict[str, Any], spark: dict[str, Any]) -> list[str]:
    """The differences between two results ({"columns": [names], "rows": [[…]]})."""
    if duck["columns"] != spark["columns"]:
        return [f"columns: DuckDB {duck['columns']}, Spark {spark['columns']}"]
    out = []
    if len(duck["rows"]) != len(spark["rows"]):
        out.append(f"rows: {len(duck['rows'])} on DuckDB, {len(spark['rows'])} on Spark")
    for i, (d_row, s_row) in enumerate(zip(duck["rows"], spark["rows"], strict=False)):
        for name, d, s in zip(duck["columns"], d_row, s_row, strict=True):
            why = differs(d, s)
            if why:
                out.append(f"row {i} {name}: DuckDB {d!r}, Spark {s!r} ({why})")
    return out


# --- the two engines ---------------------------------------------------------------


def duckdb_result(python: Path, sql: Path, dataset: Path, timeout: float) -> dict[str, Any]:
    """``ctxviewer query SQL DATASET --json`` under the project's Python."""
    done = subprocess.run(
        [str(python), "-m", "ctxviewer", "query", str(sql), str(dataset), "--json"],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip() or f"exit status {done.returncode}")
    out = json.loads(done.stdout)
    return {"columns": [c["name"] for c in out["columns"]], "rows": out["rows"]}


def spark_session() -> Any:
    """A local Spark session with the tables, exactly as docs/parquet.md shows it."""
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("ctxviewer spark_check")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def register_tables(spark: Any, dataset: Path) -> list[str]:
    """Each table as a temporary view, read as docs/parquet.md reads it; a table with no
    file yet (a dataset of transcripts has no items) as an empty view of its columns,
    which Spark cannot infer from no file. Returns the tables made empty."""
    empty = []
    for t in TABLES:
        folder = dataset / t
        if folder.is_dir() and any(folder.rglob("*.parquet")):
            spark.read.option("basePath", f"{dataset}/{t}").parquet(
                f"{dataset}/{t}"
            ).createOrReplaceTempView(t)
        else:
            spark.createDataFrame([], _ddl(t)).createOrReplaceTempView(t)
            empty.append(t)
    return empty


def _ddl(table: str) -> str:
    """The table's columns as a Spark DDL string, from ctxviewer's own schema."""
    sys.path.insert(0, str(ROOT))
    try:
        from ctxviewer.analysis.dataset import schema
    finally:
        sys.path.remove(str(ROOT))
    types = {
        schema.STRING: "STRING",
        schema.INT: "BIGINT",
        schema.FLOAT: "DOUBLE",
        schema.BOOL: "BOOLEAN",
        schema.TIMESTAMP: "TIMESTAMP",
        schema.DATE: "DATE",
        schema.STRINGS: "ARRAY<STRING>",
    }

    def ddl_type(c: Any) -> str:
        if c.type == schema.STRUCTS:
            return "ARRAY<STRUCT<" + ", ".join(f"{n}: {types[t]}" for n, t in c.fields) + ">>"
        return types[c.type]

    return ", ".join(
        f"`{c.name}` {ddl_type(c)}" for c in (*schema.TABLES[table], *schema.PARTITION)
    )


def spark_result(spark: Any, sql: Path) -> dict[str, Any]:
    df = spark.sql(sql.read_text(encoding="utf-8"))
    return {"columns": list(df.columns), "rows": [[plain(v) for v in r] for r in df.collect()]}


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    if not any((args.dataset / t).is_dir() for t in TABLES):
        return _fail(f"{args.dataset}: not a dataset (no {', '.join(TABLES)} folder in it)")
    if not args.python.is_file():
        return _fail(f"{args.python}: no such Python (give the project's with --python)")
    queries = sorted(args.queries.glob("*.sql"))
    if not queries:
        return _fail(f"{args.queries}: no *.sql file in it")
    try:
        import pyspark
    except ImportError:
        return _fail(f"no pyspark in {sys.executable} (pip install pyspark, in its own venv)")

    def give_up() -> None:
        print(
            f"spark_check: stopped after {args.timeout:g} s (--timeout)",
            file=sys.stderr,
            flush=True,
        )
        os._exit(3)

    watchdog = threading.Timer(args.timeout, give_up)
    watchdog.daemon = True
    watchdog.start()
    # pyspark turns timestamps into naive datetimes in the process's zone: make it UTC
    os.environ["TZ"] = "UTC"
    time.tzset()
    started = time.monotonic()
    spark = spark_session()
    try:
        empty = register_tables(spark, args.dataset)
        print(
            f"Spark {spark.version} (pyspark {pyspark.__version__}), local[2], session time "
            f"zone {spark.conf.get('spark.sql.session.timeZone')}, ANSI mode "
            f"{spark.conf.get('spark.sql.ansi.enabled')}; dataset {args.dataset}"
            + (f" (no files: {', '.join(empty)})" if empty else "")
        )
        failed = 0
        for sql in queries:
            try:
                duck = duckdb_result(args.python, sql, args.dataset, args.timeout)
            except (RuntimeError, subprocess.TimeoutExpired, ValueError) as e:
                print(f"DIFFERENT  {sql.name}: DuckDB failed: {e}")
                failed += 1
                continue
            try:
                theirs = spark_result(spark, sql)
            except Exception as e:  # Spark's errors (parse, analysis, runtime) are many
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                print(f"DIFFERENT  {sql.name}: Spark failed: {first}")
                failed += 1
                continue
            problems = compare(duck, theirs)
            if problems:
                failed += 1
                print(f"DIFFERENT  {sql.name}: {len(problems)} difference(s)")
                for line in problems[:SHOWN]:
                    print(f"    {line}")
            else:
                n = len(duck["rows"])
                print(
                    f"same       {sql.name}: {n} row{'' if n == 1 else 's'} x "
                    f"{len(duck['columns'])} columns"
                )
    finally:
        spark.stop()
    print(
        f"{len(queries) - failed} of {len(queries)} queries the same on Spark and DuckDB "
        f"({time.monotonic() - started:.0f} s)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
