"""The main window: lays out the views and wires them to ``AppState``.

Left: the request navigator. Centre: the stacked bar and legend above tabs
(Breakdown tree | Timeline). Right: the content pane. Toolbar on top, status
bar below. No computation here: the core ``Analysis`` computes, the
``SessionLoader`` runs it off the GUI thread, the views display.

Dialogs go through small replaceable callables (``ask_open_path``,
``ask_save_path``, ``show_error``, ``confirm``) so that tests can answer them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent, QPaintEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ctxviewer.gui import panels
from ctxviewer.gui.app_settings import AppSettings
from ctxviewer.gui.app_state import AppState
from ctxviewer.gui.session import window_layout
from ctxviewer.gui.session.controls_toolbar import ControlsToolBar
from ctxviewer.gui.session.file_sessions import FileSessions
from ctxviewer.gui.session.loader import SessionLoader
from ctxviewer.gui.session.session_notice import SessionNotice
from ctxviewer.gui.session.status_bar import SessionStatusBar
from ctxviewer.gui.session.window_actions import WindowActions
from ctxviewer.gui.session.window_host import HostWindow
from ctxviewer.gui.widgets import dialogs
from ctxviewer.gui.widgets.palette import is_dark
from ctxviewer.resources import is_demo

if TYPE_CHECKING:  # the session's views, and the analysis they show: after the first paint
    from ctxviewer.analysis.analysis import Analysis
    from ctxviewer.gui.session.content_pane import ContentPane
    from ctxviewer.gui.session.context_menus import ContextMenus

DEFAULT_SIZE = (1400, 900)


class MainWindow(HostWindow):
    """The window; its panels see it as a ``PanelHost`` (``HostWindow``)."""

    first_painted = Signal()  # the first screen is up: what can wait, now

    # built by ``ensure_session_views`` (with the request list, bar, tabs… of HostWindow)
    content: ContentPane
    context_menus: ContextMenus
    splitter: QSplitter

    def __init__(
        self,
        state: AppState,
        settings: AppSettings | None = None,
        loader: SessionLoader | None = None,
        defer_panels: bool = False,
    ) -> None:
        """``defer_panels``: build only what the first screen (the library page) needs
        now, the session's views and the other panels once the window has painted, or
        before a session opened earlier needs them (the app's start; tests get every
        part at once)."""
        super().__init__()
        self.state = state
        self.settings = settings or AppSettings()
        self.loader = loader or SessionLoader(parent=self)
        self.ask_open_path: Callable[[], str] = lambda: dialogs.ask_open_path(self)
        self.ask_save_path: Callable[[str, str, str], str] = lambda t, n, f: dialogs.ask_save_path(
            self, t, n, f
        )
        self.show_error: Callable[[str, str], None] = lambda t, m: dialogs.show_error(self, t, m)
        self.confirm: Callable[[str, str], bool] = lambda t, m: dialogs.confirm(self, t, m)
        self.setWindowTitle("ctxviewer")
        self.setAcceptDrops(True)
        self._dark = is_dark()  # the theme the views were coloured for
        self._content_width = 0  # the content pane's width while folded away
        self._shown_once = False
        self._painted = False
        self._auto_split = False  # fit the panes to the first session (no saved layout)
        # A progressive load shows partial sessions: what was open before, to restore
        # on cancel or error (None: no partial shown), and whether this load showed one.
        self._restore: tuple[Analysis | None, int | None] | None = None
        self._partial_shown = False
        self.panels = {}
        self.quit_concern_sources = []
        self.request_actions = []
        self._views_built = False  # the session's views (ensure_session_views)
        self._panels_due = True  # the panels not installed yet (finish_window)
        self._build()
        self._connect()
        self._restore_layout()
        self.actions_.set_session_open(False)
        self.actions_.set_recent(self.settings.recent_files())
        self.actions_.reopen_last.setChecked(self.settings.reopen_last())
        window_layout.restore_options(self)  # estimator, policy, counts of the last run
        # live attach, compare, insights... (gui/panels.py)
        self.panels = panels.install_all(self, only=panels.FIRST)
        if not defer_panels:
            self.finish_window()

    @property
    def session_views_built(self) -> bool:
        return self._views_built

    @property
    def finished(self) -> bool:
        """Every part is built and the last run's choices restored (``finish_window``)."""
        return not self._panels_due

    def ensure_session_views(self) -> None:
        """The session's views (request list, bar, tabs, content pane), built once: when
        a file is opened or they are shown, else with the rest (``finish_window``)."""
        if not self._views_built:
            self._views_built = True
            self._build_session_views()

    def finish_window(self) -> None:
        """What the first screen did without, once: the session's views, the timeline's
        menu (it builds the plot), the panels not installed yet, then what the last run
        chose (tab, toggles…). Once the window has painted, or before a session is shown
        (every panel sees it arrive)."""
        if not self._panels_due:
            return
        self._panels_due = False
        self.ensure_session_views()
        self.context_menus.add_timeline_menu()
        installed = {**self.panels, **panels.install_all(self, skip=tuple(self.panels))}
        self.panels = {name: installed[name] for name in panels.PANELS if name in installed}
        window_layout.restore_choices(self)
        for i in range(self.tabs.count()):  # a busy tab must not stop the window shrinking
            tab = self.tabs.widget(i)
            if tab is not None:
                tab.setMinimumSize(120, 80)

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if not self._painted:  # the first screen is up: the rest of the window
            self._painted = True
            if self._panels_due:
                QTimer.singleShot(0, self.finish_window)
            QTimer.singleShot(0, self.first_painted.emit)

    # -- layout -------------------------------------------------------------------
    def _build(self) -> None:
        """What the first screen needs: the menus and toolbars, the status bar, and the
        centre's page for the session's views (filled by ``_build_session_views``)."""
        self.actions_ = WindowActions(self)
        self.file_bar = self.addToolBar("File")
        self.file_bar.setObjectName("file_toolbar")
        self.file_bar.setMovable(False)
        self.file_bar.addAction(self.actions_.open)
        self.controls = ControlsToolBar(self)
        self.controls.set_options(self.state.options)
        self.addToolBar(self.controls)
        self.status = SessionStatusBar(self)
        self.setStatusBar(self.status)
        self.session_page = QWidget(self)  # the library page stands beside it (a stack)
        self.session_page.setObjectName("session_page")
        self._page_box = QVBoxLayout(self.session_page)
        self._page_box.setContentsMargins(0, 0, 0, 0)
        self.notice = SessionNotice(self.session_page)  # the demo, a file without requests
        self.setCentralWidget(self.session_page)
        self.resize(*DEFAULT_SIZE)

    def _build_session_views(self) -> None:
        """The request list, the bar, the tabs and the content pane, in the centre."""
        from ctxviewer.gui.session.bar_panel import BarPanel
        from ctxviewer.gui.session.breakdown_panel import BreakdownPanel
        from ctxviewer.gui.session.content_pane import ContentPane
        from ctxviewer.gui.session.context_menus import ContextMenus
        from ctxviewer.gui.session.request_table import RequestTable
        from ctxviewer.gui.timeline.tab import TimelineTab

        self.requests = RequestTable(self)
        self.bar_panel = BarPanel(self)
        self.breakdown = BreakdownPanel(self)
        self.timeline = TimelineTab(self)
        self.tabs = QTabWidget(self)
        self.tabs.addTab(self.breakdown, "Breakdown")
        self.tabs.addTab(self.timeline, "Timeline")
        self.content = ContentPane(self)
        centre = QWidget(self)
        box = QVBoxLayout(centre)
        box.setContentsMargins(4, 0, 4, 0)
        box.addWidget(self.notice)
        box.addWidget(self.bar_panel)
        box.addWidget(self.tabs, 1)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self.session_page)
        self.splitter.setObjectName("main_splitter")
        for w in (self.requests, centre, self.content):
            self.splitter.addWidget(w)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        self._page_box.addWidget(self.splitter)
        self.splitter.show()  # built after the window showed: shown with its page
        self.reset_pane_sizes(self.width() if self.isVisible() else DEFAULT_SIZE[0])
        self._auto_split = not window_layout.restore_split(self)
        if self._shown_once:  # the window showed before its views: bound them now
            QTimer.singleShot(0, self._bound_restored_split)
            QTimer.singleShot(0, self.give_centre_room)
        self._connect_views()
        self.context_menus = ContextMenus(self)  # the request list's and the tree's

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and is_dark() != self._dark:
            self._dark = is_dark()  # View > Theme: the views' colours again, once every
            QTimer.singleShot(0, self._recolour)  # child has the new palette

    def _recolour(self) -> None:
        if self.state.analysis is not None:
            self.state.update_analysis(self.state.analysis)

    def resizeEvent(self, event: object) -> None:
        super().resizeEvent(event)  # type: ignore[arg-type]
        self.give_centre_room()

    def showEvent(self, event: object) -> None:
        super().showEvent(event)  # type: ignore[arg-type]
        if not self._shown_once:  # once the restored layout is applied: within bounds
            self._shown_once = True
            QTimer.singleShot(0, self._bound_restored_split)
        QTimer.singleShot(0, self.give_centre_room)

    def _bound_restored_split(self) -> None:
        """A split saved in the last run, within sane bounds (a request list narrowed to
        a sliver once stayed a sliver at every start)."""
        if not self._views_built:
            return
        sizes = window_layout.within_bounds(self.splitter.sizes())
        if sizes is not None:
            self.splitter.setSizes(sizes)

    def give_centre_room(self) -> None:
        """The side panes give way first (``window_layout.centre_room``)."""
        if not self._views_built or not self.isVisible():
            return
        sizes = window_layout.centre_room(self.splitter.sizes())
        if sizes is not None:
            self.splitter.setSizes(sizes)

    def fold_content(self, fold: bool) -> None:
        """Fold the content pane away (the tabs where it shows nothing: only the
        breakdown's rows have a text), or bring it back as wide as it was."""
        if fold == self.content.isHidden():
            return
        sizes = self.splitter.sizes()
        if fold:
            self._content_width = sizes[2]
            self.content.hide()
            return
        width = self._content_width or window_layout.default_split(sum(sizes), 0)[2]
        self.content.show()
        self.splitter.setSizes([sizes[0], max(sizes[1] + sizes[2] - width, 100), width])
        if self.isVisible():  # the splitter lays the shown pane out on its next pass
            QTimer.singleShot(
                0,
                lambda: self.splitter.setSizes(
                    [sizes[0], max(sum(self.splitter.sizes()) - sizes[0] - width, 100), width]
                ),
            )

    def _on_tabs_current_changed(self, _index: int) -> None:
        self.fold_content(self.tabs.currentWidget() is not self.breakdown)

    def reset_pane_sizes(self, width: int) -> None:
        self.splitter.setSizes(window_layout.default_split(width, self.requests.needed_width()))

    def _connect(self) -> None:
        """The state, the loader and the actions to the window (the session's views are
        connected when they are built: ``_connect_views``)."""
        s, a = self.state, self.actions_
        s.session_loaded.connect(self._on_state_session_loaded)
        s.analysis_changed.connect(self._on_state_analysis_changed)
        s.request_changed.connect(self._on_state_request_changed)
        s.breakdown_changed.connect(self._on_state_breakdown_changed)
        s.options_changed.connect(self._on_state_options_changed)
        s.recompute_requested.connect(self._on_state_recompute_requested)
        self.loader.load_started.connect(self._on_loader_started)
        self.loader.progressed.connect(self.status.show_progress)
        self.loader.partial.connect(self._on_loader_partial)
        self.loader.loaded.connect(self._on_loader_loaded)
        self.file_sessions = FileSessions(self.state, self.loader, self.actions_.sessions, self)
        self.loader.analysed.connect(s.update_analysis)
        self.loader.failed.connect(self._on_loader_failed)
        self.loader.cancelled.connect(self._on_loader_cancelled)
        self.loader.busy_changed.connect(self._on_loader_busy_changed)
        self.controls.estimator_chosen.connect(s.set_estimator)
        self.controls.policy_chosen.connect(s.set_policy)
        self.controls.counts_chosen.connect(s.set_counts)
        self.controls.window_chosen.connect(s.set_window_override)
        self.status.cancel_clicked.connect(self.loader.cancel)
        self.status.skipped_clicked.connect(self._on_status_skipped_clicked)
        a.open.triggered.connect(self._on_open_triggered)
        a.recent_chosen.connect(self.open_file)
        a.recent_cleared.connect(self._on_recent_cleared)
        a.reopen_last.toggled.connect(self.settings.set_reopen_last)
        for kind, action in (("json", a.export_json), ("csv", a.export_csv), ("png", a.export_png)):
            action.triggered.connect(lambda _c=False, k=kind: self._export(k))
        a.quit.triggered.connect(self.close)
        a.find.triggered.connect(self._on_find_triggered)
        for action, go in (
            (a.previous, lambda: s.step_request(-1)),
            (a.next, lambda: s.step_request(1)),
            (a.first, s.select_first),
            (a.last, s.select_last),
        ):
            action.triggered.connect(self.show_session_views)  # from the library page too
            action.triggered.connect(go)
        a.show_breakdown.triggered.connect(lambda: self._show_view("breakdown"))
        a.show_timeline.triggered.connect(lambda: self._show_view("timeline"))

    def _connect_views(self) -> None:
        s = self.state
        self.tabs.currentChanged.connect(self._on_tabs_current_changed)
        self.requests.request_selected.connect(s.select_request)
        self.timeline.request_clicked.connect(s.select_request)
        self.bar_panel.category_clicked.connect(self._on_bar_category_clicked)
        self.breakdown.node_selected.connect(self._on_breakdown_node_selected)

    def show_session_views(self) -> None:
        self.ensure_session_views()
        super().show_session_views()

    def _show_view(self, name: str) -> None:
        self.ensure_session_views()
        self.show_tab(getattr(self, name))

    def _export(self, kind: str) -> None:
        from ctxviewer.gui.session import export

        self.ensure_session_views()
        export.export_view(self, kind)

    # -- opening ------------------------------------------------------------------
    def open_file(self, path: str, session: int | None = None) -> None:
        """Start loading ``path`` in the background; the open session stays until it is done.
        ``session``: which session of a file that holds several (None: the default one,
        and the window asks).

        A window size typed for the file open now is not carried over: the new file
        opens with its agent's own window."""
        self.ensure_session_views()  # opened before the first paint: its views now (the
        # panels come at the paint, or before the session is shown: _on_loader_partial…)
        self.loader.load(path, replace(self.state.options, window=0), session)

    def show_analysis(self, analysis: Analysis) -> None:
        """Show an analysis loaded elsewhere (synchronously, e.g. by the snapshot command)."""
        self.finish_window()
        self.state.set_session_analysis(analysis)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        files = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if files:
            event.acceptProposedAction()
            self.open_file(files[0])

    # -- state -> views -------------------------------------------------------------
    def _on_state_session_loaded(self, a: Analysis) -> None:
        self.finish_window()  # a session published some other way (live follow)
        name = os.path.basename(a.session.path or "") or "session"
        empty = not a.session.path and not a.session.requests
        self.setWindowTitle("ctxviewer" if empty else f"{name} — ctxviewer")
        self.actions_.set_session_open(bool(a.session.requests))
        self.controls.set_options(self.state.options)
        self.content.clear()
        self.notice.set_analysis(a)

    def _on_state_analysis_changed(self, a: Analysis) -> None:
        if not self._views_built:  # no session shown yet (views are built with the first)
            return
        self.requests.set_timeline(a.timeline)
        if self._auto_split:  # first session, no saved layout: fit the request list
            self._auto_split = False
            self.reset_pane_sizes(self.splitter.width())
        self.timeline.set_analysis(a)
        self.status.set_analysis(a)
        self.controls.set_agent(a.identity.profile.label, a.identity.era.policy.label)

    def _on_state_request_changed(self, index: int) -> None:
        if not self._views_built:
            return
        self.requests.set_current(index)
        self.timeline.set_current(index)

    def _on_state_breakdown_changed(self, b: object) -> None:
        if not self._views_built:
            return
        self.bar_panel.set_breakdown(b, self._heading())  # type: ignore[arg-type]
        self.breakdown.set_breakdown(b)  # type: ignore[arg-type]

    def _heading(self) -> str:
        from ctxviewer.gui.session.request_model import role_text, short_model

        s, i = self.state.session, self.state.index
        if s is None or i is None:
            return ""
        r = s.requests[i]
        p = self.state.analysis.timeline[i] if self.state.analysis else None
        role = role_text(p) if p is not None else r.role
        return f"Request {i} · {short_model(r.model)} · {role}"

    def _on_state_options_changed(self, options: object) -> None:
        self.controls.set_options(self.state.options)

    def _on_state_recompute_requested(self, options: object) -> None:
        if self.state.session is not None:
            self.loader.analyse(self.state.session, self.state.options)

    def _on_breakdown_node_selected(self, obj: object) -> None:
        from ctxviewer.gui.session.content import node_content

        a = self.state.analysis
        if a is None or obj is None:
            self.content.clear()
            return
        self.content.set_content(
            node_content(obj, a.estimator, self.state.breakdown), a.estimator_name
        )

    def _on_bar_category_clicked(self, name: str) -> None:
        self.tabs.setCurrentWidget(self.breakdown)
        self.breakdown.select_category(name)

    # -- loader -> window -------------------------------------------------------------
    def _on_loader_started(self, path: str) -> None:
        self.status.showMessage(f"Loading {os.path.basename(path)}…")
        self.status.show_progress(0)
        self._partial_shown = False  # a partial of an abandoned load stays restorable

    def _on_loader_partial(self, a: Analysis) -> None:
        """The loading file read so far: the first part replaces the open session."""
        self.finish_window()  # loaded before the first paint: every panel sees it arrive
        if self._partial_shown:
            self.state.grow_analysis(a)
            return
        if self._restore is None:
            self._restore = (self.state.analysis, self.state.index)
        self._partial_shown = True
        self.state.set_session_analysis(a, loading=True)
        self._paint_soon()

    def _paint_soon(self) -> None:
        """``_paint_now`` from a timer: after this update, with input and other events
        handled in between, and before the analyses it asked for start
        (``worker.start_soon``). A 0 ms single shot would run in this same pass."""
        QTimer.singleShot(1, self, self._paint_now)

    def _paint_now(self) -> None:
        """Lay out and paint the window at once, before background work goes on.

        Views paint through Python (model data, plot items), and each call from
        Qt into Python waits for the GIL: beside a parsing or analysing thread,
        a paint takes several times longer. So the deferred work (posted
        events, item view layouts) runs now and the window paints once, while
        the loader waits for it (a partial view) or has finished, and before
        the analyses the new session asked for start (``worker.start_soon``)."""
        QCoreApplication.sendPostedEvents()
        for view in self.findChildren(QAbstractItemView):
            if view.isVisible():
                view.executeDelayedItemsLayout()
        QCoreApplication.sendPostedEvents()
        if self.isVisible():
            self.repaint()

    def _on_loader_loaded(self, a: Analysis) -> None:
        self.finish_window()
        self.status.clearMessage()
        keep = None if self.state.in_tail() or not self._partial_shown else self.state.index
        self._restore, self._partial_shown = None, False
        self.state.set_session_analysis(a)
        if keep is not None:  # the user chose a request while the file loaded
            self.state.select_request(keep)
        self._paint_soon()
        if a.session.path and not is_demo(a.session.path):  # the demo is not "recent"
            self.settings.add_recent(a.session.path)
            self.actions_.set_recent(self.settings.recent_files())

    def _on_loader_failed(self, path: str, reason: str) -> None:
        self.status.clearMessage()
        self.status.hide_progress()  # not left showing behind the error dialog
        if path and not os.path.exists(path) and path in self.settings.recent_files():
            self.settings.remove_recent(path)  # a file that is gone leaves Open Recent
            self.actions_.set_recent(self.settings.recent_files())
        if path:
            self._restore_open_session()
        self.show_error("Cannot open file" if path else "Analysis failed", reason)

    def _on_loader_cancelled(self, path: str) -> None:
        self._restore_open_session()
        self.status.showMessage(f"Loading {os.path.basename(path)} cancelled", 5000)

    def _restore_open_session(self) -> None:
        """A load that showed partial sessions ended early: show what was open before."""
        restore, self._restore, self._partial_shown = self._restore, None, False
        if restore is None:
            return
        before, index = restore
        if before is None:  # nothing was open: show nothing
            from ctxviewer.model import Session

            before = self.state.options.analysis(Session(path=None, format=""))
        self.state.set_session_analysis(before)
        if index is not None:
            self.state.select_request(index)

    def _on_loader_busy_changed(self, busy: bool) -> None:
        if not busy:
            self.status.hide_progress()
        elif self.status.progress.isHidden():
            self.status.show_progress(None, cancellable=False)

    # -- user actions -----------------------------------------------------------------
    def _on_open_triggered(self) -> None:
        path = self.ask_open_path()
        if path:
            self.open_file(path)

    def _on_recent_cleared(self) -> None:
        self.settings.clear_recent()
        self.actions_.set_recent([])

    def _on_find_triggered(self) -> None:
        if not self._views_built:  # the library page's search box (its own slot)
            return
        self.tabs.setCurrentWidget(self.breakdown)
        self.breakdown.focus_filter()

    def _on_status_skipped_clicked(self) -> None:
        from ctxviewer.gui.session.skipped_dialog import SkippedDialog

        s = self.state.session
        if s is not None:
            SkippedDialog(s.skipped, s.path or "", self).exec()

    # -- persistence (gui/session/window_layout.py) ------------------------------------------------
    def _restore_layout(self) -> None:
        window_layout.restore_layout(self)

    def save_layout(self) -> None:
        window_layout.save(self)

    def quit_concerns(self) -> list[str]:
        """What quitting now would lose, one sentence per panel that says so."""
        return [text for concern in self.quit_concern_sources if (text := concern())]

    def closeEvent(self, event: QCloseEvent) -> None:
        concerns = self.quit_concerns()
        if concerns and not self.confirm(
            "Close ctxviewer?", "\n\n".join(concerns) + "\n\nClose the window anyway?"
        ):
            event.ignore()
            return
        self.closing.emit()
        self.loader.cancel()
        self.save_layout()
        super().closeEvent(event)
