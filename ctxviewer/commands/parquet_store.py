"""The team dataset on disk: one Parquet file per session file and table, partitioned
hive-style (docs/parquet.md).

``DIR/<table>/agent=<id>/date=<YYYY-MM-DD>/<file key>-<n>.parquet``: ``<file key>``
identifies the session file (its absolute path), ``<n>`` the session in it. Writing a
session file's rows replaces every file of that key, in every table and partition:
exporting a file again replaces its rows, never adds to them. A session file's new
files are all written under hidden names first, then the old ones removed and the new
ones renamed (a reader never sees half a file, and an export stopped half-way leaves a
file's rows as they were or as they are now, bar a few renames). One export writes a
folder at a time: it holds ``DIR/.ctxviewer-export.lock`` while it runs.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import IO, Any
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
    scalars = {
        STRING: pa.string(),
        INT: pa.int64(),
        FLOAT: pa.float64(),
        BOOL: pa.bool_(),
        TIMESTAMP: pa.timestamp("us", tz="UTC"),
        DATE: pa.date32(),
        STRINGS: pa.list_(pa.string()),
    }
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
        self._lock = _lock(self.root)
        self.schemas = {t: arrow_schema(self.pa, cols) for t, cols in TABLES.items()}
        self._existing = self._index()

    def close(self) -> None:
        """Let another export write the folder."""
        self._lock.close()

    def __enter__(self) -> ParquetStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

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
        written: list[tuple[Path, Path]] = []  # (hidden, target)
        try:
            for rows in sessions:
                part = f"agent={quote(rows.agent, safe='')}/date=" + (
                    rows.day.isoformat() if rows.day else NULL_PARTITION
                )
                for table, columns in rows.tables.items():
                    if not columns["session_key"]:
                        continue
                    folder = self.root / table / part
                    folder.mkdir(parents=True, exist_ok=True)
                    data = self.pa.table(columns, schema=self.schemas[table])
                    hidden = folder / f".{rows.key}.parquet.tmp"
                    self.pq.write_table(data, hidden)
                    written.append((hidden, folder / f"{rows.key}.parquet"))
        except BaseException:
            for hidden, _ in written:
                hidden.unlink(missing_ok=True)
            raise
        targets = {target for _, target in written}
        self._remove([old for old in self._existing.pop(file_key, []) if old not in targets])
        for hidden, target in written:
            os.replace(hidden, target)

    def prune(self, exported: set[str]) -> list[str]:
        """Remove the rows of session files that no longer exist (keys not in ``exported``
        whose sessions' ``path`` is gone); returns those paths."""
        gone: list[str] = []
        for key, files in list(self._existing.items()):
            if key in exported:
                continue
            paths = {
                p
                for f in files
                if f.parts[-4] == "sessions"
                for p in self.pq.read_table(f, columns=["path"]).column("path").to_pylist()
            }
            if paths and not any(p and os.path.exists(p) for p in paths):
                self._remove(self._existing.pop(key))
                gone.extend(sorted(p for p in paths if p))
        return gone

    @staticmethod
    def _remove(files: list[Path]) -> None:
        for old in files:
            old.unlink(missing_ok=True)
            for folder in (old.parent, old.parent.parent):  # date=…, agent=… left empty
                with contextlib.suppress(OSError):
                    folder.rmdir()


def _lock(root: Path) -> IO[bytes]:
    """Hold ``root/.ctxviewer-export.lock`` (released when closed or when the process
    ends, however it ends); another export holding it is a ``UsageError``."""
    f = open(root / ".ctxviewer-export.lock", "ab")  # noqa: SIM115 - held until close()
    try:
        if sys.platform == "win32":
            import msvcrt

            msvcrt.locking(f.fileno(), msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        raise UsageError(
            f"--parquet {root}: another export is writing this folder; run one at a time"
        ) from None
    return f
