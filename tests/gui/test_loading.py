"""Opening files: off the GUI thread, with progress, cancel, errors, drops and recent files."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QTimer, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QMessageBox

from ctxviewer.gui.app import build_main_window, startup_file
from ctxviewer.gui.app_settings import AppSettings


def big_trace(src: str, folder: Path, megabytes: int = 24) -> Path:
    """A multi-MB claude-trace log made by repeating a real one."""
    data = Path(src).read_bytes()
    if not data.endswith(b"\n"):
        data += b"\n"
    path = folder / "big-trace.jsonl"
    with open(path, "wb") as f:
        f.writelines(data for _ in range(max(1, megabytes * 1024 * 1024 // len(data))))
    return path


RESPONSIVENESS = """
import json, os, sys, time
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtCore import QTimer
from ctxviewer.gui.app import build_main_window, create_app
app = create_app([])
window = build_main_window()
window.show()
ticks, progress, result, painted = [], [], {}, []
timer = QTimer()
timer.setInterval(5)
timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
window.loader.progressed.connect(progress.append)
window.state.session_loaded.connect(lambda _a: painted.append(time.perf_counter() - start))
def done(_a):
    QTimer.singleShot(100, report)  # the final paint happens after loaded: count it too
def report():
    timer.stop()
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    result.update(ticks=len(ticks), max_gap_ms=1000 * max(gaps, default=0.0),
                  stalls_over_100ms=sum(g > 0.1 for g in gaps),
                  first_paint_s=painted[0] if painted else None,
                  seconds=loaded[0], progress=progress,
                  requests=len(window.state.session.requests),
                  shown=window.status.progress_seen)
    app.quit()
loaded = []
window.loader.loaded.connect(lambda _a: loaded.append(time.perf_counter() - start))
window.loader.loaded.connect(done)  # after the window's own slot: the whole file is shown
window.status.progress_seen = False
window.loader.load_started.connect(lambda _p: setattr(
    window.status, "progress_seen",
    window.status.progress.isVisibleTo(window) and window.status.cancel_button.isVisibleTo(window)))
start = time.perf_counter()
timer.start()
window.open_file(sys.argv[1])
QTimer.singleShot(int(sys.argv[2]) if len(sys.argv) > 2 else 60_000, app.quit)
app.exec()
print(json.dumps(result))
"""

MAX_STALL_MS = 500  # generous: a busy 2-core CI machine; bench/gui_first_paint.py measures


def test_event_loop_keeps_ticking_while_a_large_file_loads(trace_path, tmp_path):
    """In a fresh app (nothing left over from other tests): the GUI thread keeps
    running its timers while a 24 MB trace loads, shows progress with Cancel, and
    paints the first requests before the whole file is read."""
    import json
    import subprocess
    import sys

    path = big_trace(trace_path, tmp_path)
    assert path.stat().st_size > 20 * 1024 * 1024
    proc = subprocess.run(
        [sys.executable, "-c", RESPONSIVENESS, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    print({k: v for k, v in result.items() if k != "progress"})
    assert result["shown"], "progress bar and Cancel shown while loading"
    assert result["ticks"] >= 3, f"the GUI thread was blocked during the load: {result}"
    progress = result["progress"]
    assert progress and progress == sorted(progress) and progress[-1] == 1000
    assert result["first_paint_s"] is not None and result["first_paint_s"] < result["seconds"]
    assert result["max_gap_ms"] < MAX_STALL_MS, result


def test_cancel_keeps_the_open_session(qtbot, window, open_and_wait, trace_path, tmp_path):
    open_and_wait(window, trace_path)
    before = window.state.session
    path = big_trace(trace_path, tmp_path, 40)
    with qtbot.waitSignal(window.loader.cancelled, timeout=30000):
        window.open_file(str(path))
        window.status.cancel_button.click()
    assert window.state.session is before
    assert window.errors == []
    qtbot.waitUntil(lambda: not window.status.progress.isVisibleTo(window))


def test_a_bad_file_shows_the_reason_and_keeps_the_open_session(
    qtbot, window, open_and_wait, trace_path, tmp_path
):
    open_and_wait(window, trace_path)
    before, segments = window.state.session, list(window.bar_panel.bar.segments)
    bad = tmp_path / "notes.txt"
    bad.write_text("hello, this is not a session log\n")
    for path in (str(bad), str(tmp_path / "missing.jsonl"), str(tmp_path)):
        with qtbot.waitSignal(window.loader.failed, timeout=10000):
            window.open_file(path)
        title, message = window.errors[-1]
        assert title == "Cannot open file" and "\n" not in message and message
    assert "unknown format" in window.errors[0][1]
    assert "no such file" in window.errors[1][1]
    assert window.state.session is before
    assert window.bar_panel.bar.segments == segments
    assert window.breakdown.model.rowCount() == len(window.state.breakdown.categories)


def test_the_error_dialog_is_a_message_box(qtbot, tmp_path):
    w = build_main_window()
    qtbot.addWidget(w)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\x00\x01binary")
    seen: list[str] = []

    def close_message_box() -> None:
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox):
            seen.append(box.text())
            box.close()

    poll = QTimer()
    poll.timeout.connect(close_message_box)
    poll.start(20)
    with qtbot.waitSignal(w.loader.failed):
        w.open_file(str(bad))
    qtbot.waitUntil(lambda: bool(seen), timeout=5000)
    poll.stop()
    assert "binary" in seen[0]


def test_a_newer_load_wins(qtbot, window, open_and_wait, trace_path, transcript_path):
    window.open_file(trace_path)
    open_and_wait(window, transcript_path)
    qtbot.waitUntil(lambda: not window.loader.is_busy())
    assert window.state.session.path == transcript_path


def test_drop_a_file_onto_the_window(qtbot, window, trace_path):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(trace_path)])
    with warnings.catch_warnings():  # PySide 6.12 marks the only usable overload deprecated
        warnings.simplefilter("ignore", DeprecationWarning)
        enter = QDragEnterEvent(
            QPoint(10, 10),
            Qt.DropAction.CopyAction,
            mime,
            Qt.MouseButton.LeftButton,
            Qt.KeyboardModifier.NoModifier,
        )
    window.dragEnterEvent(enter)
    assert enter.isAccepted()
    drop = QDropEvent(
        QPointF(10, 10),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    with qtbot.waitSignal(window.state.session_loaded, timeout=20000):
        window.dropEvent(drop)
    assert window.state.session.path == trace_path


def test_file_open_action_and_recent_files(
    qtbot, window, open_and_wait, trace_path, transcript_path
):
    window.ask_open_path = lambda: trace_path
    with qtbot.waitSignal(window.state.session_loaded, timeout=20000):
        window.actions_.open.trigger()
    open_and_wait(window, transcript_path)
    entries = [a.text() for a in window.actions_.recent_menu.actions() if not a.isSeparator()]
    assert entries[:2] == [transcript_path, trace_path]
    recent = next(a for a in window.actions_.recent_menu.actions() if a.text() == trace_path)
    with qtbot.waitSignal(window.state.session_loaded, timeout=20000):
        recent.trigger()
    assert window.state.session.path == trace_path
    assert AppSettings().recent_files()[:2] == [trace_path, transcript_path]
    clear = window.actions_.recent_menu.actions()[-1]
    clear.trigger()
    assert AppSettings().recent_files() == []


def test_reopen_last_file_at_start(qtbot, window, open_and_wait, trace_path, transcript_path):
    assert not window.actions_.reopen_last.isChecked()  # off by default: the library opens
    open_and_wait(window, transcript_path)
    assert startup_file(None, AppSettings()) is None
    window.actions_.reopen_last.setChecked(True)
    assert AppSettings().reopen_last()
    assert startup_file(None, AppSettings()) == transcript_path
    assert startup_file(trace_path, AppSettings()) == trace_path  # FILE wins
    window.actions_.reopen_last.setChecked(False)
    assert startup_file(None, AppSettings()) is None


def test_estimator_policy_counts_and_tab_are_kept(qtbot, isolated_qsettings):
    w = build_main_window()
    qtbot.addWidget(w)
    w.state.set_estimator("chars4")
    w.state.set_policy("qwen")
    w.state.set_counts("wire")
    w.state.set_window_override(64_000)
    w.tabs.setCurrentWidget(w.timeline)
    w.save_layout()
    again = build_main_window()
    qtbot.addWidget(again)
    o = again.state.options
    assert (o.estimator, o.policy, o.counts, o.window) == ("chars4", "qwen", "wire", 0)
    assert again.controls.estimator_combo.currentData() == "chars4"
    assert again.tabs.currentWidget() is again.timeline


def test_timeline_toggles_and_budget_are_kept(
    qtbot, isolated_qsettings, open_and_wait, transcript_path
):
    import pyqtgraph as pg

    from ctxviewer.analysis.insights import Budget

    w = build_main_window()
    qtbot.addWidget(w)
    wanted = {
        "time": True,
        "cache": True,
        "subagents": False,
        "auxiliary": True,
        "output": False,
        "whatif": False,
    }
    actions = w.timeline.plot.menu_actions
    for key, on in wanted.items():  # as a user does: View > Timeline, the menu's items
        if actions[key].isChecked() != on:
            actions[key].trigger()
    box = w.panels["insights_panel"].cost.budget
    box.setChecked(True)
    box.unit.setCurrentIndex(box.unit.findData("tokens"))
    box.limit.setValue(3_000_000)
    box.scope.setCurrentIndex(box.scope.findData("task"))
    box.warn.setValue(0.6)
    box.hard.setChecked(True)
    budget = Budget(3_000_000, "tokens", "task", 0.6, True)
    assert box.budget() == budget
    w.close()

    again = build_main_window()
    qtbot.addWidget(again)
    plot = again.timeline.plot
    assert {k: a.isChecked() for k, a in plot.menu_actions.items() if a.isCheckable()} == wanted
    assert plot.toggles() == wanted
    panel = again.panels["insights_panel"]
    assert panel.cost.budget.budget() == budget and panel.budget == budget
    open_and_wait(again, transcript_path)  # and the plot shows it so
    assert isinstance(plot.getPlotItem().getAxis("bottom"), pg.DateAxisItem)
    assert all(a.isVisible() for a in plot.cache_areas.values())
    assert not plot.output_curve.isVisible() and not plot.subagent_scatter.isVisible()
    assert plot.auxiliary_scatter.isVisible() and not plot.whatif_markers.isVisible()
    panel.cost.budget.setChecked(False)  # switched off: off next time, its values kept
    again.close()

    third = build_main_window()
    qtbot.addWidget(third)
    box = third.panels["insights_panel"].cost.budget
    assert not box.isChecked() and box.budget() is None and box.values() == budget
    assert third.timeline.plot.toggles() == wanted


def test_geometry_and_splitter_are_saved(qtbot, isolated_qsettings):
    w = build_main_window()
    qtbot.addWidget(w)
    w.resize(760, 560)  # within the offscreen screen (800x600): restored as is
    w.show()
    qtbot.waitExposed(w)
    w.splitter.setSizes([200, 600, 300])
    sizes = w.splitter.sizes()
    w.close()
    assert list(isolated_qsettings.rglob("*.ini"))
    w2 = build_main_window()
    qtbot.addWidget(w2)
    w2.show()
    qtbot.waitExposed(w2)
    assert (w2.width(), w2.height()) == (760, 560)
    assert w2.splitter.sizes() == sizes


def test_default_size_without_saved_settings(qtbot):
    w = build_main_window()
    qtbot.addWidget(w)
    assert (w.width(), w.height()) == (1400, 900)


def test_options_changed_during_a_load_are_applied(qtbot, window, trace_path):
    with qtbot.waitSignal(window.state.session_loaded, timeout=20000):
        window.open_file(trace_path)
        window.controls.estimator_combo.setCurrentIndex(
            window.controls.estimator_combo.findData("chars4")
        )
    qtbot.waitUntil(lambda: window.state.analysis.estimator_name == "chars4", timeout=20000)
    qtbot.waitUntil(lambda: not window.loader.is_busy())
    assert window.state.breakdown.estimator == "chars4"


def test_cli_without_subcommand_opens_the_window(qtbot, monkeypatch, trace_path):
    """``ctxviewer FILE`` through ``cli.main``: the window opens and loads FILE (the
    application's own event loop is replaced by qtbot's)."""
    from ctxviewer.cli import main
    from ctxviewer.gui.session.main_window import MainWindow

    monkeypatch.setattr(QApplication, "exec", lambda self: 0)
    assert main([trace_path]) == 0
    windows = [
        w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()
    ]
    assert len(windows) == 1
    w = windows[0]
    qtbot.addWidget(w)
    qtbot.waitUntil(lambda: w.state.session is not None, timeout=20000)
    assert w.state.session.path == trace_path
    qtbot.waitUntil(lambda: not w.loader.is_busy())


def _usage(session):
    return [r.usage for r in session.requests]


@pytest.mark.parametrize("compress", [False, True])
def test_a_large_file_shows_its_first_requests_while_the_rest_loads(
    qtbot, window, trace_path, tmp_path, compress
):
    import gzip

    from ctxviewer.ingest import load

    path = str(big_trace(trace_path, tmp_path))
    if compress:  # a gzipped trace: the first view counts decompressed bytes
        with open(path, "rb") as src, gzip.open(path + ".gz", "wb", compresslevel=1) as dst:
            dst.write(src.read())
        path += ".gz"
    partials: list[int] = []
    window.loader.partial.connect(lambda a: partials.append(len(a.session.requests)))
    with qtbot.waitSignal(window.loader.partial, timeout=30000):
        window.open_file(path)
    assert window.state.session.path == path and window.state.session.requests
    assert window.status.progress.isVisibleTo(window)
    assert window.requests.request_model.rowCount() == len(window.state.session.requests)
    window.state.select_request(0)  # the user picks a request while the file loads
    with qtbot.waitSignal(window.loader.loaded, timeout=60000):
        pass
    whole = load(path)
    s = window.state.session
    assert partials and partials[0] <= len(whole.requests)  # the copy repeats: keys dedupe
    assert len(s.requests) == len(whole.requests)
    assert _usage(s) == _usage(whole) and s.skipped == whole.skipped
    assert window.state.index == 0
    qtbot.waitUntil(lambda: not window.status.progress.isVisibleTo(window))


def test_a_view_holding_the_partial_analysis_keeps_it_whole(qtbot, window, trace_path, tmp_path):
    """The first part of a progressive load is a snapshot: when the whole file
    arrives, the analysis a view held of the first part has not changed."""
    path = str(big_trace(trace_path, tmp_path))
    with qtbot.waitSignal(window.loader.partial, timeout=30000):
        window.open_file(path)
    held = window.state.analysis
    assert window.state.loading and held.session.path == path
    requests, timeline = list(held.session.requests), list(held.timeline)
    with qtbot.waitSignal(window.loader.loaded, timeout=60000):
        pass
    whole = window.state.analysis
    assert whole is not held and whole.session is not held.session
    assert len(whole.session.requests) >= len(requests)  # the big trace repeats: keys dedupe
    assert held.session.requests == requests and held.timeline == timeline
    assert len(held.timeline) == len(held.session.requests)


def test_cancel_after_a_partial_restores_the_open_session(
    qtbot, window, open_and_wait, trace_path, tmp_path
):
    open_and_wait(window, trace_path)
    window.state.select_request(0)
    before = window.state.session
    path = str(big_trace(trace_path, tmp_path, 40))
    with qtbot.waitSignal(window.loader.partial, timeout=30000):
        window.open_file(path)
    assert window.state.session.path == path
    with qtbot.waitSignal(window.loader.cancelled, timeout=30000):
        window.status.cancel_button.click()
    assert window.state.session is before and window.state.index == 0
    assert window.errors == []


def test_cancel_after_a_partial_with_nothing_open_shows_nothing(
    qtbot, window, trace_path, tmp_path
):
    path = str(big_trace(trace_path, tmp_path, 40))
    with qtbot.waitSignal(window.loader.partial, timeout=30000):
        window.open_file(path)
    with qtbot.waitSignal(window.loader.cancelled, timeout=30000):
        window.loader.cancel()
    assert not window.state.session.requests and window.state.session.path is None
    assert window.requests.request_model.rowCount() == 0 and window.windowTitle() == "ctxviewer"


def test_an_error_after_a_partial_restores_the_open_session(
    qtbot, window, open_and_wait, trace_path, tmp_path, monkeypatch
):
    from ctxviewer import ingest
    from ctxviewer.ingest import LoadError

    open_and_wait(window, trace_path)
    before = window.state.session

    def broken(*args, **kwargs):  # the full read fails after the first view was shown
        raise LoadError("the disk went away")

    monkeypatch.setattr(ingest, "load", broken)  # where the loader finds it, at each load
    path = str(big_trace(trace_path, tmp_path))
    with qtbot.waitSignal(window.loader.failed, timeout=60000):
        window.open_file(path)
    assert window.state.session is before
    assert window.errors == [("Cannot open file", "the disk went away")]


def test_whole_session_analyses_wait_for_the_whole_file(qtbot, window, trace_path, tmp_path):
    """Compare and Insights do not analyse the first part of a loading file (it is
    replaced a moment later, and the work would slow the load and its paint)."""
    compare = window.panels["analysis_panels"].compare
    insights = window.panels["insights_panel"]
    window.show()  # both compute for the tab in view
    qtbot.waitExposed(window)
    window.tabs.setCurrentWidget(compare.tab)
    path = str(big_trace(trace_path, tmp_path))
    with qtbot.waitSignal(window.loader.partial, timeout=30000):
        window.open_file(path)
    assert window.state.loading and window.state.session.requests
    qtbot.wait(100)  # longer than a background job's start delay
    assert not compare.runner.is_busy() and compare.runner.comparison is None
    assert compare.tab.status.text() == "Waiting for the whole file…"
    window.tabs.setCurrentWidget(insights)
    qtbot.wait(50)
    assert insights.insights is None and not insights.runner.is_busy()
    assert "once the whole file is read" in insights.status.text()
    with qtbot.waitSignal(window.loader.loaded, timeout=60000):
        pass
    assert not window.state.loading
    qtbot.waitUntil(lambda: insights.insights is not None, timeout=30000)
    assert len(insights.insights.cost.requests) == len(window.state.session.requests)
    window.tabs.setCurrentWidget(compare.tab)
    qtbot.waitUntil(lambda: compare.runner.comparison is not None, timeout=30000)
    assert compare.runner.comparison.rows


def test_cli_theme_dark_opens_a_dark_window(
    qtbot, monkeypatch, trace_path, restore_app_palette
) -> None:
    """``ctxviewer FILE --theme dark``: the option is the window's, not an unknown
    command, and the palette is dark."""
    from ctxviewer.cli import main
    from ctxviewer.gui.session.main_window import MainWindow
    from ctxviewer.gui.widgets.palette import is_dark

    monkeypatch.setattr(QApplication, "exec", lambda self: 0)
    assert main(["--theme", "dark", trace_path, "--new-instance"]) == 0
    windows = [
        w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()
    ]
    w = windows[-1]
    qtbot.addWidget(w)
    assert is_dark(QApplication.instance().palette())
    qtbot.waitUntil(lambda: w.state.session is not None, timeout=20000)
    qtbot.waitUntil(lambda: not w.loader.is_busy())


def test_cli_rejects_an_unknown_theme(capsys) -> None:
    from ctxviewer.cli import main

    assert main(["--theme", "purple"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "invalid choice: 'purple'" in err
    assert err.startswith("ctxviewer: ") and "ctxviewer: ctxviewer" not in err


def test_recent_files_skip_the_demo_and_drop_a_file_that_is_gone(
    qtbot, window, open_and_wait, trace_path, tmp_path
) -> None:
    import shutil

    from ctxviewer.gui.app_settings import AppSettings
    from ctxviewer.resources import demo_session_path

    open_and_wait(window, str(demo_session_path()))
    assert str(demo_session_path()) not in AppSettings().recent_files()
    gone = tmp_path / "soon-gone.jsonl"
    shutil.copy(trace_path, gone)
    open_and_wait(window, str(gone))
    assert AppSettings().recent_files()[0] == str(gone)
    gone.unlink()
    window.open_file(str(gone))  # from Open Recent: the file has been deleted since
    qtbot.waitUntil(lambda: bool(window.errors), timeout=10000)
    assert str(gone) not in AppSettings().recent_files()
    entries = [a.text() for a in window.actions_.recent_menu.actions()]
    assert str(gone) not in entries
    assert window.state.session.path is not None  # the open session stayed
    assert window.status.cancel_button.isHidden()  # no progress behind the dialog


def test_the_theme_chosen_in_view_applies_at_start(
    qtbot, monkeypatch, trace_path, restore_app_palette
) -> None:
    from ctxviewer.cli import main
    from ctxviewer.gui.app_settings import AppSettings
    from ctxviewer.gui.session.main_window import MainWindow
    from ctxviewer.gui.widgets.palette import is_dark

    AppSettings().set_theme("dark")
    monkeypatch.setattr(QApplication, "exec", lambda self: 0)
    assert main([trace_path, "--new-instance"]) == 0
    w = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()][
        -1
    ]
    qtbot.addWidget(w)
    assert is_dark(QApplication.instance().palette())
    qtbot.waitUntil(lambda: w.state.session is not None, timeout=20000)
    qtbot.waitUntil(lambda: not w.loader.is_busy())
