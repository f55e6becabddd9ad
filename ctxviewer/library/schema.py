"""The library's SQLite database: its tables, and opening it.

- ``files``: every file found (session files and their sub-agent files), with
  the stat of its last read (``size``, ``mtime_ns``, ``inode``, ``ctime_ns``: what
  a rescan compares) and, for a bad file, why it cannot be read. A sub-agent file has
  ``parent``: the session file it belongs to. ``pending``: a session file whose rows
  the first pass of a large scan wrote, its full read (its text for search, the
  summary's details, its reader state) still to do (``scan.index_texts``).
- ``states``: the reader state kept for a file that may still grow (pickled,
  zlib-compressed ``ingest.follow.follower.Follower``).
- ``sessions``: one row per session (``part``: which session of a recording that
  holds several), with the columns lists sort and filter on and the whole
  ``SessionSummary.as_dict()`` as JSON.
- ``texts``: FTS5, one row per request with text: rowid = session id × 2^20 +
  request index. Contentless (it keeps the words' index, not the text): the text
  itself is in ``bodies``, zlib-compressed, with its CRC to tell a changed text
  without reading it; a row leaves ``texts`` by FTS5's ``delete`` command, which
  needs the text it was indexed with.
- ``chunk_texts``: FTS5 too, the same texts grouped by ``CHUNK`` requests: one
  document per 64 requests of a session (rowid = texts' rowid >> ``CHUNK_BITS``,
  so rowid >> ``SESSION_SHIFT`` is the session id), the requests' texts joined
  with ``BREAK`` between them (no phrase runs from one request into the next).
  Which sessions hold a word is then a few thousand rows to read, not one per
  request (``search.matching``). A document is always the join of the ``bodies``
  in its range: a changed request rewrites its chunk only.
- The folders the user added are not here but beside it (``folders``): a damaged
  index is deleted, they are not.

A file name that is no UTF-8 (Python holds its odd bytes as lone surrogates) cannot
be SQLite text: the tables keep such a name as its bytes, a BLOB (``to_db``,
``from_db``); every other name is text.

A schema change (``SCHEMA``) drops the index and builds it again (it is a cache),
except from schemas 2 and 3, brought up to date without reading a log again: 3
lacked ``files.ctime_ns`` and ``files.pending`` only (the next scan notes each
file's ctime; every file is read in full), 2 ``chunk_texts`` too (filled from
``bodies``).
"""

from __future__ import annotations

import os
import sqlite3
import zlib
from pathlib import Path

SCHEMA = 4
REQUEST_BITS = 20  # texts' rowid: session id << 20 | request index
MAX_REQUEST = (1 << REQUEST_BITS) - 1
CHUNK_BITS = 6  # chunk_texts' rowid: texts' rowid >> 6 (64 requests a document)
CHUNK = 1 << CHUNK_BITS
SESSION_SHIFT = REQUEST_BITS - CHUNK_BITS  # chunk_texts' rowid >> 14: the session id
BREAK = "\nctxviewerrequestbreak\n"  # between two requests' texts in a chunk's document

TABLES = """
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    parent TEXT,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    ctime_ns INTEGER,
    error TEXT,
    read_at REAL NOT NULL,
    pending INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS files_parent ON files(parent);
CREATE INDEX IF NOT EXISTS files_pending ON files(mtime_ns) WHERE pending = 1;
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
CREATE VIRTUAL TABLE IF NOT EXISTS chunk_texts USING fts5(
    body, content='', tokenize='unicode61 remove_diacritics 2');
"""


def to_db(path: str) -> str | bytes:
    """A file name as the tables keep it: text, or the bytes of a name that is no UTF-8."""
    if path.isascii():
        return path
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(path)
    return path


def from_db(value: str | bytes) -> str:
    """The file name ``to_db`` kept."""
    return os.fsdecode(value) if isinstance(value, bytes) else value


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating) the database at ``path``; an older schema is brought up to date
    (schema 2) or dropped and made anew, in one transaction: two connections opening
    it at once wait for each other, and a crash in there leaves the old version."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(str(path), timeout=30, isolation_level=None, check_same_thread=False)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=OFF")
        if _version(db) != SCHEMA:
            db.execute("BEGIN IMMEDIATE")
            try:
                _upgrade(db, _version(db))  # again: another connection may have done it
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
    except BaseException:
        db.close()  # a damaged file: closed before it is deleted and made anew
        raise
    return db


def _version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def _upgrade(db: sqlite3.Connection, version: int) -> None:
    if version == SCHEMA:
        return
    if version in (2, 3):  # the files' ctimes (4): noted by the next scan, no file read
        columns = {c for (_, c, *_) in db.execute("PRAGMA table_info(files)")}
        if "ctime_ns" not in columns:
            db.execute("ALTER TABLE files ADD COLUMN ctime_ns INTEGER")
        if "pending" not in columns:
            db.execute("ALTER TABLE files ADD COLUMN pending INTEGER NOT NULL DEFAULT 0")
        _create(db)
        if version == 2:  # the chunk index (3), from the texts kept
            fill_chunks(db)
    else:  # the folders the user added were moved out first (``folders``)
        tables = db.execute(
            "SELECT name, sql LIKE 'CREATE VIRTUAL%' FROM sqlite_master "
            "WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        ).fetchall()
        for name, _ in sorted(tables, key=lambda t: not t[1]):  # an FTS5 table takes its own
            db.execute(f'DROP TABLE IF EXISTS "{name}"')
        _create(db)
    db.execute(f"PRAGMA user_version={SCHEMA}")


def _create(db: sqlite3.Connection) -> None:
    for statement in TABLES.split(";"):  # executescript would commit the transaction
        if statement.strip():
            db.execute(statement)


def fill_chunks(db: sqlite3.Connection) -> None:
    """Index every chunk of ``bodies`` into ``chunk_texts`` (an index of schema 2)."""
    chunk, parts = -1, list[str]()
    for rowid, z in db.execute("SELECT id, z FROM bodies ORDER BY id"):
        if rowid >> CHUNK_BITS != chunk:
            if parts:
                db.execute(
                    "INSERT INTO chunk_texts (rowid, body) VALUES (?, ?)",
                    (chunk, BREAK.join(parts)),
                )
            chunk, parts = rowid >> CHUNK_BITS, []
        parts.append(zlib.decompress(z).decode())
    if parts:
        db.execute(
            "INSERT INTO chunk_texts (rowid, body) VALUES (?, ?)", (chunk, BREAK.join(parts))
        )
