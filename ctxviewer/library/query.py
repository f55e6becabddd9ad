"""Read the library: sessions filtered and sorted, full-text search, bad files."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from ctxviewer.library.schema import REQUEST_BITS
from ctxviewer.library.store import body

# --sort name -> (column, descending)
SORTS: dict[str, tuple[str, bool]] = {
    "start": ("start", True), "end": ("end_", True), "peak": ("peak", True),
    "share": ("share", True), "cost": ("cost", True), "requests": ("requests", True),
    "compactions": ("compactions", True), "cache": ("cache", True), "size": ("size", True),
    "agent": ("agent", False), "project": ("project", False), "path": ("path", False),
    "matches": ("", True),
}
SNIPPETS = 3  # per session
_LOW = (1 << REQUEST_BITS) - 1
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass
class Match:
    """A request that holds the words, with its text around them."""

    request: int
    snippet: str


@dataclass
class Hits:
    """A search's matches: session id -> how many of its requests match, and (for the
    sessions shown) the first ``SNIPPETS`` of them with a snippet."""

    counts: dict[int, int] = field(default_factory=dict)
    snippets: dict[int, list[Match]] = field(default_factory=dict)


def fts_query(text: str) -> str | None:
    """The user's words as an FTS5 query: every word must occur (in any order); a
    ``"quoted phrase"`` must occur as written. None when there is no word."""
    terms = []
    for phrase, word in re.findall(r'"([^"]*)"|(\S+)', text):
        words = _WORD.findall(phrase or word)
        if words:
            terms.append('"' + " ".join(words) + '"')
    return " ".join(terms) if terms else None


def search(db: sqlite3.Connection, text: str) -> Hits:
    """The sessions whose requests match ``text`` (counted in SQL: a word in most
    requests makes hundreds of thousands of rows, which Python need not see)."""
    hits = Hits()
    q = fts_query(text)
    if q is not None:
        hits.counts = dict(db.execute(
            f"SELECT rowid >> {REQUEST_BITS}, count(*) FROM texts WHERE texts MATCH ? "
            "GROUP BY 1", (q,)).fetchall())
    return hits


def snippets(db: sqlite3.Connection, text: str, hits: Hits, sessions: list[int]) -> None:
    """Fill ``hits.snippets`` for ``sessions`` (the ones shown): each of their first
    ``SNIPPETS`` matching requests with its text around the first word found."""
    q = fts_query(text)
    words = [w.lower() for w in _WORD.findall(text)]
    if q is None:
        return
    for sid in sessions:
        if sid not in hits.counts:
            continue
        base = sid << REQUEST_BITS
        for (rowid,) in db.execute("SELECT rowid FROM texts WHERE texts MATCH ? AND rowid "
                                   "BETWEEN ? AND ? ORDER BY rowid LIMIT ?",
                                   (q, base, base + _LOW, SNIPPETS)).fetchall():
            found = body(db, rowid)
            if found is not None:
                hits.snippets.setdefault(sid, []).append(
                    Match(rowid & _LOW, snippet(found, words)))


def snippet(text: str, words: list[str], width: int = 100) -> str:
    """``text`` around the first of ``words`` it holds, each word found in ``[`` ``]``."""
    low = text.lower()
    at = min((i for i in (_find_word(low, w) for w in words) if i >= 0), default=0)
    start = max(0, at - width // 3)
    part = " ".join(text[start:start + width].split())
    marked = re.sub("|".join(rf"\b{re.escape(w)}\b" for w in words),
                    lambda m: f"[{m.group(0)}]", part, flags=re.IGNORECASE)
    return ("…" if start else "") + marked + ("…" if start + width < len(text) else "")


def _find_word(low: str, word: str) -> int:
    m = re.search(rf"\b{re.escape(word)}\b", low)
    return m.start() if m else -1


def sessions(db: sqlite3.Connection, *, agent: str | None = None, project: str | None = None,
             sort: str = "start", limit: int | None = None,
             ids: dict[int, int] | None = None) -> list[dict[str, Any]]:
    """The sessions as ``library --json`` lists them (see ``entry``)."""
    where, args = [], []
    if agent:
        where.append("agent LIKE ?")  # "claude", "Claude Code", "claude-code"
        args.append(f"%{agent.strip().lower().replace(' ', '-')}%")
    if project:
        where.append("project LIKE ?")
        args.append(f"%{project}%")
    if ids is not None:
        if not ids:
            return []
        where.append(f"id IN ({','.join(str(int(i)) for i in ids)})")
    column, desc = SORTS.get(sort, SORTS["start"])
    if not column:  # matches: the most first, then the newest
        column, desc = "start", True
    order = f"{column} IS NULL, {column} {'DESC' if desc else 'ASC'}, start DESC, path, part"
    cond = f" WHERE {' AND '.join(where)}" if where else ""
    if ids is not None and sort == "matches":  # ordered here: only the rows kept are read
        ranked = [i for (i,) in db.execute(f"SELECT id FROM sessions{cond} ORDER BY {order}",
                                           args)]
        ranked.sort(key=lambda i: -ids.get(i, 0))  # stable: the newest first among equals
        keep = ranked[:limit] if limit else ranked
        rows = {r[0]: r for r in db.execute(
            f"SELECT {_COLUMNS} FROM sessions WHERE id IN ({','.join(map(str, keep))})")}
        return [entry(*rows[i]) for i in keep if i in rows]
    sql = f"SELECT {_COLUMNS} FROM sessions{cond} ORDER BY {order}"
    if limit:
        sql += f" LIMIT {int(limit)}"
    return [entry(*row) for row in db.execute(sql, args)]


_COLUMNS = "id, path, part, parts, project, size, mtime_ns, summary, series"


def entry(sid: int, path: str, part: int, parts: int, project: str | None, size: int,
          mtime_ns: int, summary: str, series: str) -> dict[str, Any]:
    """``SessionSummary.as_dict()`` with the library's own keys (docs/json.md)."""
    out: dict[str, Any] = orjson.loads(summary)
    out["project"] = project
    out.update(id=sid, part=part, parts=parts, size=size,
               mtime=_iso(mtime_ns / 1e9), prompt_series=orjson.loads(series))
    return out


def bad_files(db: sqlite3.Connection) -> list[dict[str, Any]]:
    return [{"path": p, "reason": e, "size": size, "mtime": _iso(m / 1e9)}
            for p, e, size, m in db.execute(
                "SELECT path, error, size, mtime_ns FROM files WHERE error IS NOT NULL "
                "ORDER BY mtime_ns DESC")]


def counts(db: sqlite3.Connection) -> dict[str, int]:
    sessions_n, requests_n = db.execute(
        "SELECT count(*), coalesce(sum(requests), 0) FROM sessions").fetchone()
    files_n = db.execute("SELECT count(*) FROM files").fetchone()[0]
    return {"sessions": sessions_n, "requests": requests_n, "files": files_n}


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="seconds") \
        .replace("+00:00", "Z")
