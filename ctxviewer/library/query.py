"""Read the library: sessions filtered and sorted, bad files (``search``: the text)."""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from datetime import UTC, datetime
from typing import Any

from ctxviewer.library.schema import from_db

# --sort name -> (column, descending)
SORTS: dict[str, tuple[str, bool]] = {
    "start": ("start", True),
    "end": ("end_", True),
    "peak": ("peak", True),
    "share": ("share", True),
    "cost": ("cost", True),
    "requests": ("requests", True),
    "compactions": ("compactions", True),
    "cache": ("cache", True),
    "size": ("size", True),
    "agent": ("agent", False),
    "project": ("project", False),
    "path": ("path", False),
    "matches": ("", True),
}


def sessions(
    db: sqlite3.Connection,
    *,
    agent: str | None = None,
    project: str | None = None,
    sort: str = "start",
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """The sessions as ``library --json`` lists them (see ``entry``)."""
    cond, args, order = _where(agent, project, None, sort)
    sql = f"SELECT {_COLUMNS} FROM sessions{cond} ORDER BY {order}"
    if limit:
        sql += f" LIMIT {int(limit)}"
    return [entry(*row) for row in db.execute(sql, args)]


def ordered(
    db: sqlite3.Connection,
    ids: Collection[int],
    *,
    agent: str | None = None,
    project: str | None = None,
    sort: str = "start",
    ranks: dict[int, int] | None = None,
) -> list[int]:
    """Of ``ids``, those of ``agent`` and ``project``, in ``sort``'s order (``matches``:
    by ``ranks``, the most first, then the newest)."""
    if not ids:
        return []
    cond, args, order = _where(agent, project, ids, sort)
    out = [i for (i,) in db.execute(f"SELECT id FROM sessions{cond} ORDER BY {order}", args)]
    if sort == "matches":
        rank = ranks or {}
        out.sort(key=lambda i: -rank.get(i, 0))  # stable: the newest first among equals
    return out


def entries(db: sqlite3.Connection, ids: list[int]) -> list[dict[str, Any]]:
    """The sessions ``ids``, in that order (see ``entry``)."""
    if not ids:
        return []
    rows = {
        r[0]: r
        for r in db.execute(
            f"SELECT {_COLUMNS} FROM sessions WHERE id IN ({','.join(str(int(i)) for i in ids)})"
        )
    }
    return [entry(*rows[i]) for i in ids if i in rows]


def _where(
    agent: str | None, project: str | None, ids: Collection[int] | None, sort: str
) -> tuple[str, list[str], str]:
    where, args = [], []
    if agent:
        where.append("agent LIKE ?")  # "claude", "Claude Code", "claude-code"
        args.append(f"%{agent.strip().lower().replace(' ', '-')}%")
    if project:
        where.append("project LIKE ?")
        args.append(f"%{project}%")
    if ids is not None:
        where.append(f"id IN ({','.join(str(int(i)) for i in ids)})")
    column, desc = SORTS.get(sort, SORTS["start"])
    if not column:  # matches: ranked by the caller, the newest first among equals
        column, desc = "start", True
    order = f"{column} IS NULL, {column} {'DESC' if desc else 'ASC'}, start DESC, path, part"
    return (f" WHERE {' AND '.join(where)}" if where else ""), args, order


_COLUMNS = "id, path, part, parts, project, size, mtime_ns, summary, series"


def entry(
    sid: int,
    path: str | bytes,
    part: int,
    parts: int,
    project: str | bytes | None,
    size: int,
    mtime_ns: int,
    summary: str,
    series: str,
) -> dict[str, Any]:
    """``SessionSummary.as_dict()`` with the library's own keys (docs/json.md)."""
    import orjson  # with its uuid, platform, json: on the reading thread, not at start

    out: dict[str, Any] = orjson.loads(summary)
    out["path"] = from_db(path)
    out["project"] = None if project is None else from_db(project)
    out.update(
        id=sid,
        part=part,
        parts=parts,
        size=size,
        mtime=_iso(mtime_ns / 1e9),
        prompt_series=orjson.loads(series),
    )
    return out


def bad_files(db: sqlite3.Connection) -> list[dict[str, Any]]:
    return [
        {"path": from_db(p), "reason": e, "size": size, "mtime": _iso(m / 1e9)}
        for p, e, size, m in db.execute(
            "SELECT path, error, size, mtime_ns FROM files WHERE error IS NOT NULL "
            "ORDER BY mtime_ns DESC"
        )
    ]


def counts(db: sqlite3.Connection) -> dict[str, int]:
    sessions_n, requests_n = db.execute(
        "SELECT count(*), coalesce(sum(requests), 0) FROM sessions"
    ).fetchone()
    files_n = db.execute("SELECT count(*) FROM files").fetchone()[0]
    return {"sessions": sessions_n, "requests": requests_n, "files": files_n}


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
