"""Read the library: sessions filtered and sorted, full-text search, bad files."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from ctxviewer.library.schema import REQUEST_BITS

# --sort name -> (column, descending)
SORTS: dict[str, tuple[str, bool]] = {
    "start": ("start", True), "end": ("end_", True), "peak": ("peak", True),
    "share": ("share", True), "cost": ("cost", True), "requests": ("requests", True),
    "compactions": ("compactions", True), "cache": ("cache", True), "size": ("size", True),
    "agent": ("agent", False), "project": ("project", False), "path": ("path", False),
    "matches": ("", True),
}
MATCH_ROWS = 20_000  # matching requests looked at per search
SNIPPETS = 3  # per session
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass
class Match:
    """A request that holds the words, with its text around them."""

    request: int
    snippet: str


@dataclass
class Hits:
    """A search's matches: session id -> its matching requests (first ``SNIPPETS`` with a
    snippet) and how many requests match."""

    requests: dict[int, list[int]] = field(default_factory=dict)
    snippets: dict[int, list[Match]] = field(default_factory=dict)
    truncated: bool = False


def fts_query(text: str) -> str | None:
    """The user's words as an FTS5 query: every word must occur (in any order); a
    ``"quoted phrase"`` must occur as written. None when there is no word."""
    terms = []
    for phrase, word in re.findall(r'"([^"]*)"|(\S+)', text):
        words = _WORD.findall(phrase or word)
        if words:
            terms.append('"' + " ".join(words) + '"')
    return " ".join(terms) if terms else None


def search(db: sqlite3.Connection, text: str, limit: int = MATCH_ROWS) -> Hits:
    hits = Hits()
    q = fts_query(text)
    if q is None:
        return hits
    rows = db.execute("SELECT rowid FROM texts WHERE texts MATCH ? LIMIT ?",
                      (q, limit + 1)).fetchall()
    hits.truncated = len(rows) > limit
    for (rowid,) in rows[:limit]:
        hits.requests.setdefault(rowid >> REQUEST_BITS, []).append(rowid & ((1 << REQUEST_BITS)
                                                                            - 1))
    return hits


def snippets(db: sqlite3.Connection, text: str, hits: Hits, sessions: list[int]) -> None:
    """Fill ``hits.snippets`` for ``sessions`` (the ones shown)."""
    q = fts_query(text)
    if q is None:
        return
    wanted = [(sid << REQUEST_BITS) | r for sid in sessions
              for r in sorted(hits.requests.get(sid, []))[:SNIPPETS]]
    for i in range(0, len(wanted), 500):
        chunk = wanted[i:i + 500]
        marks = ",".join("?" * len(chunk))
        for rowid, snip in db.execute(
                f"SELECT rowid, snippet(texts, 0, '[', ']', '…', 12) FROM texts "
                f"WHERE texts MATCH ? AND rowid IN ({marks})", (q, *chunk)):
            hits.snippets.setdefault(rowid >> REQUEST_BITS, []).append(
                Match(rowid & ((1 << REQUEST_BITS) - 1), " ".join(snip.split())))
    for found in hits.snippets.values():
        found.sort(key=lambda m: m.request)


def sessions(db: sqlite3.Connection, *, agent: str | None = None, project: str | None = None,
             sort: str = "start", limit: int | None = None,
             ids: dict[int, list[int]] | None = None) -> list[dict[str, Any]]:
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
    if not column:  # matches: sorted below
        column, desc = "start", True
    order = f"{column} IS NULL, {column} {'DESC' if desc else 'ASC'}, start DESC, path, part"
    sql = ("SELECT id, path, part, parts, project, size, mtime_ns, summary, series FROM sessions"
           + (f" WHERE {' AND '.join(where)}" if where else "") + f" ORDER BY {order}")
    rows = db.execute(sql, args).fetchall()
    out = [entry(*row) for row in rows]
    if ids is not None and sort == "matches":
        out.sort(key=lambda e: -len(ids.get(e["id"], ())))
    return out[:limit] if limit else out


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
