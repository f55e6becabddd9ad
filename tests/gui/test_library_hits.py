"""A search's matches in the picked session, under the library's table: the requests
that hold the words, with the text around them; one activated opens the session at
that request."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from library_tree import fake_home, lay_out  # noqa: E402
from test_library_window import search, sessions_shown, settle, start  # noqa: E402

from ctxviewer.ingest import load  # noqa: E402
from ctxviewer.library.content import request_texts  # noqa: E402


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return fake_home(tmp_path, monkeypatch)


def rare_word(texts: list[str]) -> tuple[str, list[int]]:
    """A word of a session's request texts found in few of them, and which (not only in
    its last request: opening a session shows the last one anyway)."""
    where: dict[str, set[int]] = {}
    for i, t in enumerate(texts):
        for w in re.findall(r"[A-Za-z]{7,}", t):
            where.setdefault(w.lower(), set()).add(i)
    last = len(texts) - 1
    word, found = min(
        ((w, s) for w, s in where.items() if max(s) < last), key=lambda kv: (len(kv[1]), kv[0])
    )
    return word, sorted(found)


def test_a_match_opens_its_session_at_its_request(qtbot, window, corpus, home):
    files = lay_out(corpus, home)
    path = str(files["codex"])
    texts = request_texts(load(path).requests)
    word, where = rare_word(texts)
    window.resize(1400, 900)
    panel = start(qtbot, window)
    view = panel.view
    search(qtbot, panel, word)
    assert not view.hits.isHidden() and "Pick a session" in view.hits.label.text()
    entry = next(e for e in sessions_shown(view) if e["path"] == path)
    view.select(entry["id"])
    qtbot.waitUntil(lambda: view.hits.list.topLevelItemCount() == len(where), timeout=20000)
    shown = [view.hits.list.topLevelItem(i) for i in range(len(where))]
    assert [int(i.text(0)) for i in shown] == where
    assert all(f"[{word}]" in i.text(1).lower() for i in shown)
    assert word in view.hits.label.text()
    with qtbot.waitSignal(window.loader.loaded, timeout=30000):
        view.hits.list.setCurrentItem(shown[0])
        view.hits.list.itemActivated.emit(shown[0], 0)
    qtbot.waitUntil(lambda: window.state.index == where[0], timeout=10000)
    assert not panel.showing and window.state.session.path == path
    # the request shown is the one the library found the word in
    assert word in request_texts(window.state.session.requests)[window.state.index].lower()


def test_no_search_no_pane_and_a_new_search_asks_again(qtbot, window, corpus, home):
    files = lay_out(corpus, home)
    path = str(files["codex"])
    word, _ = rare_word(request_texts(load(path).requests))
    panel = start(qtbot, window)
    view = panel.view
    assert view.hits.isHidden()
    search(qtbot, panel, word)
    view.select(next(e["id"] for e in sessions_shown(view) if e["path"] == path))
    qtbot.waitUntil(lambda: view.hits.list.topLevelItemCount() > 0, timeout=20000)
    search(qtbot, panel, "zzqqxxnotaword")  # nothing matches: the page says so
    assert view.hits.isHidden() and view.hits.list.topLevelItemCount() == 0
    search(qtbot, panel, "")
    assert view.hits.isHidden()


def test_the_page_starts_in_the_search_box_and_down_goes_to_the_rows(qtbot, window, corpus, home):
    """Typing on the library page searches: before, the focus fell on Open file… (the
    table was hidden while the scan started) and the first space opened a dialog."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    lay_out(corpus, home)
    window.show()
    window.activateWindow()
    qtbot.waitExposed(window)
    panel = start(qtbot, window)
    view = panel.view
    qtbot.waitUntil(lambda: QApplication.focusWidget() is view.search, timeout=5000)
    qtbot.keyClicks(view.search, "flux ")  # a space, where the button took it
    assert view.search.text() == "flux " and not window.errors
    view.search.clear()
    settle(qtbot, panel)
    qtbot.keyClick(view.search, Qt.Key.Key_Down)
    assert QApplication.focusWidget() is view.tree
    assert view.current_entry() == sessions_shown(view)[0]


def test_ctrl_f_goes_to_the_search_and_escape_ends_it(qtbot, window, corpus, home):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    files = lay_out(corpus, home)
    word, _ = rare_word(request_texts(load(str(files["codex"])).requests))
    window.show()
    window.activateWindow()
    qtbot.waitExposed(window)
    panel = start(qtbot, window)
    view = panel.view
    view.tree.setFocus()
    window.actions_.find.trigger()  # Ctrl+F: the library's search, not the hidden session's
    assert QApplication.focusWidget() is view.search
    search(qtbot, panel, word)
    assert view.matches is not None and not view.hits.isHidden()
    qtbot.keyClick(view.search, Qt.Key.Key_Escape)
    settle(qtbot, panel)
    assert view.search.text() == "" and view.matches is None and view.hits.isHidden()
