"""A query's result for people (an aligned text table), for programs (JSON values) and
for spreadsheets (CSV)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

import orjson


def json_value(v: Any) -> Any:
    """A DuckDB value as JSON has it: decimals as floats, times as ISO 8601 strings."""
    if isinstance(v, Decimal):
        return float(v)
    if isinstance(v, datetime | date | time):
        return v.isoformat()
    if isinstance(v, timedelta):
        return v.total_seconds()
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, dict):
        return {str(k): json_value(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [json_value(x) for x in v]
    if v is None or isinstance(v, bool | int | float | str):
        return v
    return str(v)  # a UUID, an interval of months…


def cell(v: Any) -> str:
    """One value in the text table."""
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float | Decimal):
        x = float(v)
        if x != 0 and abs(x) < 0.01:
            return f"{x:.3g}"
        return f"{x:,.4f}".rstrip("0").rstrip(".")
    if isinstance(v, str):
        return v
    if isinstance(v, datetime | date | time):
        return v.isoformat()
    return orjson.dumps(json_value(v)).decode()


def _numeric(v: Any) -> bool:
    return isinstance(v, int | float | Decimal) and not isinstance(v, bool)


def text_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], width: int = 60) -> str:
    """Columns aligned (numbers to the right), a cell cut at ``width`` characters, and the
    number of rows."""
    if not columns:
        return ""
    cells = [[cell(v) for v in row] for row in rows]
    cells = [[c if len(c) <= width else c[: width - 1] + "…" for c in row] for row in cells]
    sizes = [max([len(name), *(len(row[i]) for row in cells)]) for i, name in enumerate(columns)]
    right = [
        bool(rows) and all(_numeric(row[i]) or row[i] is None for row in rows)
        for i in range(len(columns))
    ]

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            v.rjust(n) if r else v.ljust(n) for v, n, r in zip(values, sizes, right, strict=True)
        ).rstrip()

    out = [line(columns), "  ".join("-" * n for n in sizes)]
    out += [line(row) for row in cells]
    out.append(f"({len(rows):,} row{'' if len(rows) == 1 else 's'})")
    return "\n".join(out) + "\n"


def csv_text(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A header line, then one line per row; NULL is an empty field, a list or a record
    its JSON."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_csv_cell(v) for v in row])
    return buf.getvalue()


def _csv_cell(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list | tuple | dict):
        return orjson.dumps(json_value(v)).decode()
    return json_value(v)
