"""Builds the Qt application and the main window.

``run_app(args)`` is what ``ctxviewer [FILE]`` calls; ``build_main_window``
is what tests and the snapshot command call.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from ctxviewer import __version__
from ctxviewer.errors import UsageError
from ctxviewer.gui import platform_check
from ctxviewer.gui.app_settings import AppSettings
from ctxviewer.gui.app_state import AppState
from ctxviewer.gui.session.main_window import MainWindow
from ctxviewer.gui.session.window_layout import fit_to_screen
from ctxviewer.gui.widgets import gc_guard
from ctxviewer.gui.widgets.theme import apply_theme
from ctxviewer.resources import demo_session_path, resource

SWITCH_INTERVAL = 0.0002  # seconds; Python's default is 0.005


def icon_path() -> str | None:
    path = resource("icons", "ctxviewer.svg")
    return str(path) if path.is_file() else None


def app_icon() -> QIcon:
    """The app icon: the bundled PNG sizes, and the SVG for every other size."""
    icon = QIcon()
    for png in sorted(resource("icons", "hicolor").glob("*/apps/ctxviewer.png")):
        icon.addFile(str(png))
    svg = icon_path()
    if svg:
        icon.addFile(svg)
    return icon


def demo_path() -> str | None:
    """The bundled demo session, when it ships with this build."""
    path = demo_session_path()
    return str(path) if path.is_file() else None


def create_app(argv: list[str] | None = None, theme: str = "auto") -> QApplication:
    """The ``QApplication`` (reused when one exists), named and iconed; ``theme`` is
    ``auto`` (the platform's), ``light`` or ``dark`` (Fusion with a dark palette)."""
    app = QApplication.instance()
    if app is None:
        app = QApplication(argv if argv is not None else sys.argv[:1])
    assert isinstance(app, QApplication)
    # A worker running Python keeps the GIL for up to the switch interval each
    # time the GUI thread asks for it, and painting the plots asks at every
    # pyqtgraph paint method: with the default 5 ms, a repaint beside a busy
    # loader takes 30x as long; with 0.2 ms, 3x.
    sys.setswitchinterval(SWITCH_INTERVAL)
    gc_guard.install(app)  # cyclic GC on the GUI thread only (worker threads allocate)
    app.setApplicationName("ctxviewer")
    app.setOrganizationName("ctxviewer")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("ctxviewer")
    icon = app_icon()
    if not icon.isNull():
        app.setWindowIcon(icon)
    apply_theme(app, theme)
    return app


def build_main_window(
    state: AppState | None = None, settings: AppSettings | None = None, defer_panels: bool = False
) -> MainWindow:
    """The window; ``defer_panels``: the panels the first screen does not need are
    installed once it has painted (the app's start)."""
    return MainWindow(state or AppState(), settings, defer_panels=defer_panels)


def startup_file(file: str | None, settings: AppSettings) -> str | None:
    """What to open at start: FILE, else the last file (if asked to); None: the library."""
    if file:
        return os.path.abspath(file)
    return settings.startup_file()


def open_at_start(window: MainWindow, file: str | None, settings: AppSettings) -> None:
    """FILE (or the last file), else the library: the demo when it finds no session. A
    FILE that cannot be read (missing, a folder, empty) is said in a dialog and the
    window lands on the library."""
    from ctxviewer.gui.library import open_or_library, show_library

    path = startup_file(file, settings)
    if path:  # one that cannot be read: its error, then the library
        open_or_library(window, path)
        return

    demo = demo_path()
    if not show_library(window, demo_if_empty=demo) and demo:
        window.open_file(demo)


def run_app(args: argparse.Namespace) -> int:
    if QApplication.instance() is None:  # Qt aborts the process when it cannot open a window
        why = platform_check.problem()
        if why:
            raise UsageError(why)
    app = create_app(theme=getattr(args, "theme", "auto") or "auto")
    file = getattr(args, "file", None)
    single = not getattr(args, "new_instance", False)
    if single and file:
        from ctxviewer.gui import single_instance

        if single_instance.hand_over([file]):
            print(f"ctxviewer: {file} opened in the running ctxviewer")
            return 0
    settings = AppSettings()
    if (getattr(args, "theme", "auto") or "auto") == "auto":  # none given: View > Theme's
        apply_theme(app, settings.theme())

    def make_window() -> MainWindow:  # no bigger than the screen (a saved size may be)
        made = build_main_window(settings=settings, defer_panels=True)
        fit_to_screen(made)
        return made

    window = make_window()
    window.show()
    open_at_start(window, file, settings)
    # files handed over by a later `ctxviewer FILE`: listened for once the window is up
    window.first_painted.connect(lambda: _serve_instances(app, window, make_window, single))
    return app.exec()


def _serve_instances(
    app: QApplication, window: MainWindow, make_window: Callable[[], MainWindow], single: bool
) -> None:
    from ctxviewer.gui import single_instance  # QtNetwork: not before the first paint

    windows = single_instance.WindowSet(make_window, app)
    windows.add(window)
    if single:
        server = single_instance.InstanceServer(parent=app)
        if server.listen():
            server.files_received.connect(windows.open_in_new_window)
