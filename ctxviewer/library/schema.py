"""The library's SQLite database: its tables, and opening it.

- ``files``: every file found (session files and their sub-agent files), with
  the stat of its last read (``size``, ``mtime_ns``, ``inode``: what a rescan
  compares) and, for a bad file, why it cannot be read. A sub-agent file has
  ``parent``: the session file it belongs to.
- ``states``: the reader state kept for a file that may still grow (pickled,
  zlib-compressed ``ingest.follow.Follower``).
- ``sessions``: one row per session (``part``: which session of a recording that
  holds several), with the columns lists sort and filter on and the whole
  ``SessionSummary.as_dict()`` as JSON.
- ``texts``: FTS5, one row per request with text: rowid = session id × 2^20 +
  request index. Contentless (it keeps the words' index, not the text): the text
  itself is in ``bodies``, zlib-compressed, with its CRC to tell a changed text
  without reading it; a row leaves ``texts`` by FTS5's ``delete`` command, which
  needs the text it was indexed with.
- ``folders``: the folders the user added.

A schema change (``SCHEMA``) drops the index and builds it again: it is a cache.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

SCHEMA = 2
REQUEST_BITS = 20  # texts' rowid: session id << 20 | request index
MAX_REQUEST = (1 << REQUEST_BITS) - 1

TABLES = """
CREATE TABLE IF NOT EXISTS folders (
    path TEXT PRIMARY KEY,
    added TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    parent TEXT,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    error TEXT,
    read_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS files_parent ON files(parent);
CREATE TABLE IF NOT EXISTS states (
    path TEXT PRIMARY KEY,
    blob BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    part INTEGER NOT NULL,
    parts INTEGER NOT NULL,
    agent TEXT NOT NULL,
    project TEXT,
    start TEXT,
    end_ TEXT,
    requests INTEGER NOT NULL,
    peak INTEGER,
    share REAL,
    cost REAL,
    cache REAL,
    compactions INTEGER NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    summary TEXT NOT NULL,
    series TEXT NOT NULL,
    UNIQUE(path, part)
);
CREATE TABLE IF NOT EXISTS bodies (
    id INTEGER PRIMARY KEY,
    crc INTEGER NOT NULL,
    z BLOB NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS texts USING fts5(
    body, content='', tokenize='unicode61 remove_diacritics 2');
"""


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating) the database at ``path``; an older schema is dropped and made anew."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(str(path), timeout=30, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA foreign_keys=OFF")
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version != SCHEMA:  # a crash in here leaves the old version: done again next time
        folders: list[tuple[str, str]] = []
        if version and _has_table(db, "folders"):
            folders = db.execute("SELECT path, added FROM folders").fetchall()
        names = [n for (n,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "AND name NOT LIKE 'texts_%'").fetchall()]
        for name in names:
            db.execute(f'DROP TABLE IF EXISTS "{name}"')
        db.executescript(TABLES)
        db.executemany("INSERT OR IGNORE INTO folders VALUES (?, ?)", folders)
        db.execute(f"PRAGMA user_version={SCHEMA}")
    return db


def _has_table(db: sqlite3.Connection, name: str) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() \
        is not None
