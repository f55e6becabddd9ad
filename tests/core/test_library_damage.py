"""The library against what a careless user, a full disk or a crash does to it: file
names that are no UTF-8, a smashed index, files changed behind its back, two scans
at once, folders that go away."""

from __future__ import annotations

import json
import os
import sqlite3
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


def test_a_file_name_that_is_no_utf8_is_indexed(corpus: Path, home: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
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
