"""docs/parquet.md lists every column of every table with its type, the shipped queries
are all listed there, and they keep to SQL that DuckDB, Spark and Trino share (that
they divide as Trino does is checked by running them: tests/core/test_queries.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ctxviewer.analysis.dataset.schema import PARTITION, TABLES

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGE = DOCS / "parquet.md"


def doc_tables() -> dict[str, dict[str, str]]:
    """Section (``### `name` `` or ``### Partition columns``) -> column -> type cell."""
    tables: dict[str, dict[str, str]] = {}
    section = None
    part = ""
    for line in PAGE.read_text("utf-8").splitlines():
        heading = re.match(r"### (?:`([^`]+)`|(Partition columns))", line)
        if line.startswith("## "):
            part, section = line, None
        elif heading and part == "## The tables":
            section = heading.group(1) or "partition"
            tables[section] = {}
        row = re.match(r"\| `([^`]+)` \| ([^|]*) \|", line)
        if row and section is not None:
            tables[section][row.group(1)] = row.group(2).strip()
    return tables


def test_every_column_is_documented_with_its_type() -> None:
    tables = doc_tables()
    assert tables.pop("partition") == {c.name: c.type_name for c in PARTITION}
    assert set(tables) == set(TABLES)
    for name, columns in TABLES.items():
        assert tables[name] == {c.name: c.type_name for c in columns}, name
        assert list(tables[name]) == [c.name for c in columns]  # in the files' order


def test_every_shipped_query_is_listed() -> None:
    listed = set(re.findall(r"`([a-z_]+\.sql)`", PAGE.read_text("utf-8")))
    assert listed == {p.name for p in (DOCS / "queries").glob("*.sql")}


# what one engine has and another lacks, or reads otherwise
NOT_PORTABLE = {
    r"::": "a DuckDB / Postgres cast",
    r"\"": "a quoted identifier (Spark quotes with backticks)",
    r"`": "a backtick identifier",
    r"\bILIKE\b|\bQUALIFY\b|\bEXCLUDE\b|\bREPLACE\s*\(": "not in every engine",
    r"\bFILTER\s*\(": "an aggregate FILTER clause (CASE works everywhere)",
    r"\b(read_parquet|strftime|epoch|list_\w+|struct_\w+|unnest|explode)\b": "an engine's own "
    "function",
    r"\bDATE_TRUNC\b|\bDATEDIFF\b|\bDATE_DIFF\b": "date functions differ between engines",
}
# reserved words of SQL:2016, Trino, Spark (ANSI mode) or DuckDB that a column might be
# named: no column is, so a query never quotes one
RESERVED = {
    "all",
    "and",
    "as",
    "between",
    "by",
    "case",
    "cast",
    "check",
    "column",
    "create",
    "cross",
    "cube",
    "current_date",
    "current_time",
    "current_timestamp",
    "current_user",
    "default",
    "delete",
    "desc",
    "distinct",
    "do",
    "else",
    "end",
    "except",
    "exists",
    "extract",
    "false",
    "fetch",
    "for",
    "from",
    "full",
    "grant",
    "group",
    "grouping",
    "having",
    "in",
    "inner",
    "insert",
    "intersect",
    "interval",
    "into",
    "is",
    "join",
    "lateral",
    "leading",
    "left",
    "like",
    "limit",
    "localtime",
    "natural",
    "not",
    "null",
    "of",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "outer",
    "over",
    "partition",
    "range",
    "right",
    "rollup",
    "row",
    "rows",
    "select",
    "session_user",
    "some",
    "start",
    "table",
    "then",
    "time",
    "to",
    "trailing",
    "true",
    "union",
    "unique",
    "unnest",
    "user",
    "using",
    "values",
    "when",
    "where",
    "window",
    "with",
}


def test_no_column_is_a_reserved_word() -> None:
    names = {c.name for columns in (*TABLES.values(), PARTITION) for c in columns}
    names |= {f for columns in TABLES.values() for c in columns for f, _ in c.fields}
    assert names & RESERVED == set()


@pytest.mark.parametrize("path", sorted((DOCS / "queries").glob("*.sql")), ids=lambda p: p.name)
def test_queries_keep_to_portable_sql(path: Path) -> None:
    text = path.read_text("utf-8")
    assert text.startswith("-- ")  # says what it answers
    code = "\n".join(line.split("--")[0] for line in text.splitlines())
    for pattern, why in NOT_PORTABLE.items():
        found = re.search(pattern, code, re.IGNORECASE)
        assert found is None, f"{path.name}: {found.group(0)!r}: {why}"
