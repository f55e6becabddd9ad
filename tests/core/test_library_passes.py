"""Rows first: a large scan writes every session's row, and a second pass reads the
files in full for their text (search) and the summary's details. Until it ends a
search says how far it is; after it, the library is what one pass gives; stopped
or killed, it resumes."""

from __future__ import annotations

import importlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from library_tree import fake_home, lay_out, recordings

from ctxviewer.cli import main
from ctxviewer.library import Library

# the module (a Library method is named scan too); imported on first use by the package
SCAN = importlib.import_module("ctxviewer.library.scan")

SEARCHES = ("TodoWrite", "the file", '"git status"', "function return")
ROW_KEYS = (
    "agent",
    "agent_label",
    "project",
    "model",
    "start",
    "end",
    "requests",
    "main_requests",
    "peak_prompt_tokens",
    "peak_request",
    "window",
    "peak_share",
    "compactions_observed",
    "compactions_predicted",
    "cost_usd",
    "cache_hit_rate",
    "path",
    "part",
    "parts",
    "size",
    "mtime",
    "prompt_series",
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return fake_home(tmp_path, monkeypatch)


def _tree(corpus: Path, home: Path, tmp_path: Path) -> Path:
    lay_out(corpus, home)
    recordings(corpus, tmp_path / "rec")
    with Library() as lib:
        lib.add_folder(str(tmp_path / "rec"))
    return tmp_path / "rec"


def _by_file(entries: list[dict]) -> dict[tuple[str, int], dict]:
    return {(e["path"], e["part"]): {k: v for k, v in e.items() if k != "id"} for e in entries}


def _one_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder: Path) -> tuple:
    """What a library read in one pass lists and finds (in a folder of its own)."""
    monkeypatch.setenv("CTXVIEWER_LIBRARY_DIR", str(tmp_path / "one-pass"))
    with Library() as lib:
        lib.add_folder(str(folder))
        lib.scan(two_pass=False)
        out = (_by_file(lib.sessions()), {q: _by_file(lib.sessions(search=q)) for q in SEARCHES})
    monkeypatch.setenv("CTXVIEWER_LIBRARY_DIR", str(tmp_path / "library"))
    return out


def test_the_rows_come_first_and_the_text_after(
    corpus: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _tree(corpus, home, tmp_path)
    rows, found = _one_pass(tmp_path, monkeypatch, folder)
    assert all(found.values())
    with Library() as lib:
        first = lib.scan(two_pass=True)
        files = len({path for path, _ in rows})
        assert first.read == files
        assert lib.indexing() == {"pending": files, "indexed": 0, "running": False}
        listed = _by_file(lib.sessions())
        assert listed.keys() == rows.keys()
        for key, row in rows.items():  # every row's numbers, before any text
            assert {k: listed[key][k] for k in ROW_KEYS} == {k: row[k] for k in ROW_KEYS}
            assert listed[key]["top_sources"] == listed[key]["top_categories"] == []
        assert lib.sessions(search="TodoWrite") == []  # no text yet
        assert lib.db.execute("SELECT count(*) FROM bodies").fetchone() == (0,)
        second = lib.index_texts()
        assert second is not None and second.read == first.read
        assert lib.indexing() == {"pending": 0, "indexed": files, "running": False}
        assert _by_file(lib.sessions()) == rows  # the library one pass gives
        assert {q: _by_file(lib.sessions(search=q)) for q in SEARCHES} == found
        assert lib.scan().read == 0 and lib.index_texts().read == 0  # nothing left


def test_a_stopped_second_pass_resumes(
    corpus: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _tree(corpus, home, tmp_path)
    rows, found = _one_pass(tmp_path, monkeypatch, folder)
    with Library() as lib:
        lib.scan(two_pass=True)
        total = lib.indexing()["pending"]
        asked: list[int] = []

        def after_three() -> bool:  # asked before each file: three are read
            asked.append(1)
            return len(asked) > 3

        stopped = lib.index_texts(pool=False, cancelled=after_three)
        assert stopped is not None and stopped.cancelled
        left = lib.indexing()["pending"]
        assert left == total - 3
        done = lib.index_texts()
        assert done is not None and done.read == left  # only what was left
        assert _by_file(lib.sessions()) == rows
        assert {q: _by_file(lib.sessions(search=q)) for q in SEARCHES} == found


def test_a_killed_second_pass_resumes(corpus: Path, home: Path, tmp_path: Path) -> None:
    laid = lay_out(corpus, home)
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(40):
        (folder / f"copy-{i:02}.jsonl").write_bytes(laid["spotter"].read_bytes())
    with Library() as lib:
        lib.add_folder(str(folder))
        lib.scan(two_pass=True)
        total = lib.indexing()["pending"]
        db_file = lib.path
    code = "from ctxviewer.library import Library; Library().index_texts(pool=False)"
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            with sqlite3.connect(f"file:{db_file}?mode=ro", uri=True, timeout=5) as db:
                if (
                    db.execute(
                        "SELECT count(*) FROM files WHERE pending = 0 AND parent IS NULL"
                    ).fetchone()[0]
                    >= 3
                ):
                    break
            time.sleep(0.05)
        assert proc.poll() is None, "the second pass ended before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    with Library() as lib:
        left = lib.indexing()["pending"]
        assert 0 < left < total - 2
        assert lib.index_texts().read == left
        assert lib.indexing()["pending"] == 0
        hits = lib.sessions(search="Bash")  # a tool every copy calls
        assert {e["path"] for e in hits} >= {str(folder / f"copy-{i:02}.jsonl") for i in range(40)}
        assert lib.db.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def _wait_indexed(timeout: float = 120) -> dict:
    """The background second pass has ended (its process gone, every text read)."""
    deadline = time.monotonic() + timeout
    while True:
        with Library() as lib:
            now = lib.indexing()
        if not now["pending"] and not now["running"] or time.monotonic() > deadline:
            return now
        time.sleep(0.2)


def test_the_command_indexes_the_text_in_the_background(
    corpus: Path,
    home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = _tree(corpus, home, tmp_path)
    rows, found = _one_pass(tmp_path, monkeypatch, folder)
    monkeypatch.setattr(SCAN, "POOL_MIN_BYTES", 1)  # a large scan, for this small tree
    monkeypatch.setattr(SCAN, "POOL_MIN_JOBS", 1)
    try:
        assert main(["library", "--json", "--search", "TodoWrite"]) == 0
        out = json.loads(capsys.readouterr().out)
        files = len({path for path, _ in rows})
        assert out["indexing"]["pending"] + out["indexing"]["indexed"] == files
        assert out["indexing"]["running"]  # started, in a process of its own
        assert main(["library", "--no-scan", "--search", "TodoWrite"]) == 0
        text = capsys.readouterr().out
        if "still indexing" in text:  # the background pass may already be done
            assert (
                "session files done): the sessions not indexed yet are not in these results" in text
            )
    finally:
        now = _wait_indexed()
    assert now["pending"] == 0 and not now["running"]
    assert main(["library", "--no-scan", "--json", "--search", "TodoWrite"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert _by_file(out["sessions"]) == found["TodoWrite"]
    assert out["indexing"] == {"pending": 0, "indexed": files, "running": False}
    assert main(["library", "--no-scan", "--search", "TodoWrite"]) == 0
    assert "indexing" not in capsys.readouterr().out


def test_index_text_does_it_in_the_foreground(
    corpus: Path, home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _tree(corpus, home, tmp_path)
    with Library() as lib:
        lib.scan(two_pass=True)
        assert lib.indexing()["pending"]
    assert main(["library", "--no-scan", "--index-text", "--json", "--search", "TodoWrite"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["indexing"]["pending"] == 0 and not out["indexing"]["running"]
    assert out["sessions"]
    assert os.environ["CTXVIEWER_LIBRARY_DIR"] == str(tmp_path / "library")


def test_the_row_readers_give_the_full_reads_numbers(corpus: Path, data: Path) -> None:
    """Every corpus log of a format with a row reader: its rows are those of a full read
    (or it declines, and the scan reads it in full); what was left out comes empty. A
    Codex rollout has none (its reader's compaction and estimates want every item)."""
    from ctxviewer.library.reading import FileJob, Job, read_group
    from ctxviewer.library.rows import Declined, lean_session

    logs = sorted(
        [
            *corpus.glob("claude-code/*.jsonl"),
            *corpus.glob("gemini-cli/*"),
            *data.glob("gemini_*"),
            *data.glob("qwen_*.jsonl"),
        ]
    )
    read = declined = 0
    for log in logs:
        try:
            lean_session(str(log))
        except Declined:
            declined += 1
            continue
        whole = read_group(Job((FileJob(str(log)),)))
        rows = read_group(Job((FileJob(str(log)),), full=False))
        assert not rows.full and len(rows.parts) == len(whole.parts), log.name
        for r, w in zip(rows.parts, whole.parts, strict=True):
            assert {k: r.summary[k] for k in ROW_KEYS if k in r.summary} == {
                k: w.summary[k] for k in ROW_KEYS if k in w.summary
            }, log.name
            assert r.series == w.series and r.texts == [], log.name
            assert (
                r.summary["top_categories"]
                == r.summary["subagent_runs"]
                == r.summary["top_sources"]
                == []
            )
        read += 1
    assert read >= 15 and declined <= 2, (read, declined)
    with pytest.raises(Declined, match="no row reader for codex"):  # read in full
        lean_session(str(next(corpus.glob("codex/*.jsonl"))))


def test_a_compressed_log_cut_short_is_read_in_full_for_its_row(
    corpus: Path, tmp_path: Path
) -> None:
    """A compressed transcript cut short: its row reader declines (it was marked a bad
    file, an internal error, and left out of the library), and the full read lists the
    requests before the cut, as a one-pass scan does."""
    import gzip

    log = (
        corpus
        / "claude-code"
        / ("marot__spotter__test_fixtures_transcripts_fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")
    )
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(gzip.compress(log.read_bytes())[:20_000])
    from ctxviewer.library.reading import FileJob, Job
    from ctxviewer.library.scan import safe_read

    rows = safe_read(Job((FileJob(str(cut)),), full=False))
    assert rows.error is None and rows.parts and rows.parts[0].summary["requests"] > 0
    whole = safe_read(Job((FileJob(str(cut)),)))
    assert rows.parts[0].series == whole.parts[0].series
    assert {k: rows.parts[0].summary[k] for k in ROW_KEYS if k in whole.parts[0].summary} == {
        k: whole.parts[0].summary[k] for k in ROW_KEYS if k in whole.parts[0].summary
    }
