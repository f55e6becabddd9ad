"""A second launch hands its file to the running instance, which opens it in a new window."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

from ctxviewer.gui.app import build_main_window
from ctxviewer.gui.single_instance import InstanceServer, WindowSet, hand_over


def _server(qtbot, windows):
    name = f"ctxviewer-test-{uuid.uuid4().hex[:8]}"
    server = InstanceServer(name)
    assert server.listen()
    server.files_received.connect(windows.open_in_new_window)
    return name, server


def _window_set(qtbot):
    def make():
        w = build_main_window()
        qtbot.addWidget(w)
        return w

    windows = WindowSet(make)
    first = windows.add(make())
    return windows, first


def test_no_running_instance_means_no_hand_over(qapp):
    assert hand_over(["/tmp/x.jsonl"], name=f"ctxviewer-absent-{uuid.uuid4().hex}") is False


def test_a_second_process_hands_its_file_to_the_running_window(qtbot, trace_path, transcript_path):
    windows, first = _window_set(qtbot)
    first.open_file(trace_path)
    qtbot.waitUntil(lambda: first.state.session is not None, timeout=10_000)
    name, server = _server(qtbot, windows)
    env = dict(os.environ, CTXVIEWER_INSTANCE=name, QT_QPA_PLATFORM="offscreen")
    # the real command a file manager runs on double-click, as its own process
    proc = subprocess.Popen(
        [sys.executable, "-m", "ctxviewer", transcript_path],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    qtbot.waitUntil(lambda: len(windows.windows) == 2, timeout=20_000)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "opened in the running ctxviewer" in out
    second = windows.windows[1]
    qtbot.waitUntil(lambda: second.state.session is not None, timeout=10_000)
    assert second.state.session.path == os.path.abspath(transcript_path)
    # the session already open stays open in its own window
    assert first.state.session.path == trace_path
    server.close()


def test_a_live_instance_keeps_its_name(qtbot, trace_path):
    windows, _ = _window_set(qtbot)
    name, server = _server(qtbot, windows)
    other = InstanceServer(name)
    assert other.listen() is False  # no stealing from a running instance
    assert hand_over([trace_path], name=name)
    qtbot.waitUntil(lambda: len(windows.windows) == 2, timeout=5_000)
    second = windows.windows[1]
    qtbot.waitUntil(lambda: second.state.session is not None, timeout=10_000)
    server.close()
