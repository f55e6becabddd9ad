"""The team dataset on disk: one Parquet file per session file and table, partitioned
hive-style (docs/parquet.md).

``DIR/<table>/agent=<id>/date=<YYYY-MM-DD>/<file key>-<n>.parquet``: ``<file key>``
identifies the session file (its absolute path), ``<n>`` the session in it. Writing a
session file's rows first removes every file of that key, in every table and
partition: exporting a file again replaces its rows, never adds to them. Files are
written under a hidden name, then renamed (a reader never sees half a file).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ctxviewer.analysis.dataset.rows import SessionRows
from ctxviewer.analysis.dataset.schema import (
    BOOL,
    DATE,
    FLOAT,
    INT,
    NULL_PARTITION,
    STRING,
    STRINGS,
    STRUCTS,
    TABLES,
    TIMESTAMP,
    Column,
)
from ctxviewer.commands.team_extra import require
from ctxviewer.errors import UsageError


def arrow_type(pa: Any, type_name: str, fields: tuple[tuple[str, str], ...] = ()) -> Any:
    scalars = {STRING: pa.string(), INT: pa.int64(), FLOAT: pa.float64(), BOOL: pa.bool_(),
               TIMESTAMP: pa.timestamp("us", tz="UTC"), DATE: pa.date32(),
               STRINGS: pa.list_(pa.string())}
    if type_name == STRUCTS:
        return pa.list_(pa.struct([(n, arrow_type(pa, t)) for n, t in fields]))
    return scalars[type_name]


def arrow_schema(pa: Any, columns: tuple[Column, ...]) -> Any:
    return pa.schema([(c.name, arrow_type(pa, c.type, c.fields)) for c in columns])


class ParquetStore:
    """A dataset folder that session files' rows are written into."""

    def __init__(self, root: str) -> None:
        self.pa = require("pyarrow", "export")
        self.pq = require("pyarrow.parquet", "export")
        self.root = Path(root)
        if self.root.exists() and not self.root.is_dir():
            raise UsageError(f"--parquet {root}: not a folder")
        try:
            for table in TABLES:
                (self.root / table).mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UsageError(f"--parquet {root}: {e.strerror or e}") from None
        self.schemas = {t: arrow_schema(self.pa, cols) for t, cols in TABLES.items()}
        self._existing = self._index()

    def _index(self) -> dict[str, list[Path]]:
        """Files already in the dataset, by file key."""
        found: dict[str, list[Path]] = {}
        for table in TABLES:
            for path in (self.root / table).rglob(".*.parquet.tmp"):  # an export cut short
                path.unlink(missing_ok=True)
            for path in (self.root / table).rglob("*.parquet"):
                key = path.stem.rpartition("-")[0]
                if key:
                    found.setdefault(key, []).append(path)
        return found

    def replace(self, file_key: str, sessions: list[SessionRows]) -> None:
        """The rows of one session file, in place of what an earlier export wrote for it."""
        for old in self._existing.pop(file_key, []):
            old.unlink(missing_ok=True)
            for folder in (old.parent, old.parent.parent):  # date=…, agent=… left empty
                with contextlib.suppress(OSError):
                    folder.rmdir()
        for rows in sessions:
            part = f"agent={quote(rows.agent, safe='')}/date=" + \
                (rows.day.isoformat() if rows.day else NULL_PARTITION)
            for table, columns in rows.tables.items():
                if not columns["session_key"]:
                    continue
                folder = self.root / table / part
                folder.mkdir(parents=True, exist_ok=True)
                data = self.pa.table(columns, schema=self.schemas[table])
                target = folder / f"{rows.key}.parquet"
                hidden = folder / f".{rows.key}.parquet.tmp"
                self.pq.write_table(data, hidden)
                os.replace(hidden, target)
