"""Every action reachable from the library page shows its result: attaching to a
session, the recording proxy, View's tabs and Go's requests leave the library for the
session's views, and the status bar (its messages, the proxy's indicator) stays."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "proxy"))
from library_tree import fake_home, lay_out  # noqa: E402
from live_helpers import panel_of, requests_in, shown  # noqa: E402

from ctxviewer.gui.app import open_at_start  # noqa: E402
from ctxviewer.gui.app_settings import AppSettings  # noqa: E402
from ctxviewer.gui.live.attach_dialog import PATH_ROLE  # noqa: E402


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return fake_home(tmp_path, monkeypatch)


def on_library(qtbot, window):
    window.resize(1200, 800)
    window.show()
    open_at_start(window, None, AppSettings())
    panel = window.panels["library"]
    qtbot.waitUntil(lambda: not panel.scanner.busy and not panel.querying, timeout=60000)
    assert panel.showing and not panel.view.isHidden()
    return panel


def test_attach_from_the_library_shows_the_followed_session(qtbot, window, corpus, home):
    files = lay_out(corpus, home)
    library = on_library(qtbot, window)
    live = panel_of(window)
    dialog = live.show_attach_dialog()
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: bool(dialog.visible_paths()), timeout=10000)
    codex = str(files["codex"])
    dialog.tree.setCurrentItem(next(it for it in dialog.items() if it.data(0, PATH_ROLE) == codex))
    dialog.attach_button.click()
    qtbot.waitUntil(
        lambda: window.state.session is not None and window.state.session.path == codex,
        timeout=10000,
    )
    assert live.follower.is_following()
    assert not library.showing and window.requests.isVisible() and window.tabs.isVisible()
    assert shown(window) == requests_in(codex)
    assert window.windowTitle().startswith(Path(codex).name)
    assert live.live_label.isVisible()  # "● live" in the status bar


def test_follow_live_from_the_library_shows_the_session(qtbot, window, corpus, home, open_and_wait):
    files = lay_out(corpus, home)
    library = on_library(qtbot, window)
    open_and_wait(window, str(files["qwen"]))
    library.action.trigger()
    assert library.showing
    live = panel_of(window)
    live.follow.trigger()
    assert live.follower.is_following() and not library.showing
    assert window.requests.isVisible()


def test_proxy_from_the_library_shows_its_status(qtbot, window, corpus, home, upstream, tmp_path):
    lay_out(corpus, home)
    library = on_library(qtbot, window)
    live = panel_of(window)
    dialog = live.show_proxy_dialog()
    qtbot.addWidget(dialog)
    dialog.port.setValue(0)
    dialog.upstream.setText(upstream.url)
    dialog.openai_upstream.setText(upstream.url)
    dialog.out.setText(str(tmp_path / "rec" / "live.jsonl"))
    dialog.start_button.click()
    assert live.proxy.running
    assert not library.showing and window.requests.isVisible()
    assert live.proxy_label.isVisible()
    assert live.proxy_label.text() == f"proxy :{live.proxy.port} recording 0 exchanges"
    library.action.trigger()  # the library again: the proxy's indicator stays in sight
    assert library.showing and live.proxy_label.isVisible()
    assert window.status.isVisible() and window.status.info.isHidden()
    live.stop_proxy.trigger()
    assert "Proxy stopped" in window.status.currentMessage()
    library.show_sessions()  # the session's part of the bar is back once the message ends
    assert window.status.info.isHidden()
    window.status.clearMessage()
    assert not window.status.info.isHidden()


def test_view_and_go_from_the_library_show_the_session(qtbot, window, corpus, home, open_and_wait):
    files = lay_out(corpus, home)
    library = on_library(qtbot, window)
    open_and_wait(window, str(files["qwen"]))
    for trigger in (
        window.actions_.show_timeline.trigger,
        window.actions_.first.trigger,
        lambda: window.panels["help_menu"].tab_actions[-1].trigger(),
    ):
        library.action.trigger()
        assert library.showing
        trigger()
        assert not library.showing and window.tabs.isVisible()
    assert window.state.index == 0


def test_the_proxys_default_recording_is_in_the_librarys_folder(home):
    from ctxviewer.gui.live.proxy_control import default_output
    from ctxviewer.ingest.discover import recordings_folder

    assert Path(default_output()).parent == recordings_folder() == home / "ctxviewer-recordings"
