"""``ctxviewer snapshot`` in-process, and the app helpers it builds on."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QImage

from ctxviewer.cli import main
from ctxviewer.commands.common import UsageError
from ctxviewer.gui.app import create_app, demo_path, icon_path
from ctxviewer.snapshot_cli import parse_size


@pytest.mark.parametrize("view, size", [("main", (1024, 700)), ("timeline", (900, 600))])
def test_snapshot_writes_a_png_of_the_window(qtbot, capsys, tmp_path, trace_path, view, size):
    out = tmp_path / f"{view}.png"
    argv = [
        "snapshot",
        trace_path,
        "--out",
        str(out),
        "--size",
        f"{size[0]}x{size[1]}",
        "--request",
        "10",
        "--view",
        view,
    ]
    assert main(argv) == 0
    assert capsys.readouterr().out.strip() == str(out)
    image = QImage(str(out))
    assert (image.width(), image.height()) == size


def test_snapshot_of_the_bar_and_tree(qtbot, tmp_path, transcript_path):
    for view in ("bar", "tree"):
        out = tmp_path / f"{view}.png"
        assert main(["snapshot", transcript_path, "--out", str(out), "--view", view]) == 0
        image = QImage(str(out))
        assert not image.isNull() and image.width() < 1400


def test_snapshot_bad_input_exits_2(qtbot, capsys, tmp_path, trace_path):
    out = str(tmp_path / "x.png")
    assert main(["snapshot", trace_path, "--out", out, "--request", "999"]) == 2
    assert "--request" in capsys.readouterr().err
    assert main(["snapshot", trace_path, "--out", out, "--size", "big"]) == 2
    assert main(["snapshot", str(tmp_path / "nope.jsonl"), "--out", out]) == 2
    err = capsys.readouterr().err
    assert "no such file" in err and "Traceback" not in err
    assert main(["snapshot", trace_path, "--out", str(tmp_path / "no" / "dir" / "x.png")]) == 2


def test_parse_size():
    assert parse_size("1400x900") == (1400, 900)
    assert parse_size(" 1024 X 700 ") == (1024, 700)
    for bad in ("1400", "10x10", "axb"):
        with pytest.raises(UsageError):
            parse_size(bad)


def test_app_icon_and_demo(qapp):
    app = create_app()
    assert app is qapp
    assert icon_path() is not None and icon_path().endswith("ctxviewer.svg")
    assert not app.windowIcon().isNull()
    assert app.windowIcon().pixmap(64, 64).width() == 64
    path = demo_path()
    assert path is None or "demo-session" in path


def test_no_file_on_a_fresh_machine_opens_the_demo_session(qtbot, window, tmp_path, monkeypatch):
    """No FILE: the library; it finds no session in an empty home: the demo opens."""
    from ctxviewer.gui.app import open_at_start
    from ctxviewer.gui.app_settings import AppSettings

    if demo_path() is None:
        pytest.skip("this build has no demo session")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CTXVIEWER_LIBRARY_DIR", str(tmp_path / "library"))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "QWEN_RUNTIME_DIR"):
        monkeypatch.delenv(name, raising=False)
    with qtbot.waitSignal(window.state.session_loaded, timeout=60000):
        open_at_start(window, None, AppSettings())
    qtbot.waitUntil(lambda: not window.loader.is_busy(), timeout=20000)
    a = window.state.analysis
    assert a.session.path == demo_path()
    assert a.session.requests and window.bar_panel.bar.segments


def test_snapshot_of_the_bundled_demo(tmp_path, capsys) -> None:
    out = tmp_path / "demo.png"
    assert main(["snapshot", "--demo", "--out", str(out), "--size", "800x600"]) == 0
    image = QImage(str(out))
    assert (image.width(), image.height()) == (800, 600)
    assert main(["snapshot", "--out", str(out)]) == 2  # neither FILE nor --demo
    assert "give a FILE or --demo" in capsys.readouterr().err
