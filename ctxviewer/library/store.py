"""Write what a read found into the library's tables, one session file at a time.

Every change of one session file (its rows in ``files``, ``states``,
``sessions``, ``bodies`` and ``texts``) is made inside the caller's transaction, so a scan
killed half way leaves each file either as it was or as it is now. A read of the
rows only (the first pass of a large scan) drops the session's texts (from an earlier
read of a file that changed) and marks the file ``pending``.
"""

from __future__ import annotations

import sqlite3
import time
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ctxviewer.jsonish import printable
from ctxviewer.library.schema import (
    BREAK,
    CHUNK,
    CHUNK_BITS,
    MAX_REQUEST,
    REQUEST_BITS,
    to_db,
)

BATCH = 500  # rows of ``bodies`` read in one query

if TYPE_CHECKING:  # reading imports the analysis: kept off a rescan with nothing to read
    from ctxviewer.library.reading import JobResult, PartResult
    from ctxviewer.library.walk import Found


def apply(db: sqlite3.Connection, result: JobResult, group: Sequence[Found]) -> None:
    """Store ``result``, the read of ``group`` (a session file and its sub-agent files)."""
    now = time.time()
    parents = {f.path: f.parent for f in group}
    for res in result.files:
        if res.vanished:
            forget_file(db, res.path)
            continue
        path, parent = to_db(res.path), parents.get(res.path)
        pending = int(not result.full and res.path == result.path and res.error is None)
        db.execute(
            "INSERT INTO files (path, parent, size, mtime_ns, inode, ctime_ns, error, read_at, "
            "pending) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET "
            "parent=excluded.parent, size=excluded.size, mtime_ns=excluded.mtime_ns, "
            "inode=excluded.inode, ctime_ns=excluded.ctime_ns, error=excluded.error, "
            "read_at=excluded.read_at, pending=excluded.pending",
            (
                path,
                None if parent is None else to_db(parent),
                res.size,
                res.mtime_ns,
                res.inode,
                res.ctime_ns,
                None if res.error is None else printable(res.error),
                now,
                pending,
            ),
        )
        if res.state is not None:
            db.execute(
                "INSERT OR REPLACE INTO states (path, blob) VALUES (?, ?)", (path, res.state)
            )
        else:
            db.execute("DELETE FROM states WHERE path = ?", (path,))
        if res.path != result.path:  # a sub-agent file listed alone before its session came
            drop_sessions(db, res.path)
    if result.vanished or result.error is not None:
        drop_sessions(db, result.path)
        return
    project = group[0].project if group else None
    size = sum(f.size for f in result.files)
    mtime = max((f.mtime_ns for f in result.files), default=0)
    for i, part in enumerate(result.parts):
        sid = _put_session(db, result.path, i, len(result.parts), part, project, size, mtime)
        _put_texts(db, sid, part.texts)
    drop_sessions(db, result.path, keep=len(result.parts))


def _put_session(
    db: sqlite3.Connection,
    path: str,
    part: int,
    parts: int,
    p: PartResult,
    project: str | None,
    size: int,
    mtime_ns: int,
) -> int:
    import orjson  # with its uuid, platform, json: by the scan, not at the window's start

    s = p.summary
    project = s["project"] or project
    row = db.execute(
        "INSERT INTO sessions (path, part, parts, agent, project, start, end_, requests, peak, "
        "share, cost, cache, compactions, size, mtime_ns, summary, series) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(path, part) DO UPDATE SET parts=excluded.parts, agent=excluded.agent, "
        "project=excluded.project, start=excluded.start, end_=excluded.end_, "
        "requests=excluded.requests, peak=excluded.peak, share=excluded.share, "
        "cost=excluded.cost, cache=excluded.cache, compactions=excluded.compactions, "
        "size=excluded.size, mtime_ns=excluded.mtime_ns, summary=excluded.summary, "
        "series=excluded.series RETURNING id",
        (
            to_db(path),
            part,
            parts,
            s["agent"],
            None if project is None else to_db(project),
            s["start"],
            s["end"],
            s["requests"],
            s["peak_prompt_tokens"],
            s["peak_share"],
            s["cost_usd"],
            s["cache_hit_rate"],
            s["compactions_observed"],
            size,
            mtime_ns,
            _dumps(s),
            orjson.dumps(p.series).decode(),
        ),
    ).fetchone()
    return int(row[0])


def _dumps(summary: dict[str, object]) -> str:
    """The summary as JSON; its ``path`` (a name that may be no UTF-8) is the row's own."""
    import orjson  # by the scan, not at the window's start

    try:
        return orjson.dumps(summary).decode()
    except TypeError:  # a lone surrogate: a file name's byte that is no UTF-8
        return orjson.dumps(printable(summary)).decode()


def _put_texts(db: sqlite3.Connection, sid: int, texts: Sequence[str]) -> None:
    """The session's request texts: rows that changed are replaced, the rest kept (a grown
    file adds its new requests without indexing the old ones again); so are the chunks
    of ``chunk_texts`` that hold a changed row."""
    base = sid << REQUEST_BITS
    old = dict(
        db.execute(
            "SELECT id, crc FROM bodies WHERE id BETWEEN ? AND ?", (base, base + MAX_REQUEST)
        )
    )
    new = {base + i: t for i, t in enumerate(texts[: MAX_REQUEST + 1]) if t}
    crcs = {r: zlib.crc32(t.encode()) for r, t in new.items()}
    gone = [r for r, crc in old.items() if crcs.get(r) != crc]
    rows = [(r, crcs[r], t) for r, t in new.items() if old.get(r) != crcs[r]]
    chunks = sorted({r >> CHUNK_BITS for r in gone} | {r >> CHUNK_BITS for r, _, _ in rows})
    had = {r >> CHUNK_BITS for r in old}
    _unindex_chunks(db, [c for c in chunks if c in had])
    _drop_texts(db, gone)
    db.executemany(
        "INSERT INTO bodies (id, crc, z) VALUES (?, ?, ?)",
        [(r, crc, zlib.compress(t.encode(), 1)) for r, crc, t in rows],
    )
    db.executemany("INSERT INTO texts (rowid, body) VALUES (?, ?)", [(r, t) for r, _, t in rows])
    docs = []
    for c in chunks:  # a chunk wholly new is what was just stored; else read back
        doc = (
            _chunk_doc(db, c)
            if c in had
            else BREAK.join(
                new[r] for r in range(c << CHUNK_BITS, (c + 1) << CHUNK_BITS) if r in new
            )
        )
        if doc is not None:
            docs.append((c, doc))
    db.executemany("INSERT INTO chunk_texts (rowid, body) VALUES (?, ?)", docs)


def _chunk_doc(db: sqlite3.Connection, chunk: int) -> str | None:
    """``chunk_texts``' document of ``chunk``: its rows of ``bodies``, joined (None: none)."""
    parts = [
        zlib.decompress(z).decode()
        for (z,) in db.execute(
            "SELECT z FROM bodies WHERE id BETWEEN ? AND ? ORDER BY id",
            (chunk << CHUNK_BITS, (chunk << CHUNK_BITS) + CHUNK - 1),
        )
    ]
    return BREAK.join(parts) if parts else None


def _unindex_chunks(db: sqlite3.Connection, chunks: Sequence[int]) -> None:
    """Take chunks out of the contentless ``chunk_texts`` (before their bodies change)."""
    for c in chunks:
        doc = _chunk_doc(db, c)
        if doc is not None:
            db.execute(
                "INSERT INTO chunk_texts (chunk_texts, rowid, body) VALUES ('delete', ?, ?)",
                (c, doc),
            )


def _drop_texts(db: sqlite3.Connection, ids: Sequence[int]) -> None:
    """Take rows out of the contentless ``texts`` (with the text they were indexed with)."""
    texts = bodies(db, ids)
    db.executemany("INSERT INTO texts (texts, rowid, body) VALUES ('delete', ?, ?)", texts.items())
    db.executemany("DELETE FROM bodies WHERE id = ?", [(r,) for r in texts])


def bodies(db: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, str]:
    """The texts of ``rowids`` (those stored), ``BATCH`` to a query."""
    out: dict[int, str] = {}
    for at in range(0, len(rowids), BATCH):
        batch = list(rowids[at : at + BATCH])
        marks = ",".join("?" * len(batch))
        out.update(
            (r, zlib.decompress(z).decode())
            for r, z in db.execute(f"SELECT id, z FROM bodies WHERE id IN ({marks})", batch)
        )
    return out


def drop_sessions(db: sqlite3.Connection, path: str, keep: int = 0) -> None:
    """Remove the sessions of ``path`` from part ``keep`` on, and their texts."""
    for (sid,) in db.execute(
        "SELECT id FROM sessions WHERE path = ? AND part >= ?", (to_db(path), keep)
    ).fetchall():
        base = sid << REQUEST_BITS
        ids = [
            r
            for (r,) in db.execute(
                "SELECT id FROM bodies WHERE id BETWEEN ? AND ?", (base, base + MAX_REQUEST)
            )
        ]
        _unindex_chunks(db, sorted({r >> CHUNK_BITS for r in ids}))
        _drop_texts(db, ids)
        db.execute("DELETE FROM sessions WHERE id = ?", (sid,))


def forget_file(db: sqlite3.Connection, path: str) -> None:
    """``path`` is gone: its row, its state and its sessions leave the index."""
    db.execute("DELETE FROM files WHERE path = ?", (to_db(path),))
    db.execute("DELETE FROM states WHERE path = ?", (to_db(path),))
    drop_sessions(db, path)
