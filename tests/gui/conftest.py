"""GUI test setup: isolated QSettings, Qt warnings fail tests, helpers to open files."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings
from PySide6.QtGui import QGuiApplication

# The offscreen platform says these whenever a top-level window is shown or a popup
# (a completer's list) opens: harmless.
IGNORED_QT_MESSAGES = (
    "This plugin does not support propagateSizeHints",
    "This plugin does not support raise",
    "This plugin does not support grabbing the keyboard",
)

TRACE = "claude-trace/badlogic__lemmy__apps_claude-trace_test_test-traffic.jsonl"
TRANSCRIPT = "claude-code/marot__spotter__test_fixtures_transcripts_fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.qt_log_level_fail("WARNING"))
            item.add_marker(pytest.mark.qt_log_ignore(*IGNORED_QT_MESSAGES))


@pytest.fixture(autouse=True, scope="session")
def _gc_on_gui_thread(qapp):
    """As in the app: the cyclic GC never runs on a loader thread (see gui/widgets/gc_guard.py)."""
    from ctxviewer.gui.widgets import gc_guard

    gc_guard.install(qapp)
    yield


@pytest.fixture(autouse=True)
def _drain_thread_pool(qapp):
    """No worker of one test may still run (and allocate) when the next test starts,
    and no window of one test (with its timers and followers) outlives it."""
    yield
    from PySide6.QtCore import QThreadPool
    from PySide6.QtWidgets import QApplication, QMainWindow

    # close (not delete: Python owns them) the windows a test left open: their
    # closeEvent stops live followers, timers and proxies
    for widget in QApplication.topLevelWidgets():
        if isinstance(widget, QMainWindow) and widget.isVisible():
            widget.close()
    QThreadPool.globalInstance().waitForDone(10_000)


@pytest.fixture(autouse=True)
def isolated_qsettings(tmp_path: Path):
    """Every test gets its own empty settings folder."""
    folder = tmp_path / "qsettings"
    folder.mkdir()
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(folder))
    yield folder


@pytest.fixture(autouse=True)
def restore_app_palette(qapp):
    palette = QGuiApplication.palette()
    yield
    qapp.setPalette(palette)


@pytest.fixture
def trace_path(corpus: Path) -> str:
    return str(corpus / TRACE)


@pytest.fixture
def transcript_path(corpus: Path) -> str:
    return str(corpus / TRANSCRIPT)


@pytest.fixture
def window(qtbot):
    """A main window with dialogs answered by the test (errors are recorded, not shown)."""
    from ctxviewer.gui.app import build_main_window

    w = build_main_window()
    w.errors = []
    w.show_error = lambda title, message: w.errors.append((title, message))
    w.ask_open_path = lambda: ""
    w.ask_save_path = lambda title, name, filter_: ""
    w.confirms = []  # (title, message) of each question; answered w.confirm_answer
    w.confirm_answer = True
    w.confirm = lambda title, message: (w.confirms.append((title, message)), w.confirm_answer)[1]
    qtbot.addWidget(w)
    yield w
    w.loader.cancel()
    try:  # a 2-core CI machine can queue the last analysis behind other pool jobs
        qtbot.waitUntil(lambda: not w.loader.is_busy(), timeout=30000)
    except Exception as e:  # say what was still running, for whoever meets it next
        from PySide6.QtCore import QThreadPool

        pool = QThreadPool.globalInstance()
        raise AssertionError(
            f"loader still busy after 30 s: loading={w.loader._loads.is_busy()} "
            f"analysing={w.loader._analyses.is_busy()} pool active={pool.activeThreadCount()}/"
            f"{pool.maxThreadCount()}"
        ) from e


@pytest.fixture
def open_and_wait(qtbot):
    """``open_and_wait(window, path)``: open ``path`` the way a user does (the load
    worker), wait until the views show it, return its ``Analysis``."""

    def run(window, path: str, timeout: int = 20000):
        with qtbot.waitSignal(window.state.session_loaded, timeout=timeout):
            window.open_file(path)
        qtbot.waitUntil(lambda: not window.loader.is_busy(), timeout=timeout)
        return window.state.analysis

    return run
