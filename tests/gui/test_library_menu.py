"""The library table's right-click menu: open, copy the path, show the folder; a
project's row copies the project's path."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QGuiApplication

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from library_tree import fake_home, lay_out  # noqa: E402
from test_library_window import sessions_shown, start  # noqa: E402

from ctxviewer.gui.library import model as rows  # noqa: E402
from ctxviewer.gui.session.context_menus import actions_of  # noqa: E402


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return fake_home(tmp_path, monkeypatch)


def test_a_session_row_opens_copies_and_shows_its_folder(qtbot, window, corpus, home):
    files = lay_out(corpus, home)
    path = str(files["qwen"])
    panel = start(qtbot, window)
    view, menus = panel.view, panel.row_menu
    entry = next(e for e in sessions_shown(view) if e["path"] == path)
    index = next(i for i in view._session_indexes() if i.data(rows.ENTRY_ROLE)["id"] == entry["id"])
    acts = actions_of(menus.menu_for(index))
    assert list(acts) == ["Open", "Copy path", "Show in folder", "Copy project path"]
    acts["Copy path"].trigger()
    assert QGuiApplication.clipboard().text() == path
    acts["Copy project path"].trigger()
    assert QGuiApplication.clipboard().text() == entry["project"]
    shown: list[str] = []
    menus.reveal = lambda url: shown.append(url.toLocalFile()) or True
    acts["Show in folder"].trigger()
    assert shown == [os.path.dirname(path)] and not window.errors
    menus.reveal = lambda url: False  # no file manager
    acts["Show in folder"].trigger()
    assert window.errors and window.errors[-1][0] == "Cannot show the folder"
    with qtbot.waitSignal(window.loader.loaded, timeout=30000):
        acts["Open"].trigger()
    assert window.state.session.path == path and not panel.showing


def test_a_project_row_copies_the_project(qtbot, window, corpus, home):
    lay_out(corpus, home)
    panel = start(qtbot, window)
    view = panel.view
    top = next(
        view.proxy.index(r, 0)
        for r in range(view.proxy.rowCount())
        if isinstance(view.proxy.index(r, 0).data(rows.PROJECT_ROLE), str)
        and view.proxy.index(r, 0).data(rows.PROJECT_ROLE) != rows.NO_PROJECT
    )
    acts = actions_of(panel.row_menu.menu_for(top))
    assert list(acts) == ["Copy project path"]
    acts["Copy project path"].trigger()
    assert QGuiApplication.clipboard().text() == top.data(rows.PROJECT_ROLE)
