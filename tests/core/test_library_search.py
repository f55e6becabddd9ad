"""The library's full-text search (ctxviewer.library.search): its fast paths give what
one FTS5 row per request gives (every word in one request, phrases as written), the
chunk index stays the join of the stored texts through growth, rewrites and deletion,
and an index of schema 2 is brought up to date without reading a log again."""

from __future__ import annotations

import re
import sqlite3
import zlib
from collections import defaultdict
from pathlib import Path

import pytest
from library_tree import fake_home, lay_out, recordings

from ctxviewer.cli import main
from ctxviewer.library import Library
from ctxviewer.library.schema import BREAK, CHUNK_BITS, REQUEST_BITS, SCHEMA
from ctxviewer.library.search import candidates

TOKENIZE = "tokenize='unicode61 remove_diacritics 2'"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return fake_home(tmp_path, monkeypatch)


def bodies(db: sqlite3.Connection) -> dict[int, str]:
    return {r: zlib.decompress(z).decode() for r, z in db.execute("SELECT id, z FROM bodies")}


def oracle(texts: dict[int, str], query: str) -> dict[int, int]:
    """Today's meaning, the plain way: one FTS5 row per request, grouped by session."""
    mem = sqlite3.connect(":memory:")
    mem.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, {TOKENIZE})")
    mem.executemany("INSERT INTO t (rowid, body) VALUES (?, ?)", texts.items())
    return dict(
        mem.execute(
            f"SELECT rowid >> {REQUEST_BITS}, count(*) FROM t WHERE t MATCH ? GROUP BY 1", (query,)
        ).fetchall()
    )


def oracle_heads(texts: dict[int, str], query: str, n: int = 3) -> dict[int, list[int]]:
    """Each session's first ``n`` matching requests (their index in the session)."""
    mem = sqlite3.connect(":memory:")
    mem.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, {TOKENIZE})")
    mem.executemany("INSERT INTO t (rowid, body) VALUES (?, ?)", texts.items())
    out: dict[int, list[int]] = defaultdict(list)
    for (r,) in mem.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY rowid", (query,)):
        if len(out[r >> REQUEST_BITS]) < n:
            out[r >> REQUEST_BITS].append(r & ((1 << REQUEST_BITS) - 1))
    return dict(out)


def tokens(text: str) -> list[str]:
    return [t.lower() for t in re.findall(r"[^\W_]+", text)]


def chunks_agree(path: Path) -> None:
    """``chunk_texts`` indexes exactly each chunk's stored texts, joined (every term, in
    every document, at every position): what a wrong delete would break."""
    db = sqlite3.connect(str(path))
    db.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, 'chunk_texts', 'instance')")
    have = sorted(db.execute("SELECT term, doc, offset FROM temp.v"))
    groups: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for r, t in bodies(db).items():
        groups[r >> CHUNK_BITS].append((r, t))
    db.close()
    mem = sqlite3.connect(":memory:")
    mem.execute(f"CREATE VIRTUAL TABLE c USING fts5(body, content='', {TOKENIZE})")
    mem.executemany(
        "INSERT INTO c (rowid, body) VALUES (?, ?)",
        [(c, BREAK.join(t for _, t in sorted(rows))) for c, rows in groups.items()],
    )
    mem.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, 'c', 'instance')")
    want = sorted(mem.execute("SELECT term, doc, offset FROM temp.v"))
    assert have == want and have


def queries(texts: dict[int, str]) -> dict[str, str]:
    """Searches derived from the stored texts: a word in most requests, two words of one
    chunk never in one request, a "phrase" made of one request's last word and the next
    one's first, a rare word."""
    where: dict[str, set[int]] = defaultdict(set)
    for r, t in texts.items():
        for w in tokens(t):
            if w.isascii() and w.isalpha() and len(w) >= 4 and w != BREAK.strip():
                where[w].add(r)
    common = max(where, key=lambda w: (len(where[w]), w))
    rare = min(where, key=lambda w: (len(where[w]), w))
    apart = next(
        f"{a} {b}"
        for a in sorted(where, key=lambda w: -len(where[w]))[:300]
        for b in sorted(where, key=lambda w: -len(where[w]))[:300]
        if a < b
        and not where[a] & where[b]
        and {r >> CHUNK_BITS for r in where[a]} & {r >> CHUNK_BITS for r in where[b]}
    )
    across = next(
        f'"{tokens(texts[r])[-1]} {tokens(texts[r + 1])[0]}"'
        for r in sorted(texts)
        if r + 1 in texts
        and (r + 1) >> CHUNK_BITS == r >> CHUNK_BITS
        and tokens(texts[r])
        and tokens(texts[r + 1])
        and not oracle(texts, f'"{tokens(texts[r])[-1]} {tokens(texts[r + 1])[0]}"')
    )
    return {
        "common": common,
        "apart": apart,
        "across": across,
        "rare": rare,
        "two": f"{common} {rare}",
        "none": "zzqqxxnotaword",
    }


def test_every_path_gives_what_one_row_per_request_gives(
    corpus: Path, home: Path, tmp_path: Path
) -> None:
    lay_out(corpus, home)
    recordings(corpus, tmp_path / "recordings")
    with Library() as lib:
        lib.add_folder(str(tmp_path / "recordings"))
        lib.scan()
        texts = bodies(lib.db)
        asked = queries(texts)
        start = {e["id"]: i for i, e in enumerate(lib.sessions())}  # newest first
        for name, q in asked.items():
            quoted = " ".join(
                f'"{w}"' if not w.startswith('"') else w for w in re.findall(r'"[^"]*"|\S+', q)
            )
            want, heads = oracle(texts, quoted), oracle_heads(texts, quoted)
            assert lib.matching(q) == set(want), name
            assert lib.search_counts(q) == want, name
            assert lib.search_counts(q, list(start)) == want, name
            for limit in (1, 2, 50, None):
                listed = lib.sessions(search=q, limit=limit)
                ids = sorted(want, key=start.__getitem__)[:limit]
                assert [e["id"] for e in listed] == ids, (name, limit)
                assert all(e["match_count"] == want[e["id"]] and e["matches"] for e in listed), name
                assert all(
                    [m["request"] for m in e["matches"]] == heads[e["id"]] for e in listed
                ), (name, limit)  # the first three, in order
            ranked = lib.sessions(search=q, sort="matches", limit=3)
            assert [e["match_count"] for e in ranked] == sorted(want.values(), reverse=True)[:3], (
                name
            )
        # the cases a coarser index would get wrong
        assert asked["apart"] and not lib.matching(asked["apart"])
        assert candidates(lib.db, asked["apart"])  # one chunk holds both words
        assert not lib.matching(asked["across"]) and not lib.sessions(
            search=asked["across"], limit=5
        )
        assert len(lib.matching(asked["common"])) > 1


def test_the_chunk_index_follows_growth_rewrites_and_deletion(corpus: Path, home: Path) -> None:
    files = lay_out(corpus, home)
    path = files["spotter"]
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[: len(lines) // 3]))
    with Library() as lib:
        lib.scan()
        chunks_agree(lib.path)
        with open(path, "ab") as f:  # grows: its last chunk and new ones are written again
            f.write(b"".join(lines[len(lines) // 3 :]))
        assert lib.scan().resumed >= 1
        chunks_agree(lib.path)
        files["qwen"].write_bytes(files["codex"].read_bytes())  # rewritten: other texts
        assert lib.scan().read == 1
        chunks_agree(lib.path)
        files["vibe"].unlink()
        assert lib.scan().removed == 1
        chunks_agree(lib.path)
        lib.clear()
        assert lib.db.execute("SELECT count(*) FROM chunk_texts").fetchone()[0] == 0
        lib.scan()
        chunks_agree(lib.path)


def test_an_index_of_schema_2_gets_its_chunks_without_reading_again(
    corpus: Path, home: Path
) -> None:
    lay_out(corpus, home)
    with Library() as lib:
        lib.scan()
        before = {q: lib.sessions(search=q, limit=10) for q in ("TodoWrite", "the file")}
        path = lib.path
    db = sqlite3.connect(str(path))
    db.execute("DROP TABLE chunk_texts")
    db.execute("PRAGMA user_version=2")
    db.commit()
    db.close()
    with Library() as lib:
        assert lib.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA
        chunks_agree(path)
        assert lib.scan().read == 0  # nothing read again
        assert {q: lib.sessions(search=q, limit=10) for q in before} == before
    # an older schema than that is dropped and built again (the folders stay)
    with Library() as lib:
        lib.add_folder(str(home))
    db = sqlite3.connect(str(path))
    db.execute("PRAGMA user_version=1")
    db.commit()
    db.close()
    with Library() as lib:
        assert lib.counts()["sessions"] == 0 and lib.folders() == [str(home)]
        assert lib.scan().read > 0 and lib.sessions(search="TodoWrite", limit=10)
        chunks_agree(path)


def test_the_command_lists_the_newest_matches_first(
    corpus: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    lay_out(corpus, home)
    assert main(["library", "--search", "TodoWrite", "--json", "--limit", "2"]) == 0
    newest = json.loads(capsys.readouterr().out)["sessions"]
    assert (
        main(["library", "--search", "TodoWrite", "--json", "--no-scan", "--sort", "matches"]) == 0
    )
    ranked = json.loads(capsys.readouterr().out)["sessions"]
    assert [e["match_count"] for e in ranked] == sorted(
        (e["match_count"] for e in ranked), reverse=True
    )
    by_start = sorted(ranked, key=lambda e: e["start"] or "", reverse=True)
    assert [e["id"] for e in newest] == [e["id"] for e in by_start[:2]]
