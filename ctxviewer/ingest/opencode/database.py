"""OpenCode's SQLite database (``opencode.db``), read from a consistent copy.

OpenCode keeps the database in WAL mode: the last turns may sit only in
``opencode.db-wal`` (the ``.db`` alone lacked the last turn of a three-turn session),
and even a read-only open of the live file rewrites ``opencode.db-shm``. ctxviewer
never writes to an agent's files: it copies the ``.db`` and its ``-wal`` into a
temporary folder (again when either changed during the copy), opens the copy, and
reads the ``session``, ``message`` and ``part`` tables, whose ``data`` column holds
each row's JSON. Every session in it is read: a database holds all of OpenCode's
sessions on the machine, and the report splits them (each with its sub-agents).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from contextlib import closing
from typing import Any

import orjson

from ctxviewer.ingest.base import Head, Item, LoadError, compression, open_log
from ctxviewer.ingest.opencode import DATABASE, opencode_database
from ctxviewer.ingest.opencode.session import SessionBuilder, Stored
from ctxviewer.model import Skipped

COPY_TRIES = 5


def sources(path: str) -> tuple[str, ...]:
    """The database and its write-ahead log (``opencode.db-wal``; beside a compressed
    copy, ``opencode.db-wal.xz`` or ``.gz``)."""
    stem, dot, ext = path.rpartition(".")
    wals = [path + "-wal"] + ([f"{stem}-wal.{ext}"] if dot and ext in ("xz", "gz") else [])
    wal = next((w for w in wals if os.path.exists(w)), None)
    return (path, wal) if wal else (path,)


def _copy_file(src: str, dst: str) -> None:
    """``src`` copied to ``dst``, decompressed when it is gzip or xz."""
    if compression(src) is None:
        shutil.copyfile(src, dst)
        return
    with open_log(src) as f, open(dst, "wb") as out:
        shutil.copyfileobj(f, out)


def _stamp(paths: tuple[str, ...]) -> tuple[tuple[int, int], ...]:
    out = []
    for p in paths:
        try:
            st = os.stat(p)
            out.append((st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((-1, -1))
    return tuple(out)


def _copy(path: str, folder: str) -> str:
    """Copy the database and its write-ahead log into ``folder``; copy again when
    either changed meanwhile. Returns the copy's path."""
    target = os.path.join(folder, "opencode.db")
    for _ in range(COPY_TRIES):
        files = sources(path)
        before = _stamp(files)
        _copy_file(path, target)
        if len(files) > 1:
            _copy_file(files[1], target + "-wal")
        elif os.path.exists(target + "-wal"):
            os.remove(target + "-wal")
        if _stamp(sources(path)) == before:
            break
    return target


def _rows(db: sqlite3.Connection, sql: str) -> list[dict[str, Any]]:
    out = []
    for row in db.execute(sql):
        try:
            data = orjson.loads(row[-1])
        except (orjson.JSONDecodeError, TypeError):
            continue
        if isinstance(data, dict):
            out.append({"_row": row[:-1], **data})
    return out


def read_document(path: str) -> dict[str, Any]:
    try:
        with tempfile.TemporaryDirectory(prefix="ctxviewer-opencode-") as folder:
            copy = _copy(path, folder)
            with closing(sqlite3.connect(copy)) as db:
                sessions = _session_rows(db)
                messages = _rows(db, "SELECT id, session_id, time_created, data FROM message")
                parts = _rows(
                    db, "SELECT id, message_id, session_id, data FROM part ORDER BY message_id, id"
                )
    except OSError as e:
        raise LoadError(f"cannot read {path}: {e.strerror or e}") from None
    except sqlite3.Error as e:
        raise LoadError(f"{path}: not an OpenCode database ({e})") from None
    for m in messages:
        m.setdefault("id", m["_row"][0])
        m.setdefault("sessionID", m["_row"][1])
        m.setdefault("time", {"created": m["_row"][2]})
    for p in parts:
        p.setdefault("id", p["_row"][0])
        p.setdefault("messageID", p["_row"][1])
    return {"sessions": sessions, "messages": messages, "parts": parts}


def _session_rows(db: sqlite3.Connection) -> list[dict[str, Any]]:
    cols = [r[1] for r in db.execute("PRAGMA table_info(session)")]
    want = [
        c for c in ("id", "parent_id", "version", "title", "directory", "time_created") if c in cols
    ]
    out = []
    for row in db.execute(f"SELECT {', '.join(want)} FROM session"):  # noqa: S608 - known names
        r = dict(zip(want, row, strict=True))
        out.append(
            {
                "id": r.get("id"),
                "parentID": r.get("parent_id"),
                "version": r.get("version"),
                "title": r.get("title"),
                "directory": r.get("directory"),
                "time": {"created": r.get("time_created")},
            }
        )
    return out


class DatabaseParser:
    def feed(self, line: int, record: Any) -> list[Item]:
        if not isinstance(record, dict):
            return [Skipped(line, "not an OpenCode database")]
        stored = {s["id"]: Stored(s) for s in record.get("sessions", []) if isinstance(s, dict)}
        lost = 0
        for m in record.get("messages", []):
            s = stored.get(m.get("sessionID"))
            if s is None:
                lost += 1
                continue
            s.messages.append(m)
        parts: dict[str, list[dict[str, Any]]] = {}  # by message id, shared by the sessions
        for p in record.get("parts", []):
            parts.setdefault(str(p.get("messageID")), []).append(p)
        for s in stored.values():
            s.parts = parts
        out: list[Item] = [Skipped(0, f"{lost} messages of no session")] if lost else []
        return out + SessionBuilder().requests(list(stored.values()))

    def finish(self) -> list[Item]:
        return []


class DatabaseReader:
    name, label = DATABASE.name, DATABASE.label
    description, document = DATABASE.description, DATABASE.document
    own_document = True

    def sniff(self, head: Head) -> bool:
        return opencode_database(head)

    def parser(self) -> DatabaseParser:
        return DatabaseParser()

    def read_document(self, path: str) -> dict[str, Any]:
        return read_document(path)

    def sources(self, path: str) -> tuple[str, ...]:
        return sources(path)


READER = DatabaseReader()
