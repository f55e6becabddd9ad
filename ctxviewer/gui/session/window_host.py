"""``HostWindow``: the main window's side of ``gui.host.PanelHost``.

Where panels add their tabs, docks, menus, actions, toolbar buttons and status
indicators, and the few places where they reach the session's own views.
``MainWindow`` builds those views (the attributes declared here) and derives
from this class.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal, SignalInstance
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu, QTabWidget, QToolBar, QWidget

from ctxviewer.gui.app_settings import AppSettings
from ctxviewer.gui.app_state import AppState
from ctxviewer.gui.host import SharedInsights
from ctxviewer.gui.session.status_bar import SessionStatusBar
from ctxviewer.gui.session.window_actions import WindowActions
from ctxviewer.gui.widgets.menus import find_menu

if TYPE_CHECKING:  # the session's views: built (and imported) after the first paint
    from ctxviewer.gui.session.bar_panel import BarPanel
    from ctxviewer.gui.session.breakdown_panel import BreakdownPanel
    from ctxviewer.gui.session.request_table import RequestTable
    from ctxviewer.gui.timeline.plot import TimelinePlot
    from ctxviewer.gui.timeline.tab import TimelineTab


class HostWindow(QMainWindow):
    closing = Signal()  # the window closes (after any confirmation): panels stop their work
    session_views_wanted = Signal()  # show_session_views: the library page gives way

    # built by MainWindow
    state: AppState
    settings: AppSettings
    actions_: WindowActions
    file_bar: QToolBar
    status: SessionStatusBar
    bar_panel: BarPanel
    requests: RequestTable
    breakdown: BreakdownPanel
    timeline: TimelineTab
    tabs: QTabWidget
    panels: dict[str, object]  # the installed panels by name (gui/panels.py), for tests
    # what the panels gave (add_quit_concern, add_request_action, share_insights)
    quit_concern_sources: list[Callable[[], str | None]]
    request_actions: list[tuple[str, Callable[[int], object]]]
    _shared_insights: SharedInsights | None = None
    show_error: Callable[[str, str], None]
    ask_save_path: Callable[[str, str, str], str]

    # -- the session --------------------------------------------------------------------
    def select_request(self, index: int) -> None:
        self.state.select_request(index)

    def show_session_views(self) -> None:
        self.session_views_wanted.emit()

    def select_requests(self, indices: Sequence[int]) -> None:
        if indices:
            self.state.select_request(indices[0])
            self.requests.select_rows(indices)

    # -- what panels give each other ----------------------------------------------------
    def add_quit_concern(self, concern: Callable[[], str | None]) -> None:
        self.quit_concern_sources.append(concern)

    def add_request_action(self, text: str, act: Callable[[int], object]) -> None:
        self.request_actions.append((text, act))

    def share_insights(self, shared: SharedInsights) -> None:
        self._shared_insights = shared

    def shared_insights(self) -> SharedInsights | None:
        return self._shared_insights

    # -- tabs and docks -------------------------------------------------------------------
    @property
    def tab_changed(self) -> SignalInstance:
        return self.tabs.currentChanged

    def add_tab(self, page: QWidget, title: str) -> None:
        self.tabs.addTab(page, title)

    def show_tab(self, page: QWidget) -> None:
        self.show_session_views()
        self.tabs.setCurrentWidget(page)

    def current_tab(self) -> QWidget | None:
        return self.tabs.currentWidget()

    def tab_pages(self) -> list[tuple[str, QWidget]]:
        pages = ((self.tabs.tabText(i), self.tabs.widget(i)) for i in range(self.tabs.count()))
        return [(title, page) for title, page in pages if page is not None]

    def add_dock(self, dock: QDockWidget) -> None:
        """On the right; where the user left it in the last run when it has an object
        name (the layout is restored before the panels add their docks)."""
        if not (dock.objectName() and self.restoreDockWidget(dock)):
            self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)

    # -- menus, actions, toolbar, status bar ------------------------------------------------
    def menu(self, title: str, before: str | None = None) -> QMenu:
        found = find_menu(self, title)
        if found is not None:
            return found
        menu = QMenu(title, self)
        after = find_menu(self, before) if before is not None else None
        if after is not None:
            self.menuBar().insertMenu(after.menuAction(), menu)
        else:
            self.menuBar().addMenu(menu)
        return menu

    def add_action(self, action: QAction) -> None:
        self.addAction(action)

    def add_open_actions(self, actions: Sequence[QAction]) -> None:
        file_menu = self.menu("&File")
        acts = file_menu.actions()
        recent = self.actions_.recent_menu.menuAction()
        pos = acts.index(recent) + 1 if recent in acts else 1
        for a in actions:
            if pos < len(acts):
                file_menu.insertAction(acts[pos], a)
            else:
                file_menu.addAction(a)

    def add_toolbar_action(self, action: QAction) -> None:
        self.file_bar.addAction(action)

    def add_status_widget(self, widget: QWidget) -> None:
        self.status.addPermanentWidget(widget)

    def show_message(self, text: str, timeout_ms: int = 0) -> None:
        self.status.showMessage(text, timeout_ms)

    # -- the session's views, where panels add to them ----------------------------------------
    def add_context_bar_action(self, action: QAction) -> None:
        bar = self.bar_panel.bar
        bar.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        bar.addAction(action)

    def timeline_plot(self) -> TimelinePlot | None:
        return self.timeline.plot  # built now if it was not yet

    def show_in_breakdown(
        self, names: Sequence[str], messages: Sequence[int] = (), category: str | None = None
    ) -> None:
        self.breakdown.select_items(names, messages, category)
