"""The window on a library whose text for search is still being indexed: every row is
listed at once, the search box and a search's summary say how far the text is, and the
search is complete once the second pass ends."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from library_tree import fake_home, lay_out, recordings  # noqa: E402
from test_library_window import search, sessions_shown, settle, start  # noqa: E402

from ctxviewer.library import Library  # noqa: E402
from ctxviewer.library.locks import Lock  # noqa: E402

SCAN = sys.modules.get("ctxviewer.library.scan") or __import__(
    "ctxviewer.library.scan", fromlist=["scan"]
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return fake_home(tmp_path, monkeypatch)


def test_search_says_it_is_still_indexing_until_the_text_is(
    qtbot, window, corpus, home, tmp_path, monkeypatch
):
    lay_out(corpus, home)
    recordings(corpus, tmp_path / "rec")
    with Library() as lib:
        lib.add_folder(str(tmp_path / "rec"))
        db_file = lib.path
    monkeypatch.setattr(SCAN, "POOL_MIN_BYTES", 1)  # a large scan, for this small tree:
    monkeypatch.setattr(SCAN, "POOL_MIN_JOBS", 1)  # rows first
    other = Lock(db_file.with_name(db_file.name + ".texts-lock"))
    assert other.try_exclusive()  # another process's second pass runs (it holds the lock)
    try:
        panel = window.panels["library"]
        panel.scanner.pool = panel.indexer.pool = False
        panel = start(qtbot, window)
        view = panel.view
        with Library() as lib:
            files = lib.indexing()["pending"]
            assert files and lib.indexing()["indexed"] == 0
            every = {e["id"] for e in lib.sessions()}
        assert {e["id"] for e in sessions_shown(view)} == every  # every row, at once
        qtbot.waitUntil(lambda: panel.indexer.busy and panel._texts is not None, timeout=10000)
        assert "still indexing the text: 0%" in view.search.placeholderText()
        search(qtbot, panel, "TodoWrite")
        assert sessions_shown(view) == []  # no text yet
        assert (
            view.empty.text() == "No session indexed so far holds: TodoWrite\n(still "
            f"indexing the text: 0 of {files} session files)"
        )
        assert (
            f"0 match so far: TodoWrite (0 requests); still indexing the text (0 of "
            f"{files} session files)" in view.summary.text()
        )
    finally:
        other.release()  # the other pass is gone: this window's does the work
    qtbot.waitUntil(lambda: not panel.indexer.busy, timeout=60000)
    settle(qtbot, panel)
    qtbot.waitUntil(lambda: bool(sessions_shown(view)), timeout=20000)
    settle(qtbot, panel)
    with Library() as lib:
        assert lib.indexing() == {"pending": 0, "indexed": files, "running": False}
        found = {e["id"] for e in lib.sessions(search="TodoWrite")}
    assert {e["id"] for e in sessions_shown(view)} == found != set()  # complete
    assert "still indexing" not in view.summary.text()
    assert "still indexing" not in view.search.placeholderText()
    assert f"{len(found)} match: TodoWrite" in view.summary.text()
