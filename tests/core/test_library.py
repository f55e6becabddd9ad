"""The session library (ctxviewer.library): its numbers are ``report``'s, it reads only
what changed, and bad or vanishing files never break it."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from library_tree import fake_home, lay_out, recordings

from ctxviewer.cli import main
from ctxviewer.ingest.loader import load
from ctxviewer.library import Library
from ctxviewer.library.content import request_texts
from ctxviewer.library.schema import REQUEST_BITS


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return fake_home(tmp_path, monkeypatch)


def report(capsys: pytest.CaptureFixture[str], path: Path, *more: str) -> dict:
    assert main(["report", str(path), "--json", *more]) == 0
    return json.loads(capsys.readouterr().out)


def by_path(lib: Library) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for e in lib.sessions():
        out.setdefault(e["path"], []).append(e)
    return out


def agrees(row: dict, rep: dict) -> None:
    assert row["requests"] == rep["source"]["requests"]
    assert row["peak_prompt_tokens"] == rep["peak_prompt_tokens"]
    assert row["compactions_observed"] == len(rep["compactions"]["observed"])
    assert row["compactions_predicted"] == len(rep["compactions"]["predicted"])
    assert row["window"] == rep["window"]
    assert row["agent"] == rep["agent"]["id"]


def test_every_agent_layout_agrees_with_report(
    corpus: Path, home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = lay_out(corpus, home)
    recs = recordings(corpus, tmp_path / "recordings")
    with Library() as lib:
        lib.add_folder(str(tmp_path / "recordings"))
        stats = lib.scan()
        rows = by_path(lib)
        assert stats.bad == 0 and lib.bad_files() == []
    # sub-agent files are part of their session, not sessions of their own
    assert str(files["spotter_explore"]) not in rows and str(files["spotter_compact"]) not in rows
    assert stats.files == len(files) + len(recs)
    for name, path in {**files, **recs}.items():
        if name.startswith("spotter_"):
            continue
        (row,) = rows[str(path)]
        agrees(row, report(capsys, path))
    spotter = rows[str(files["spotter"])][0]
    assert {r["agent_id"] for r in spotter["subagent_runs"]} >= {"a93ccab", "acompact-70d8e7"}
    assert spotter["compactions_observed"] >= 1 and spotter["project"]
    assert (
        max(spotter["prompt_series"]) == spotter["peak_prompt_tokens"]
        or spotter["peak_request"] is not None
    )
    assert 0 < len(spotter["prompt_series"]) <= 48
    # a project from the folder name when the log records none (Gemini CLI's named folder)
    assert rows[str(files["gemini_jsonl"])][0]["project"] == "vibe"


def test_a_recording_of_several_sessions_lists_each(
    corpus: Path, home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A proxy log holding two clients' conversations: one row per session, as
    ``report --session N`` shows each."""
    folder = tmp_path / "logs"
    src = next((corpus / "openai").glob("hanqunfeng__*.jsonl"))
    path = folder / "mixed.jsonl"
    folder.mkdir()
    path.write_bytes(src.read_bytes())
    with Library() as lib:
        lib.add_folder(str(folder))
        lib.scan()
        rows = sorted(by_path(lib)[str(path)], key=lambda e: e["part"])
    assert len(rows) == rows[0]["parts"] > 1
    for row in rows:
        agrees(row, report(capsys, path, "--session", str(row["part"])))


def _split(src: Path, head_lines: int) -> tuple[bytes, bytes]:
    lines = src.read_bytes().splitlines(keepends=True)
    return b"".join(lines[:head_lines]), b"".join(lines[head_lines:])


def test_a_grown_file_is_read_from_where_it_stopped(
    corpus: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = lay_out(corpus, home)
    path = files["vibe"]
    first, rest = _split(path, 40)
    path.write_bytes(first)
    with Library() as lib:
        lib.scan()
        before = by_path(lib)[str(path)][0]
        agrees(before, report(capsys, path))
        with open(path, "ab") as f:
            f.write(rest)
        stats = lib.scan()
        assert stats.read == 1 and stats.resumed == 1
        assert stats.bytes_read == len(rest)  # only the appended bytes were parsed
        after = by_path(lib)[str(path)][0]
        assert after["id"] == before["id"] and after["requests"] > before["requests"]
        agrees(after, report(capsys, path))
        nothing = lib.scan()
        assert nothing.read == 0 and nothing.bytes_read == 0


def test_a_grown_sub_agent_file_updates_its_session(
    corpus: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = lay_out(corpus, home)
    sub = files["spotter_explore"]
    first, rest = _split(sub, 30)
    sub.write_bytes(first)
    with Library() as lib:
        lib.scan()
        with open(sub, "ab") as f:
            f.write(rest)
        stats = lib.scan()
        assert stats.read == 1  # the session, with its sub-agent files
        assert stats.bytes_read == len(rest)  # the session file resumed at its end: 0 bytes
        agrees(by_path(lib)[str(files["spotter"])][0], report(capsys, files["spotter"]))
        sub.unlink()  # a sub-agent file deleted: its session is read again without it
        stats = lib.scan()
        assert stats.removed == 1 and stats.read == 1
        agrees(by_path(lib)[str(files["spotter"])][0], report(capsys, files["spotter"]))


def test_truncated_and_rewritten_files_are_read_whole(
    corpus: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = lay_out(corpus, home)
    path = files["vibe"]
    with Library() as lib:
        lib.scan()
        first, _ = _split(path, 25)
        path.write_bytes(first)  # truncated in place
        stats = lib.scan()
        assert stats.read == 1 and stats.resumed == 0 and stats.bytes_read == len(first)
        agrees(by_path(lib)[str(path)][0], report(capsys, path))
        other = files["qwen"].read_bytes()
        path.write_bytes(other + b"\n" * (len(first) + 10 - len(other)))  # longer, another file
        stats = lib.scan()
        assert stats.resumed == 0 and stats.bytes_read == path.stat().st_size
        row = by_path(lib)[str(path)][0]
        assert row["agent"] == "qwen-code"
        agrees(row, report(capsys, path))


def test_deleted_files_leave_the_index_and_its_search(corpus: Path, home: Path) -> None:
    files = lay_out(corpus, home)
    with Library() as lib:
        lib.scan()
        hits = lib.sessions(search="TodoWrite")
        assert str(files["vibe"]) in {e["path"] for e in hits}
        files["vibe"].unlink()
        stats = lib.scan()
        assert stats.removed == 1 and stats.read == 0
        assert str(files["vibe"]) not in by_path(lib)
        assert str(files["vibe"]) not in {e["path"] for e in lib.sessions(search="TodoWrite")}
        _consistent(lib.path)


def test_bad_files_are_listed_with_their_reason(
    corpus: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = lay_out(corpus, home)
    folder = home / ".claude" / "projects" / "-home-u-junk"
    folder.mkdir()
    (folder / "blob.jsonl").write_bytes(b"\x00\x01\x02" * 200)
    (folder / "empty.jsonl").write_bytes(b"")
    (folder / "notes.jsonl").write_text("this is not a session\n" * 40)
    with Library() as lib:
        stats = lib.scan()
        bad = {Path(b["path"]).name: b["reason"] for b in lib.bad_files()}
        assert stats.bad == 3 and len(by_path(lib)) == len(files) - 2
    assert "binary" in bad["blob.jsonl"] and "empty" in bad["empty.jsonl"]
    assert "unknown format" in bad["notes.jsonl"]
    assert main(["library", "--no-scan", "--bad"]) == 0
    out = capsys.readouterr().out
    assert "3 files cannot be read" in out and "blob.jsonl: " in out


def test_search_returns_the_session_and_the_request(corpus: Path, home: Path) -> None:
    import re

    files = lay_out(corpus, home)
    with Library() as lib:
        lib.scan()
        session = load(str(files["codex"]))
        texts = request_texts(session.requests)
        # a word of the session's text that occurs in few of its requests
        counts: dict[str, set[int]] = {}
        for i, t in enumerate(texts):
            for w in re.findall(r"[A-Za-z]{7,}", t):
                counts.setdefault(w.lower(), set()).add(i)
        word, where = min(counts.items(), key=lambda kv: (len(kv[1]), kv[0]))
        hits = [e for e in lib.sessions(search=word) if e["path"] == str(files["codex"])]
        assert hits and hits[0]["match_count"] == len(where)
        assert {m["request"] for m in hits[0]["matches"]} == where
        assert all(f"[{word}]" in m["snippet"].lower() for m in hits[0]["matches"])
        assert lib.sessions(search="zzqqxxnotaword") == []
        # every word must occur; a quoted phrase as written
        assert lib.sessions(search=f"{word} zzqqxxnotaword") == []
        assert lib.sessions(search=word.upper()) == lib.sessions(search=word)


def test_a_file_that_vanishes_mid_scan(corpus: Path, home: Path) -> None:
    files = lay_out(corpus, home)
    gone: list[str] = []

    def progress(stats: object) -> None:
        if not gone:  # after the walk, before any read
            files["codex"].unlink()
            gone.append(str(files["codex"]))

    with Library() as lib:
        stats = lib.scan(progress=progress)
        assert gone and stats.bad == 0
        assert gone[0] not in by_path(lib) and len(by_path(lib)) == len(files) - 3
        assert lib.db.execute("SELECT count(*) FROM files WHERE path = ?", gone).fetchone()[0] == 0
        _consistent(lib.path)


def test_process_pool_gives_the_same_rows(corpus: Path, home: Path, tmp_path: Path) -> None:
    lay_out(corpus, home)
    recordings(corpus, tmp_path / "recordings")
    with Library() as lib:
        lib.add_folder(str(tmp_path / "recordings"))
        lib.scan(workers=1)
        here = {e["path"] + str(e["part"]): e for e in lib.sessions()}
        lib.clear()
        stats = lib.scan(workers=2, pool=True)
        assert stats.workers == 2
        pooled = {e["path"] + str(e["part"]): e for e in lib.sessions()}
    assert pooled.keys() == here.keys()
    for k, e in here.items():
        assert {x: y for x, y in pooled[k].items() if x != "id"} == {
            x: y for x, y in e.items() if x != "id"
        }


def _consistent(db_file: Path) -> None:
    db = sqlite3.connect(str(db_file))
    try:
        orphans = db.execute(
            "SELECT count(*) FROM sessions WHERE path NOT IN (SELECT path FROM files)"
        ).fetchone()[0]
        ids = {i for (i,) in db.execute("SELECT id FROM sessions")}
        texts = {r >> REQUEST_BITS for (r,) in db.execute("SELECT id FROM bodies")}
        assert orphans == 0 and texts <= ids
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        db.close()


def test_state_is_kept_only_for_recent_files(corpus: Path, home: Path) -> None:
    files = lay_out(corpus, home)
    old = files["vibe"]
    os.utime(old, (1_600_000_000, 1_600_000_000))
    with Library() as lib:
        lib.scan()
        kept = {p for (p,) in lib.db.execute("SELECT path FROM states")}
        assert str(old) not in kept and str(files["spotter"]) in kept
        # an old file that grows is read whole once, then kept
        with open(old, "ab") as f:
            f.write(b"\n")
        stats = lib.scan()
        assert stats.resumed == 0 and stats.bytes_read == old.stat().st_size
        assert str(old) in {p for (p,) in lib.db.execute("SELECT path FROM states")}


def test_a_scan_killed_half_way_leaves_a_consistent_index(
    corpus: Path, home: Path, tmp_path: Path
) -> None:
    import signal
    import subprocess
    import sys
    import time

    folder = tmp_path / "many"
    folder.mkdir()
    laid = lay_out(corpus, home)
    src = laid["spotter"].read_bytes()
    total = 60 + len(laid) - 2  # the copies, and the sessions of the home (2 sub-agent files)
    for i in range(60):
        (folder / f"copy-{i:02}.jsonl").write_bytes(src)
    with Library() as lib:
        lib.add_folder(str(folder))
        db_file = lib.path
    code = "from ctxviewer.library import Library; Library().scan(pool=False)"
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 60
        done = 0
        while time.monotonic() < deadline and proc.poll() is None and done < 3:
            time.sleep(0.05)
            try:
                with sqlite3.connect(f"file:{db_file}?mode=ro", uri=True, timeout=1) as db:
                    done = db.execute("SELECT count(*) FROM sessions").fetchone()[0]
            except sqlite3.OperationalError:
                continue
        assert proc.poll() is None, "the scan ended before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    _consistent(db_file)
    with Library() as lib:
        kept = lib.counts()["sessions"]
        assert 3 <= kept < total
        stats = lib.scan()
        assert stats.read == total - kept  # what was committed is not read again
        assert lib.counts()["sessions"] == total
    _consistent(db_file)


def test_the_listing_fits_the_terminal(
    corpus: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Wide: one line per session. Narrower than that line: the file on a line of its own.
    Too narrow for the columns too: unpadded, the project and compactions with the file. Piped (no
    terminal, as here): one line per session, whatever its length."""
    from ctxviewer.commands.library import render
    from ctxviewer.commands.sessions import _home

    lay_out(corpus, home)
    with Library() as lib:
        lib.scan()
        entries = lib.sessions(search="TodoWrite")
        listed = len(lib.sessions())
    e = max(entries, key=lambda x: len(x["path"]))
    path = _home(e["path"])
    wide = render(e, None)
    assert "\n" not in wide and wide.index(path) > wide.index(_home(e["project"]))
    assert render(e, len(wide)) == wide
    narrower = render(e, len(wide) - 1).split("\n")
    assert len(narrower) == 2 and narrower[1].strip().startswith(path)
    assert narrower[0] == wide[: wide.index(path)].rstrip()
    tight = render(e, 80).split("\n")
    assert len(tight) == 2 and len(tight[0]) <= 80 and "  " + f"{e['requests']:,}" in tight[0]
    assert tight[1].strip().startswith(_home(e["project"])) and path in tight[1]
    assert ("compaction" in tight[1]) == bool(e["compactions_observed"])
    assert main(["library", "--no-scan", "--limit", "0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == listed + 1 and listed > 1  # a line per session, and the count


def test_the_session_files_listing_fits_the_terminal(corpus: Path, home: Path) -> None:
    """``ctxviewer sessions``: the path on a line of its own in a terminal too narrow."""
    from ctxviewer.commands.sessions import _home, render
    from ctxviewer.ingest.discover import discover_sessions

    lay_out(corpus, home)
    found = discover_sessions()
    s = max(found, key=lambda x: len(x.path))
    wide = render(s, None)
    assert "\n" not in wide and _home(s.path) in wide
    head, below = render(s, len(wide) - 1).split("\n")
    assert wide == f"{head}  {below.strip()}" and below.strip().startswith(_home(s.path))
