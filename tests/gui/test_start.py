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
def test_a_bad_file_at_start_lands_on_the_library(qtbot, window, corpus, home, tmp_path, kind):
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
    qtbot.waitUntil(
        lambda: panel.showing and not panel.scanner.busy and not panel.querying, timeout=60000
    )
    assert panel.view.isVisible() and window.windowTitle() == "Library — ctxviewer"
    shown = {e["path"] for e in panel.view.shown_entries()}
    assert str(files["codex"]) in shown  # the scan ran: the library is listed
    assert len(window.errors) == 1


def test_a_good_file_at_start_opens_it(qtbot, window, corpus, home, open_and_wait):
    files = lay_out(corpus, home)
    with qtbot.waitSignal(window.state.session_loaded, timeout=20000):
        open_at_start(window, str(files["codex"]), AppSettings())
    assert not window.panels["library"].showing and not window.errors


# what the first screen (the library page) does without: the plots, the single-instance
# server, the session's views and the panels on them, the proxy, the file dialog, the
# analysis (each imported by the GUI thread only, or by a session's load: the library's
# scan and reads of an empty library, on threads of their own, may run meanwhile)
HEAVY = (
    "numpy",
    "pyqtgraph",
    "PySide6.QtNetwork",
    "ctxviewer.gui.session.request_table",
    "ctxviewer.gui.session.breakdown_panel",
    "ctxviewer.gui.session.bar_panel",
    "ctxviewer.gui.session.content_pane",
    "ctxviewer.gui.session.context_menus",
    "ctxviewer.gui.timeline.tab",
    "ctxviewer.gui.tools.panel",
    "ctxviewer.gui.insights.panel",
    "ctxviewer.gui.findings.panel",
    "ctxviewer.gui.help.menu",
    "ctxviewer.gui.live.proxy_control",
    "ctxviewer.gui.widgets.file_dialog",
    "ctxviewer.analysis.analysis",
)

FIRST_PAINT = """
import os, sys
from PySide6.QtCore import QEvent, QObject
from PySide6 import QtWidgets
class Spy(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint and obj.isWidgetType() and obj.isWindow() \\
                and obj.isVisible():
            heavy = sorted(m for m in HEAVY if m in sys.modules)
            print("at first paint:", ",".join(heavy) or "-", flush=True)
            os._exit(0)
        return False
spy = Spy()
class App(QtWidgets.QApplication):
    def __init__(self, *a):
        super().__init__(*a)
        self.installEventFilter(spy)
QtWidgets.QApplication = App
from ctxviewer.cli import main
sys.exit(main(["--new-instance"]))
""".replace("HEAVY", repr(HEAVY))


def test_the_first_paint_waits_for_no_plot(tmp_path):
    """The window paints before pyqtgraph, numpy and QtNetwork are imported (the plots,
    the panels that draw them, the single-instance server come after), and before the
    session's views and the panels on them: the library page needs none of them."""
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "CTXVIEWER_"))}
    env.update(
        QT_QPA_PLATFORM="offscreen",
        HOME=str(tmp_path),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )
    proc = subprocess.run(
        [sys.executable, "-c", FIRST_PAINT],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "at first paint: -" in proc.stdout, (proc.stdout, proc.stderr[-2000:])


def test_the_panels_come_once_the_window_has_painted(qtbot):
    from ctxviewer.gui.app import build_main_window
    from ctxviewer.gui.panels import FIRST, PANELS

    window = build_main_window(defer_panels=True)
    qtbot.addWidget(window)
    assert list(window.panels) == [name for name in PANELS if name in FIRST]
    assert not window.session_views_built and not hasattr(window, "requests")
    window.show()
    qtbot.waitUntil(lambda: list(window.panels) == list(PANELS), timeout=10000)
    assert window.session_views_built
    stack = window.panels["library"].stack  # the session's views, beside the library page
    assert stack.widget(0) is window.session_page
    assert window.splitter.parent() is window.session_page
    window.show_session_views()  # leave the library page: the views built meanwhile show
    assert window.requests.isVisible() and window.breakdown.isVisible()
    assert window.content.isVisible() and window.bar_panel.isVisible()
    titles = [t for t, _p in window.tab_pages()]
    assert titles == ["Breakdown", "Timeline", "Compare", "Insights", "Findings"]
    assert "Help" in [a.text().replace("&", "") for a in window.menuBar().actions()]


def test_a_deferred_window_has_the_last_runs_options_at_once(qtbot):
    """A FILE given at start is analysed with the estimator and policy of the last run,
    not with the defaults until the panels come (they come at the first paint)."""
    from ctxviewer.gui.app import build_main_window

    AppSettings().set_analysis_options("chars4", "shannon", "wire")
    window = build_main_window(settings=AppSettings(), defer_panels=True)
    qtbot.addWidget(window)
    o = window.state.options
    assert (o.estimator, o.policy, o.counts) == ("chars4", "shannon", "wire")
    assert window.controls.estimator_combo.currentData() == "chars4"


def test_a_file_opened_before_the_first_paint_opens_in_the_built_views(qtbot, corpus, home):
    """A FILE given at start (or a file dropped before the window painted) builds the
    session's views at once (the first paint shows them loading), and the other panels
    before its session is shown: each of them sees it arrive. Nothing waits for a paint."""
    from ctxviewer.gui.app import build_main_window
    from ctxviewer.gui.panels import FIRST, PANELS

    files = lay_out(corpus, home)
    window = build_main_window(settings=AppSettings(), defer_panels=True)
    qtbot.addWidget(window)
    window.errors = []
    window.show_error = lambda title, message: window.errors.append((title, message))
    with qtbot.waitSignal(window.state.session_loaded, timeout=20000):
        window.open_file(str(files["codex"]))  # not shown: no paint yet
        assert window.session_views_built and list(window.panels) == list(FIRST)
    qtbot.waitUntil(lambda: not window.loader.is_busy(), timeout=20000)
    a = window.state.analysis
    assert window.finished and list(window.panels) == list(PANELS)
    assert window.requests.request_model.rowCount() == len(a.session.requests) > 0
    assert window.state.index is not None and window.breakdown.model.rowCount() > 0
    assert window.windowTitle().startswith(files["codex"].name) and not window.errors


def test_a_window_closed_before_its_views_keeps_the_last_runs_layout(qtbot):
    """Closed before the first paint (nothing built beyond the library page): the saved
    tab, split and timeline toggles of the last run stay as they were."""
    from PySide6.QtCore import QByteArray

    from ctxviewer.gui.app import build_main_window

    settings = AppSettings()
    settings.set_tab("Timeline")
    settings.set_state("splitter", QByteArray(b"kept"))
    window = build_main_window(settings=settings, defer_panels=True)
    qtbot.addWidget(window)
    window.close()
    assert not window.session_views_built
    again = AppSettings()
    assert again.tab() == "Timeline" and again.state("splitter") == QByteArray(b"kept")


def test_the_library_page_imports_no_scan():
    """The page's modules leave the scan (the walk, every reader, worker processes: 25 ms)
    to the threads that scan; the text indexer imported it for a type and took the
    start from 1.8x to 2.05x a bare window."""
    import subprocess

    code = (
        "import sys; import ctxviewer.gui.library.panel; "
        "print('ctxviewer.library.scan' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert done.stdout.strip() == "False"
