"""Full-text search of the library: which sessions hold the words, how many of their
requests, and the text around them.

A session matches when one of its requests holds every word (any order, any case,
accents ignored; a ``"quoted phrase"`` as written). Two FTS5 tables answer
(``schema``): ``texts``, one row per request, and ``chunk_texts``, one row per 64
requests. A common word is in most requests (253,000 of 439,000 in the bench's
library): reading one row per request to learn which sessions hold it takes tens
of milliseconds, and counting them per session (a sort of every row) 60-150 ms,
while ``chunk_texts`` says which sessions hold it in a few thousand rows. So:

- ``matching``: the exact set of sessions. One term (a word or a phrase) from
  ``chunk_texts`` (exact: a chunk's requests are kept apart by a word of their own);
  several terms from ``texts`` (they must be in the same request);
- ``first``: the first ``limit`` matching sessions in a given order, each with its
  count: ``chunk_texts``' candidates (a superset for several terms), each counted in
  ``texts`` in turn until ``limit`` are found (what the command lists);
- ``count``: the counts of given sessions, or of every session (the slow path,
  for ``--sort matches`` and the window's Matches column);
- ``count_with_heads``: every session's count and first matching requests in one
  pass (a listing of every match, ``library --json --search``);
- ``snippets``: the first requests of the sessions shown, with the text around the
  words; ``session_matches``: one session's matching requests (the window's list).
"""

from __future__ import annotations

import bisect
import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ctxviewer.library.schema import BREAK, REQUEST_BITS, SESSION_SHIFT
from ctxviewer.library.store import bodies

SNIPPETS = 3  # per session
CHECKS_PER_ROW = 4  # ``first``: candidates counted per row wanted before asking ``texts``
_LOW = (1 << REQUEST_BITS) - 1
_WORD = re.compile(r"\w+", re.UNICODE)
_BREAK_WORD = BREAK.strip()


@dataclass
class Match:
    """A request that holds the words, with its text around them."""

    request: int
    snippet: str


def fts_query(text: str) -> str | None:
    """The user's words as an FTS5 query: every word must occur (in any order); a
    ``"quoted phrase"`` must occur as written. None when there is no word."""
    terms = _terms(text)
    return " ".join('"' + " ".join(t) + '"' for t in terms) if terms else None


def _terms(text: str) -> list[list[str]]:
    """The words of each term of ``text``: a word alone, or a quoted phrase's words."""
    out = []
    for phrase, word in re.findall(r'"([^"]*)"|(\S+)', text):
        words = _WORD.findall(phrase or word)
        if words:
            out.append(words)
    return out


def _chunks_exact(terms: list[list[str]]) -> bool:
    """``chunk_texts`` gives the exact sessions: one term, which is not the break word."""
    return len(terms) == 1 and _BREAK_WORD not in " ".join(terms[0]).lower()


def candidates(db: sqlite3.Connection, text: str) -> set[int]:
    """The sessions with 64 consecutive requests that hold every word of ``text``:
    every matching session, and (for several terms) maybe others."""
    q = fts_query(text)
    if q is None:
        return set()
    return {
        sid
        for (sid,) in db.execute(
            f"SELECT DISTINCT rowid >> {SESSION_SHIFT} FROM chunk_texts WHERE chunk_texts MATCH ?",
            (q,),
        )
    }


def matching(db: sqlite3.Connection, text: str) -> set[int]:
    """The sessions with a request that holds every word of ``text``."""
    terms = _terms(text)
    if not terms:
        return set()
    if _chunks_exact(terms):
        return candidates(db, text)
    return {
        sid
        for (sid,) in db.execute(
            f"SELECT DISTINCT rowid >> {REQUEST_BITS} FROM texts WHERE texts MATCH ?",
            (fts_query(text),),
        )
    }


def count(
    db: sqlite3.Connection, text: str, sessions: Iterable[int] | None = None
) -> dict[int, int]:
    """Session id -> how many of its requests match ``text``, for ``sessions`` (each one's
    requests looked up: for the few shown), or for every session (None: every matching
    request read and grouped, the slow path). Sessions with no match are left out."""
    q = fts_query(text)
    if q is None:
        return {}
    if sessions is None:
        return dict(
            db.execute(
                f"SELECT rowid >> {REQUEST_BITS}, count(*) FROM texts WHERE texts MATCH ? "
                "GROUP BY 1",
                (q,),
            ).fetchall()
        )
    out = {}
    for sid in sessions:
        n = len(_requests(db, q, sid))
        if n:
            out[sid] = n
    return out


def _requests(db: sqlite3.Connection, q: str, sid: int) -> list[int]:
    """The rowids of ``sid``'s requests that match ``q``."""
    base = sid << REQUEST_BITS
    return [
        r
        for (r,) in db.execute(
            "SELECT rowid FROM texts WHERE texts MATCH ? AND rowid BETWEEN ? AND ?",
            (q, base, base + _LOW),
        )
    ]


def first(
    db: sqlite3.Connection, text: str, order: Sequence[int], limit: int
) -> tuple[list[int], dict[int, int], dict[int, list[int]]]:
    """The first ``limit`` sessions of ``order`` (``candidates``, in the order to list)
    that match ``text``, their counts and their first matching requests' rowids (for
    ``snippets``). Each candidate's requests are looked up in turn; after
    ``CHECKS_PER_ROW`` candidates per row wanted, the others are first checked against
    ``matching`` (many candidates that do not match: words in one chunk, never in one
    request), so the cost stays bounded."""
    q = fts_query(text)
    terms = _terms(text)
    if q is None:
        return [], {}, {}
    kept: list[int] = []
    counts: dict[int, int] = {}
    heads: dict[int, list[int]] = {}
    exact: set[int] | None = None
    for checked, sid in enumerate(order):
        if exact is None and not _chunks_exact(terms) and checked >= CHECKS_PER_ROW * limit:
            exact = matching(db, text)
        if exact is not None and sid not in exact:
            continue
        found = _requests(db, q, sid)
        if found:
            kept.append(sid)
            counts[sid] = len(found)
            heads[sid] = found[:SNIPPETS]
            if len(kept) >= limit:
                break
    return kept, counts, heads


def count_with_heads(
    db: sqlite3.Connection, text: str
) -> tuple[dict[int, int], dict[int, list[int]]]:
    """Every matching session's count and first ``SNIPPETS`` matching requests' rowids,
    from one pass over the matching requests (for a listing of every match: one query
    instead of one per session)."""
    q = fts_query(text)
    counts: dict[int, int] = {}
    heads: dict[int, list[int]] = {}
    if q is None:
        return counts, heads
    rows = [
        r for (r,) in db.execute("SELECT rowid FROM texts WHERE texts MATCH ? ORDER BY rowid", (q,))
    ]
    at = 0
    while at < len(rows):  # a session's requests are one run: it ends before the next id's
        sid = rows[at] >> REQUEST_BITS
        end = bisect.bisect_left(rows, (sid + 1) << REQUEST_BITS, at)
        counts[sid] = end - at
        heads[sid] = rows[at : min(end, at + SNIPPETS)]
        at = end
    return counts, heads


def session_matches(
    db: sqlite3.Connection, text: str, sid: int, limit: int
) -> tuple[int, list[Match]]:
    """How many of session ``sid``'s requests hold ``text``, and the first ``limit`` of
    them with their snippets (what the window lists under a picked session)."""
    q = fts_query(text)
    if q is None:
        return 0, []
    found = _requests(db, q, sid)
    return len(found), snippets(db, text, [sid], {sid: found[:limit]}).get(sid, [])


def snippets(
    db: sqlite3.Connection,
    text: str,
    sessions: Iterable[int],
    heads: dict[int, list[int]] | None = None,
) -> dict[int, list[Match]]:
    """Of each of ``sessions`` (the ones shown), its first ``SNIPPETS`` matching requests
    (``heads``' rowids when ``first`` or ``count_with_heads`` found them), each with its
    text around the first word found."""
    q = fts_query(text)
    out: dict[int, list[Match]] = {}
    if q is None:
        return out
    marker = _Marker([w.lower() for w in _WORD.findall(text)])
    wanted: list[tuple[int, int]] = []
    for sid in sessions:
        base = sid << REQUEST_BITS
        rowids = (
            heads[sid]
            if heads is not None and sid in heads
            else [
                r
                for (r,) in db.execute(
                    "SELECT rowid FROM texts WHERE texts MATCH ? AND rowid BETWEEN ? AND ? ORDER BY "
                    "rowid LIMIT ?",
                    (q, base, base + _LOW, SNIPPETS),
                )
            ]
        )
        wanted += [(sid, r) for r in rowids]
    texts = bodies(db, [r for _, r in wanted])
    for sid, rowid in wanted:
        found = texts.get(rowid)
        if found is not None:
            out.setdefault(sid, []).append(Match(rowid & _LOW, marker.snippet(found)))
    return out


class _Marker:
    """Finds the first of a search's words in a text and marks them (compiled once)."""

    def __init__(self, words: list[str]) -> None:
        self.any = (
            re.compile("|".join(rf"\b{re.escape(w)}\b" for w in words), re.IGNORECASE)
            if words
            else None
        )

    def snippet(self, text: str, width: int = 100) -> str:
        """``text`` around the first word it holds, each word found in ``[`` ``]``."""
        first = self.any.search(text) if self.any is not None else None
        start = max(0, (first.start() if first else 0) - width // 3)
        part = " ".join(text[start : start + width].split())
        if self.any is not None:
            part = self.any.sub(lambda m: f"[{m.group(0)}]", part)
        return ("…" if start else "") + part + ("…" if start + width < len(text) else "")
