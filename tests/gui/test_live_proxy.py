"""The recording proxy started from the GUI: the window follows its recording live."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

anthropic = pytest.importorskip("anthropic")
pytest.importorskip("aiohttp")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "proxy"))
from live_helpers import panel_of, shown
from proxy_fakes import API_KEY, FakeUpstream


def _send(url: str, text: str) -> None:
    with anthropic.Anthropic(base_url=url, api_key=API_KEY, max_retries=0, timeout=20.0) as c:
        c.messages.create(
            model="claude-test-1", max_tokens=64, messages=[{"role": "user", "content": text}]
        )


def test_proxy_from_the_gui_records_and_shows_requests(
    qtbot, window, upstream: FakeUpstream, tmp_path: Path
) -> None:
    panel = panel_of(window)
    dialog = panel.show_proxy_dialog()
    qtbot.addWidget(dialog)
    assert "export ANTHROPIC_BASE_URL=http://127.0.0.1:8787" in dialog.env_text()
    out = tmp_path / "rec" / "live.jsonl"
    dialog.port.setValue(0)
    dialog.upstream.setText(upstream.url)
    dialog.openai_upstream.setText(upstream.url)
    dialog.out.setText(str(out))
    dialog.start_button.click()

    assert panel.proxy.running
    port = panel.proxy.port
    assert port and f"export ANTHROPIC_BASE_URL=http://127.0.0.1:{port}" in dialog.env_text()
    assert not dialog.start_button.isEnabled()
    assert not panel.proxy_label.isHidden()
    assert panel.proxy_label.text() == f"proxy :{port} recording 0 exchanges"
    assert panel.follower.path == str(out) and not panel.live_label.isHidden()
    dialog.copy_button.click()
    from PySide6.QtGui import QGuiApplication

    assert QGuiApplication.clipboard().text() == dialog.env_text()

    _send(panel.proxy.url, "hello through the GUI proxy")
    qtbot.waitUntil(lambda: shown(window) == 1, timeout=5000)
    assert panel.proxy_label.text() == f"proxy :{port} recording 1 exchange"
    assert window.state.session.path == str(out)
    assert window.state.session.requests[0].model == "claude-test-1"

    _send(panel.proxy.url, "and again")
    qtbot.waitUntil(lambda: shown(window) == 2, timeout=5000)
    assert window.state.index == 1  # tail mode
    assert panel.proxy_label.text() == f"proxy :{port} recording 2 exchanges"

    panel.stop_proxy.trigger()
    assert not panel.proxy.running and panel.proxy_label.isHidden()
    assert not panel.stop_proxy.isEnabled()


def test_proxy_start_failure_is_shown_in_the_dialog(qtbot, window, tmp_path: Path) -> None:
    panel = panel_of(window)
    dialog = panel.show_proxy_dialog()
    qtbot.addWidget(dialog)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    dialog.port.setValue(0)
    dialog.out.setText(str(blocker / "sub" / "rec.jsonl"))  # a folder under a file
    dialog.start_button.click()
    assert not panel.proxy.running
    assert not dialog.error.isHidden() and "Cannot start the proxy" in dialog.error.text()
    assert dialog.start_button.isEnabled()


def test_closing_the_window_stops_the_proxy(
    qtbot, window, upstream: FakeUpstream, tmp_path: Path
) -> None:
    from ctxviewer.gui.live.proxy_control import ProxySettings

    panel = panel_of(window)
    assert panel.start_proxy_with(
        ProxySettings(0, upstream.url, upstream.url, str(tmp_path / "r.jsonl"))
    )
    proxy = panel.proxy.proxy
    assert proxy is not None and proxy.running
    window.confirm_answer = False  # "Close the window anyway?" No: nothing stops
    window.close()
    assert proxy.running and panel.proxy.running  # the refused close stopped nothing
    ((title, message),) = window.confirms
    assert "recording proxy is running (0 exchanges recorded to" in message
    window.confirm_answer = True
    window.close()
    assert len(window.confirms) == 2
    assert not proxy.running and not panel.follower.is_following()


def test_a_recording_that_stops_is_said_and_calls_still_go_through(
    qtbot, window, upstream: FakeUpstream, tmp_path: Path
) -> None:
    """The disk fills up under the proxy (its recording file is swapped for
    /dev/full, whose writes fail with ENOSPC): the label and the status bar say
    so, and the agent's calls are still answered."""
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    panel = panel_of(window)
    dialog = panel.show_proxy_dialog()
    qtbot.addWidget(dialog)
    dialog.port.setValue(0)
    dialog.upstream.setText(upstream.url)
    dialog.openai_upstream.setText(upstream.url)
    dialog.out.setText(str(tmp_path / "rec.jsonl"))
    dialog.start_button.click()
    port = panel.proxy.port
    recorder = panel.proxy.proxy.server.recorder
    recorder._file.close()
    recorder._file = open("/dev/full", "ab", buffering=0)  # noqa: SIM115 - the full disk
    _send(panel.proxy.url, "recorded? no; answered? yes")
    qtbot.waitUntil(lambda: "NOT recording" in panel.proxy_label.text(), timeout=5000)
    assert panel.proxy_label.text() == f"proxy :{port} NOT recording"
    assert "still forwards" in panel.proxy_label.toolTip()
    assert "Proxy recording stopped" in window.status.currentMessage()
    _send(panel.proxy.url, "still answered")  # would raise if the proxy had failed
    # the answer is out before the writer thread has dropped its line: wait for it
    qtbot.waitUntil(lambda: recorder.dropped == 2, timeout=5000)
    assert "No space left on device" in recorder.failure
    panel.stop_proxy.trigger()
    assert not panel.proxy.running
