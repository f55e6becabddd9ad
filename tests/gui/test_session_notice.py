"""What the window says when what it shows is not obvious: a file without model
requests (a Claude Code summary alone) sorts below the library's sessions, says what it
holds, and opens with an explanation; the bundled demo says it is the demo."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from library_tree import fake_home, lay_out, put  # noqa: E402

from ctxviewer.gui.app import open_at_start  # noqa: E402
from ctxviewer.gui.app_settings import AppSettings  # noqa: E402
from ctxviewer.gui.library import model as rows  # noqa: E402
from ctxviewer.resources import demo_session_path, is_demo  # noqa: E402

SUMMARY_ONLY = (
    "claude-code/chiphuyen__sniffly__tests_mock-data_-Users-chip-dev-ai-music_"
    "ff71dbed-a4f2-4284-a4fc-fe2fb90de929.jsonl"
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return fake_home(tmp_path, monkeypatch)


def summary_only(corpus: Path, home: Path) -> Path:
    """The corpus's Claude Code file holding one summary line, written just now (so that
    by date it is the newest session)."""
    path = put(
        corpus / SUMMARY_ONLY,
        home
        / ".claude"
        / "projects"
        / "-Users-chip-music"
        / "ff71dbed-a4f2-4284-a4fc-fe2fb90de929.jsonl",
    )
    os.utime(path, (time.time(), time.time()))
    return path


def listed(view) -> list[dict]:
    return [i.data(rows.ENTRY_ROLE) for i in view._session_indexes()]


def test_sessions_without_requests_sort_last_and_say_so(qtbot, window, corpus, home):
    lay_out(corpus, home)
    empty = str(summary_only(corpus, home))
    window.show()
    open_at_start(window, None, AppSettings())
    panel = window.panels["library"]
    qtbot.waitUntil(lambda: not panel.scanner.busy and not panel.querying, timeout=60000)
    view = panel.view
    for grouped in (True, False):
        view.grouped.setChecked(grouped)
        for column in (rows.SESSION, rows.REQUESTS, rows.FILE):
            for order in (Qt.SortOrder.DescendingOrder, Qt.SortOrder.AscendingOrder):
                view.tree.sortByColumn(column, order)
                shown = listed(view)
                assert shown[-1]["path"] == empty, (grouped, column, order)
                assert all(e["requests"] for e in shown[:-1])
    index = next(i for i in view._session_indexes() if i.data(rows.ENTRY_ROLE)["path"] == empty)
    prompt = index.siblingAtColumn(rows.PROMPT)
    assert prompt.data() == "no requests"
    tip = prompt.data(Qt.ItemDataRole.ToolTipRole)
    assert "No model requests in this file (122 bytes)" in tip
    assert "Claude Code keeps a file like this for a conversation's summary" in tip

    with qtbot.waitSignal(window.state.session_loaded, timeout=20000):
        view.tree.doubleClicked.emit(index)
    qtbot.waitUntil(lambda: not window.loader.is_busy(), timeout=20000)
    assert not panel.showing and window.state.session.requests == []
    assert window.notice.isVisible()
    text = window.notice.text()
    assert "ff71dbed-a4f2-4284-a4fc-fe2fb90de929.jsonl" in text
    assert "No model requests in this file (122 bytes)" in text and "summary" in text


def test_the_demo_says_it_is_the_demo(qtbot, window, corpus, home, open_and_wait):
    files = lay_out(corpus, home)
    window.show()
    open_and_wait(window, str(demo_session_path()))
    assert is_demo(window.state.session.path)
    assert window.notice.isVisible() and "demo session" in window.notice.text()
    window.notice.linkActivated.emit("library")  # its link goes to the library
    panel = window.panels["library"]
    assert panel.showing
    open_and_wait(window, str(files["codex"]))  # a session of one's own: nothing to say
    assert window.notice.isHidden()
