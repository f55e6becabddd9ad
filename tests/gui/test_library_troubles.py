"""The library page when its index or its files are in a bad way: a file name that is
no UTF-8, a smashed index, an index folder that cannot be written, a folder gone.
The page says what happened in its status line; nothing says "internal error"."""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from library_tree import fake_home, lay_out, recordings  # noqa: E402
from test_library_window import search, sessions_shown, settle, start  # noqa: E402

from ctxviewer.library import Library  # noqa: E402


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return fake_home(tmp_path, monkeypatch)


def said(panel) -> str:
    return panel.view.summary.text() + "\n" + panel.view.empty.text()


def test_a_file_name_that_is_no_utf8_is_listed_and_opens(qtbot, window, corpus, home, tmp_path):
    files = lay_out(corpus, home)
    odd = os.fsdecode(os.fsencode(str(files["codex"].parent)) + b"/rollout-caf\xe9.jsonl")
    os.rename(files["codex"], odd)
    panel = start(qtbot, window)
    view = panel.view
    entry = next(
        e
        for e in sessions_shown(view)
        if e["id"] in {x["id"] for x in view.entries if x["path"] == odd}
    )
    assert view.select(entry["id"])
    shown = view.tree.currentIndex().siblingAtColumn(9).data()
    assert shown == "rollout-caf\\xe9.jsonl"  # the byte, as it is
    with qtbot.waitSignal(window.state.session_loaded, timeout=20000):
        qtbot.keyClick(view.tree, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not window.loader.is_busy(), timeout=20000)
    assert window.state.session.path == odd and not window.errors


def _index(corpus: Path, home: Path, tmp_path: Path) -> tuple[Path, int]:
    lay_out(corpus, home)
    recordings(corpus, tmp_path / "rec")
    with Library() as lib:
        lib.add_folder(str(tmp_path / "rec"))
        lib.scan()
        return lib.path, lib.counts()["sessions"]


def test_an_index_with_a_garbage_header_is_built_again(qtbot, window, corpus, home, tmp_path):
    db_file, sessions = _index(corpus, home, tmp_path)
    db_file.write_bytes(b"overwritten by mistake " * 40 + db_file.read_bytes()[920:])
    panel = start(qtbot, window)
    assert len(sessions_shown(panel.view)) == sessions
    assert "the index was damaged (file is not a database)" in panel.view.summary.text()
    assert "internal error" not in said(panel) and not window.errors
    with Library() as lib:
        assert lib.folders() == [str(tmp_path / "rec")]


def test_a_text_that_does_not_decompress_is_found_by_a_search(
    qtbot, window, corpus, home, tmp_path
):
    db_file, sessions = _index(corpus, home, tmp_path)
    panel = start(qtbot, window)
    db = sqlite3.connect(str(db_file))
    db.execute("UPDATE bodies SET z = x'789c0000deadbeef'")
    db.commit()
    db.close()
    search(qtbot, panel, "TodoWrite")
    view = panel.view
    view.select(sessions_shown(view)[0]["id"])  # its matches: the texts are read
    qtbot.waitUntil(lambda: "damaged" in view.summary.text(), timeout=20000)
    qtbot.waitUntil(lambda: not panel.scanner.busy, timeout=60000)
    settle(qtbot, panel)
    qtbot.waitUntil(lambda: len(view.entries) == sessions, timeout=20000)  # built again
    assert "the index was damaged (a text it keeps does not decompress" in view.summary.text()
    assert "internal error" not in said(panel) and not window.errors
    view.select(sessions_shown(view)[0]["id"])
    qtbot.waitUntil(lambda: view.hits.list.topLevelItemCount() > 0, timeout=20000)  # read again


def test_an_index_folder_that_cannot_be_made_is_said(
    qtbot, window, corpus, home, tmp_path, monkeypatch
):
    lay_out(corpus, home)
    (tmp_path / "a-file").write_text("not a folder")
    monkeypatch.setenv("CTXVIEWER_LIBRARY_DIR", str(tmp_path / "a-file" / "library"))
    panel = window.panels["library"]
    panel.demo_if_empty = None
    panel.show_library()
    qtbot.waitUntil(lambda: not panel.scanner.busy, timeout=20000)
    settle(qtbot, panel)
    assert "cannot write the library's index in" in panel.view.summary.text()
    assert "cannot write the library's index in" in panel.view.empty.text()
    assert "internal error" not in said(panel) and not window.errors


def test_a_deleted_folder_is_said(qtbot, window, corpus, home, tmp_path):
    _index(corpus, home, tmp_path)
    shutil.rmtree(tmp_path / "rec")
    panel = start(qtbot, window)
    assert (
        f"the folder {tmp_path / 'rec'} you added is not there any more"
        in panel.view.summary.text()
    )
