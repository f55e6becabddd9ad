"""OpenCode: its SQLite database (1.2 and later: ``opencode.db`` under
``$XDG_DATA_HOME/opencode``, tables ``session``, ``message`` and ``part`` with JSON in
``data``) and its earlier JSON files (``storage/session/<project>/<ses>.json`` with the
messages and parts in folders beside). The tests that recognise them; the readers are
``opencode.database`` and ``opencode.files``, both building requests with
``opencode.session``."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from ctxviewer.ingest.base import Format, Head

SQLITE_MAGIC = b"SQLite format 3\x00"
TABLES = ("session", "message", "part")


def opencode_database(head: Head) -> bool:
    if not head.text.startswith(SQLITE_MAGIC.decode("ascii")):
        return False
    if all(f"CREATE TABLE `{t}`" in head.text for t in TABLES):
        return True
    return _tables(head.path) >= set(TABLES)  # the schema beyond the head


def _tables(path: str) -> set[str]:
    """The tables of an SQLite file, read without writing anything beside it
    (``immutable``: no lock, no ``-shm``)."""
    try:
        uri = Path(path).resolve().as_uri() + "?immutable=1"
        with closing(sqlite3.connect(uri, uri=True)) as db:
            rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    except sqlite3.Error:
        return set()
    return {r[0] for r in rows}


def opencode_session(head: Head) -> bool:
    doc = head.document
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("id"), str)
        and doc["id"].startswith("ses_")
        and "projectID" in doc
        and isinstance(doc.get("time"), dict)
    )


DATABASE = Format(
    "opencode-db",
    "OpenCode database",
    "$XDG_DATA_HOME/opencode/opencode.db (OpenCode 1.2+: SQLite, read from a copy with its "
    "write-ahead log)",
    True,
    opencode_database,
    "ctxviewer.ingest.opencode.database",
    own_document=True,
    magic=SQLITE_MAGIC,
)
SESSION = Format(
    "opencode-session",
    "OpenCode session (JSON files)",
    "$XDG_DATA_HOME/opencode/storage/session/<project>/ses_*.json (OpenCode 1.1 and "
    "earlier), read with its message and part files",
    True,
    opencode_session,
    "ctxviewer.ingest.opencode.files",
    own_document=True,
)
