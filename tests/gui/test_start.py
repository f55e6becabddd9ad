"""The window's start with a FILE: one that cannot be read (a folder, an empty file, a
missing one) is said in a dialog and the window lands on the library, not on an empty
session."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from library_tree import fake_home, lay_out  # noqa: E402

from ctxviewer.gui.app import open_at_start  # noqa: E402
from ctxviewer.gui.app_settings import AppSettings  # noqa: E402


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return fake_home(tmp_path, monkeypatch)


@pytest.mark.parametrize("kind", ["folder", "empty", "missing"])
def test_a_bad_file_at_start_lands_on_the_library(qtbot, window, corpus, home, tmp_path,
                                                   kind):
    files = lay_out(corpus, home)
    bad = tmp_path / "bad.jsonl"
    if kind == "folder":
        bad.mkdir()
    elif kind == "empty":
        bad.write_bytes(b"")
    window.show()
    open_at_start(window, str(bad), AppSettings())
    panel = window.panels["library"]
    qtbot.waitUntil(lambda: bool(window.errors), timeout=20000)
    title, message = window.errors[0]
    assert title == "Cannot open file" and "\n" not in message.strip()
    qtbot.waitUntil(lambda: panel.showing and not panel.scanner.busy and not panel.querying,
                    timeout=60000)
    assert panel.view.isVisible() and window.windowTitle() == "Library — ctxviewer"
    shown = {e["path"] for e in panel.view.shown_entries()}
    assert str(files["codex"]) in shown  # the scan ran: the library is listed
    assert len(window.errors) == 1


def test_a_good_file_at_start_opens_it(qtbot, window, corpus, home, open_and_wait):
    files = lay_out(corpus, home)
    with qtbot.waitSignal(window.state.session_loaded, timeout=20000):
        open_at_start(window, str(files["codex"]), AppSettings())
    assert not window.panels["library"].showing and not window.errors
