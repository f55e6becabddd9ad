"""Render the main window (or one of its views) of a session into a PNG file.

Used by ``ctxviewer snapshot``: loads synchronously, selects the request,
lays the window out at the requested size without showing it on screen,
and saves ``grab()``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from PySide6.QtCore import (
    QEventLoop,
    QMessageLogContext,
    QSettings,
    Qt,
    QTimer,
    QtMsgType,
    qInstallMessageHandler,
)
from PySide6.QtWidgets import QWidget

from ctxviewer.gui.app import build_main_window, create_app
from ctxviewer.gui.app_settings import AppSettings
from ctxviewer.gui.app_state import AppState, Options
from ctxviewer.gui.session.main_window import MainWindow

VIEWS = ("main", "timeline", "bar", "tree")
# Qt's offscreen platform says this whenever a window is shown; it means nothing here.
_NOISE = "This plugin does not support propagateSizeHints"


def _quiet_handler(previous: Callable[..., None] | None) -> Callable[..., None]:
    def handle(mode: QtMsgType, context: QMessageLogContext, message: str) -> None:
        if _NOISE in message:
            return
        if previous is not None:
            previous(mode, context, message)
        else:
            sys.stderr.write(message + "\n")

    return handle


def _target(window: MainWindow, view: str) -> QWidget:
    if view == "bar":
        return window.bar_panel
    if view == "tree":
        return window.breakdown
    if view == "timeline":
        window.tabs.setCurrentWidget(window.timeline)
    return window


def render_snapshot(
    path: str,
    out: str,
    request: int | str | None = None,
    size: tuple[int, int] = (1400, 900),
    view: str = "main",
    theme: str = "auto",
    options: Options | None = None,
    format: str | None = None,
    session: int | None = None,
) -> None:
    """Raises ``LoadError`` for unreadable files, ``IndexError`` for a bad request or
    session, ``OSError`` when the PNG cannot be written. ``session``: which session of a
    file that holds several (default: the one that made the last main request)."""
    create_app(theme=theme)
    state = AppState()
    if options is not None:
        state.options = options
    # separate settings: a snapshot neither uses nor changes the user's layout
    settings = AppSettings(
        QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, "ctxviewer", "snapshot")
    )
    window = build_main_window(state, settings)
    analysis = window.loader.load_sync(path, state.options, format, session)
    index = analysis.resolve_index(request) if analysis.session.requests else None
    window.show_analysis(analysis)
    if index is not None:
        state.select_request(index)
    window.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    window.resize(*size)
    window.reset_pane_sizes(size[0])  # the default layout, not a saved one
    previous = qInstallMessageHandler(None)
    qInstallMessageHandler(_quiet_handler(previous))
    try:
        _render(window, out, view)
    finally:
        qInstallMessageHandler(previous)


def _render(window: MainWindow, out: str, view: str) -> None:
    target = _target(window, view)  # before show(): the tab is then laid out too
    window.show()
    result: dict[str, bool] = {}

    def grab() -> None:
        window.requests.scrollTo(window.requests.currentIndex())  # laid out only now
        result["ok"] = target.grab().save(out, "PNG")
        window.hide()  # not close(): that would save the window layout
        loop.quit()

    loop = QEventLoop()  # a local loop: quitting it leaves the application alone
    QTimer.singleShot(100, grab)  # after the event loop laid the window out (two passes)
    loop.exec()
    if not result.get("ok"):
        raise OSError(f"cannot write {out}")
