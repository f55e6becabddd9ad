"""The library against what a careless user, a full disk or a crash does to it: file
names that are no UTF-8, a smashed index, files changed behind its back, two scans
at once, folders that go away."""

from __future__ import annotations

import json
import os
import resource
import shutil
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


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return fake_home(tmp_path, monkeypatch)


def paths(lib: Library) -> set[str]:
    return {e["path"] for e in lib.sessions()}


def test_a_file_name_that_is_no_utf8_is_indexed(
    corpus: Path, home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = lay_out(corpus, home)
    recs = recordings(None, tmp_path / "rec")
    odd = os.fsdecode(os.fsencode(str(tmp_path / "rec")) + b"/caf\xe9-session.jsonl")
    os.rename(recs["demo"], odd)  # a name written in Latin-1: no UTF-8
    odd_dir = os.fsdecode(os.fsencode(str(home / ".claude" / "projects")) + b"/-home-\xff")
    os.mkdir(odd_dir)
    odd_cc = os.path.join(odd_dir, "2b1e0c8e-0000-4000-8000-0000000000ff.jsonl")
    os.link(files["vibe"], odd_cc)
    junk = os.path.join(odd_dir, "junk-\udcff.jsonl")  # and a bad file, its name in its reason
    Path(junk).write_bytes(b"{}\n")
    with Library() as lib:
        lib.add_folder(str(tmp_path / "rec"))
        stats = lib.scan()
        assert stats.bad == 1 and [b["path"] for b in lib.bad_files()] == [junk]
        assert {odd, odd_cc, str(files["codex"])} <= paths(lib)
        assert all(os.path.exists(p) for p in paths(lib))  # each name leads to its file
        assert lib.scan().read == 0  # the names compare as they were stored
    assert main(["library", "--no-scan", "--json"]) == 0
    listed = {e["path"] for e in json.loads(capsys.readouterr().out)["sessions"]}
    assert str(tmp_path / "rec" / "caf\\xe9-session.jsonl") in listed  # the byte, shown
    assert main(["library", "--no-scan", "--search", "TodoWrite"]) == 0
    assert "-home-\\xff" in capsys.readouterr().out
    assert main(["library", "--no-scan", "--bad"]) == 0
    assert "junk-\\xff.jsonl: " in capsys.readouterr().out
    os.unlink(odd)
    with Library() as lib:
        assert lib.scan().removed == 1 and odd not in paths(lib)


def _indexed(corpus: Path, home: Path, tmp_path: Path) -> tuple[Path, dict]:
    """The corpus laid out, a folder added, scanned: the index file and its counts."""
    lay_out(corpus, home)
    recordings(corpus, tmp_path / "rec")
    with Library() as lib:
        lib.add_folder(str(tmp_path / "rec"))
        lib.scan()
        counts = lib.counts()
        db_file = lib.path
    return db_file, counts  # closed: the WAL is in the file


def _page_of(db_file: Path, table: str) -> tuple[int, int]:
    db = sqlite3.connect(str(db_file))
    try:
        root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()
        size = db.execute("PRAGMA page_size").fetchone()[0]
    finally:
        db.close()
    return (root[0] - 1) * size, size


def _smash(db_file: Path, how: str) -> list[str]:
    """Damage the index as ``how`` says; the command line that finds it."""
    data = bytearray(db_file.read_bytes())
    if how == "truncated":
        db_file.write_bytes(data[: len(data) // 3])
    elif how == "zero-length":
        db_file.write_bytes(b"")
    elif how == "garbage header":
        db_file.write_bytes(b"this is no database, it was overwritten" * 3 + data[117:])
    elif how == "bad page":  # the sessions table's first page: every listing reads it
        at, size = _page_of(db_file, "sessions")
        data[at : at + size] = bytes(range(256)) * (size // 256)
        db_file.write_bytes(bytes(data))
    elif how == "bad page, rescan":
        at, size = _page_of(db_file, "files")
        data[at : at + size] = b"\xff" * size
        db_file.write_bytes(bytes(data))
        return ["library", "--rescan", "--json"]
    elif how == "bad text":
        db = sqlite3.connect(str(db_file))
        db.execute("UPDATE bodies SET z = x'789c0000deadbeef'")
        db.commit()
        db.close()
        return ["library", "--json", "--search", "TodoWrite"]
    return ["library", "--json"]


@pytest.mark.parametrize(
    "how",
    ["truncated", "zero-length", "garbage header", "bad page", "bad page, rescan", "bad text"],
)
def test_a_smashed_index_is_built_again_and_the_folders_kept(
    corpus: Path, home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    db_file, counts = _indexed(corpus, home, tmp_path)
    with Library() as lib:
        searched = {e["path"] for e in lib.sessions(search="TodoWrite")}
    assert searched
    command = _smash(db_file, how)
    assert main(command) == 0
    out, err = capsys.readouterr()
    said = [line for line in err.splitlines() if line.startswith("ctxviewer: library: ")]
    assert len(said) == 1 and ("damaged" in said[0] or "empty" in said[0]), err
    assert "internal error" not in err and "Traceback" not in err
    listing = json.loads(out)
    assert listing["folders"] == [str(tmp_path / "rec")]  # the user's folders are kept
    assert listing["counts"] == counts  # every file read again
    if "--search" in command:
        assert {e["path"] for e in listing["sessions"]} == searched
    assert main(["library", "--json"]) == 0  # said once: the next run is quiet
    out, err = capsys.readouterr()
    assert err == "" and json.loads(out)["counts"] == counts


def test_a_damaged_index_another_connection_holds_is_not_deleted(
    corpus: Path, home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ctxviewer.library.index_file import IndexDamaged

    db_file, _ = _indexed(corpus, home, tmp_path)
    _smash(db_file, "bad page")
    with Library() as other:  # open elsewhere (another thread, another ctxviewer)
        with Library() as lib, pytest.raises(IndexDamaged, match="another ctxviewer"):
            lib.sessions()
        assert main(["library", "--no-scan"]) == 1
        err = capsys.readouterr().err
        assert err.startswith("ctxviewer: the library's index") and err.count("\n") == 1
        assert db_file.stat().st_size > 0 and other.folders() == [str(tmp_path / "rec")]
    assert main(["library", "--no-scan", "--json"]) == 0  # closed: now it is rebuilt
    assert "damaged" in capsys.readouterr().err


def test_the_folders_an_earlier_index_held_move_beside_it(
    corpus: Path, home: Path, tmp_path: Path
) -> None:
    db_file, counts = _indexed(corpus, home, tmp_path)
    (db_file.parent / "folders.json").unlink()  # as an index of schema 3 kept them:
    db = sqlite3.connect(str(db_file))  # in a table of its own
    db.execute("CREATE TABLE folders (path TEXT PRIMARY KEY, added TEXT NOT NULL)")
    db.execute("INSERT INTO folders VALUES (?, '2025-01-02T03:04:05')", (str(tmp_path / "rec"),))
    db.commit()
    db.close()
    with Library() as lib:
        assert lib.folders() == [str(tmp_path / "rec")] and lib.notes == []
        assert lib.counts() == counts
    saved = json.loads((db_file.parent / "folders.json").read_text())
    assert saved == [{"path": str(tmp_path / "rec"), "added": "2025-01-02T03:04:05"}]


def _edit_in_place(path: Path) -> None:
    """Change one digit of the first output token count, the size and times kept (as a
    tool that restores the modification time would)."""
    import re

    st = path.stat()
    data = path.read_bytes()
    m = re.search(rb'"output_tokens": ?(\d+)', data)
    assert m is not None
    digit = m.start(1)
    new = b"7" if data[digit : digit + 1] != b"7" else b"3"
    path.write_bytes(data[:digit] + new + data[digit + 1 :])
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        st.st_size,
        st.st_mtime_ns,
        st.st_ino,
    )


@pytest.mark.parametrize("recent", [True, False], ids=["state kept", "old file"])
def test_a_file_changed_in_place_with_its_size_and_time_is_read_again(
    corpus: Path, home: Path, recent: bool
) -> None:
    from ctxviewer.analysis.analysis import Analysis
    from ctxviewer.analysis.session_summary import summarize
    from ctxviewer.ingest.loader import load

    files = lay_out(corpus, home)
    path = files["vibe"]
    if not recent:
        os.utime(path, (1_600_000_000, 1_600_000_000))
    with Library() as lib:
        lib.scan()
        before = {e["path"]: e for e in lib.sessions()}[str(path)]
        _edit_in_place(path)
        stats = lib.scan()
        after = {e["path"]: e for e in lib.sessions()}[str(path)]
    assert stats.read == 1 and stats.resumed == 0 and stats.bytes_read == path.stat().st_size
    want = summarize(Analysis(load(str(path)))).as_dict()
    assert after["cost_usd"] == want["cost_usd"] != before["cost_usd"]


def test_an_index_of_schema_3_notes_the_ctimes_without_reading(corpus: Path, home: Path) -> None:
    files = lay_out(corpus, home)
    with Library() as lib:
        lib.scan()
        db_file = lib.path
    db = sqlite3.connect(str(db_file))
    db.execute("ALTER TABLE files DROP COLUMN ctime_ns")
    db.execute("PRAGMA user_version=3")
    db.commit()
    db.close()
    with Library() as lib:
        assert lib.scan().read == 0  # nothing read again, the ctimes noted
        assert lib.db.execute("SELECT count(*) FROM files WHERE ctime_ns IS NULL").fetchone() == (
            0,
        )
        _edit_in_place(files["codex"])
        assert lib.scan().read_paths == [str(files["codex"])]


def _cli(
    *args: str,
    preexec: object = None,
    wrap: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``ctxviewer ARGS`` in a process of its own, with this test's environment."""
    command = [*(wrap or []), sys.executable, "-m", "ctxviewer", *args]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        preexec_fn=preexec,
        env={**os.environ, **(env or {})},
    )  # type: ignore[arg-type]


def _read_only(folder: Path) -> list[str] | None:
    """A command prefix under which ``folder`` cannot be written (None: none here). Root
    writes whatever the modes say: for root, a read-only bind mount in a namespace of
    its own; for others, the folder's mode."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        return []
    if shutil.which("unshare") is None:
        return None
    script = (
        f'mount --bind "{folder}" "{folder}" && mount -o remount,bind,ro "{folder}" '
        f'"{folder}" && exec "$0" "$@"'
    )
    wrap = ["unshare", "-m", "sh", "-c", script]
    probe = subprocess.run(
        [*wrap, "touch", str(folder / "probe")], capture_output=True, check=False
    )
    return wrap if probe.returncode != 0 and b"Read-only" in probe.stderr else None


@pytest.mark.parametrize("existing", [False, True], ids=["no index yet", "an index"])
def test_a_read_only_library_folder_is_one_line(
    corpus: Path, home: Path, tmp_path: Path, existing: bool
) -> None:
    lay_out(corpus, home)
    folder = tmp_path / "library"
    folder.mkdir()
    if existing:
        with Library() as lib:
            lib.scan()
    wrap = _read_only(folder)
    if wrap is None:
        pytest.skip("no way to make a folder read-only for this user here")
    try:
        done = _cli("library", wrap=wrap)
    finally:
        folder.chmod(0o755)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith(f"ctxviewer: cannot write the library's index in {folder} (")
    assert done.stderr.count("\n") == 1 and "internal error" not in done.stderr


def _small_disk() -> None:  # in the child: files may not grow past 1.5 MB (a full disk)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1_500_000, 1_500_000))


def test_a_full_disk_stops_the_scan_and_lists_what_the_index_holds(
    corpus: Path, home: Path, tmp_path: Path
) -> None:
    files = lay_out(corpus, home)
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(6):  # less than a large scan: every file read in full, the text too
        shutil.copyfile(files["spotter"], folder / f"copy-{i:02}.jsonl")
    with Library() as lib:
        lib.add_folder(str(folder))
    full = _cli("library", "--json", preexec=_small_disk)
    assert full.returncode == 1, full.stderr
    said = full.stderr.splitlines()
    assert (
        len(said) == 1
        and said[0].startswith("ctxviewer: library: the index could not be written (")
        and "not read" in said[0]
    )
    scan = json.loads(full.stdout)["scan"]
    assert scan["failed"] and scan["read"] < len(files) - 2 + 6
    done = _cli("library", "--json")  # room again: the rest is read
    assert done.returncode == 0 and done.stderr == ""
    listing = json.loads(done.stdout)
    assert listing["counts"]["sessions"] == len(files) - 2 + 6
    db = sqlite3.connect(str(tmp_path / "library" / "library.sqlite3"))
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    db.close()


def test_two_scans_at_once_read_each_file_once(corpus: Path, home: Path, tmp_path: Path) -> None:
    files = lay_out(corpus, home)
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(40):
        shutil.copyfile(files["spotter"], folder / f"copy-{i:02}.jsonl")
    total = len(files) - 2 + 40
    with Library() as lib:
        lib.add_folder(str(folder))
        db_file = lib.path
    command = [sys.executable, "-m", "ctxviewer", "library", "--json", "--workers", "1"]
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and first.poll() is None:
            try:
                with sqlite3.connect(f"file:{db_file}?mode=ro", uri=True, timeout=1) as db:
                    if db.execute("SELECT count(*) FROM sessions").fetchone()[0] >= 2:
                        break
            except sqlite3.OperationalError:
                pass
            time.sleep(0.05)
        assert first.poll() is None, "the first scan ended before the second began"
        second = _cli("library", "--json")  # waits for the first, then finds it done
        out, err = first.communicate(timeout=300)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert first.returncode == 0 and second.returncode == 0, err + second.stderr
    a, b = json.loads(out), json.loads(second.stdout)
    assert a["scan"]["read"] == total and b["scan"]["read"] == 0
    assert a["counts"] == b["counts"] and b["counts"]["sessions"] == total
    assert a["indexing"]["running"] and b["indexing"]["running"]  # one second pass, started
    _index_texts_ended()  # by the first


def _index_texts_ended(timeout: float = 120) -> None:
    """Wait for the second pass a command started in the background."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with Library() as lib:
            now = lib.indexing()
        if not now["pending"] and not now["running"]:
            return
        time.sleep(0.2)
    raise AssertionError(f"the second pass did not end: {now}")


def test_an_added_folder_that_was_deleted_is_said(
    corpus: Path, home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lay_out(corpus, home)
    recs = recordings(corpus, tmp_path / "rec")
    with Library() as lib:
        lib.add_folder(str(tmp_path / "rec"))
        before = lib.scan()
    shutil.rmtree(tmp_path / "rec")
    assert main(["library", "--json"]) == 0
    out, err = capsys.readouterr()
    listing = json.loads(out)
    assert listing["scan"]["removed"] == len(recs) and before.read > len(recs)
    assert listing["scan"]["missing_folders"] == listing["folders"] == [str(tmp_path / "rec")]
    assert (
        err == f"ctxviewer: library: the folder {tmp_path / 'rec'} you added is not there "
        f"any more: its sessions left the library (--remove-folder {tmp_path / 'rec'} "
        "forgets it)\n"
    )
    assert not any(e["path"].startswith(str(tmp_path / "rec")) for e in listing["sessions"])
