"""What a panel may use of the window it is installed in: ``PanelHost``.

A panel (``gui/panels.py``) gets the window as a ``PanelHost``, never as the
``MainWindow`` itself: the state the window shows and the settings it keeps,
its tabs, docks, menus, toolbar and status bar, the dialogs tests answer, and
the few places where a panel adds to the session's own views (the context bar's
right-click menu, the timeline's marks, the breakdown's selection).
``MainWindow`` implements it; mypy checks that where the window installs its
panels.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import SignalInstance
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget, QMenu, QWidget

from ctxviewer.gui.app_settings import AppSettings
from ctxviewer.gui.app_state import AppState

if TYPE_CHECKING:  # the plot needs pyqtgraph: imported by the Timeline tab only
    from ctxviewer.analysis.insights import Insights
    from ctxviewer.gui.timeline.plot import TimelinePlot
    from ctxviewer.model import Session


@dataclass(frozen=True)
class SharedInsights:
    """The insights the Insights tab computed last (the Findings tab reuses their
    redundancy and cache breaks for the same session and estimator)."""

    session: Session
    estimator: str
    insights: Insights


class PanelHost(Protocol):
    """The window as its panels see it (see the module docstring)."""

    # -- what the window shows -------------------------------------------------------
    @property
    def state(self) -> AppState:
        """The session, analysis and request shown; panels listen to its signals."""
        ...

    @property
    def settings(self) -> AppSettings: ...

    @property
    def closing(self) -> SignalInstance:
        """Emitted when the window closes (after any confirmation): stop what runs."""
        ...

    @property
    def tab_changed(self) -> SignalInstance:
        """Emitted with the index of the tab brought to the front."""
        ...

    def window(self) -> QWidget:
        """The window as a widget: the parent of a panel's widgets, actions and dialogs."""
        ...

    def select_request(self, index: int) -> None:
        """Show request ``index`` in every view (the list, the bar, the tabs)."""
        ...

    def select_requests(self, indices: Sequence[int]) -> None:
        """Show the first of ``indices`` and select them all in the request list."""
        ...

    def open_file(self, path: str) -> None:
        """Load ``path`` in the background, as File > Open does."""
        ...

    def show_session_views(self) -> None:
        """Bring the session's views to the front (leaving the library page): a panel
        that shows a session without loading a file (live follow, the proxy) calls it."""
        ...

    # -- what panels give each other (typed: no panel finds another by name) -----------
    def add_quit_concern(self, concern: Callable[[], str | None]) -> None:
        """``concern()`` says what closing the window now would lose (None: nothing); the
        window asks before it closes."""
        ...

    def add_request_action(self, text: str, act: Callable[[int], object]) -> None:
        """An entry of the request list's right-click menu: ``act(request index)``."""
        ...

    def share_insights(self, shared: SharedInsights) -> None:
        """The insights computed last, for the panels that reuse them."""
        ...

    def shared_insights(self) -> SharedInsights | None: ...

    # -- tabs and docks ---------------------------------------------------------------
    def add_tab(self, page: QWidget, title: str) -> None:
        """A tab after the window's own (Breakdown, Timeline) and the panels' before."""
        ...

    def show_tab(self, page: QWidget) -> None: ...

    def current_tab(self) -> QWidget | None: ...

    def tab_pages(self) -> list[tuple[str, QWidget]]:
        """Every tab in order: (its title, its page)."""
        ...

    def add_dock(self, dock: QDockWidget) -> None:
        """A dock on the window's right side (the user may move it, its place is kept)."""
        ...

    # -- menus, actions, toolbar, status bar ------------------------------------------
    def menu(self, title: str, before: str | None = None) -> QMenu:
        """The menu bar's menu ``title`` (``&`` ignored), created when missing, before
        the menu ``before`` when there is one, else last."""
        ...

    def add_action(self, action: QAction) -> None:
        """Make ``action``'s shortcut work anywhere in the window (menus hidden too)."""
        ...

    def add_open_actions(self, actions: Sequence[QAction]) -> None:
        """Actions that open a session: in the File menu, after Open Recent."""
        ...

    def add_toolbar_action(self, action: QAction) -> None:
        """An action on the File toolbar (after Open and the panels' before)."""
        ...

    def add_status_widget(self, widget: QWidget) -> None:
        """A permanent indicator at the right of the status bar."""
        ...

    def show_message(self, text: str, timeout_ms: int = 0) -> None:
        """A message in the status bar (0: until the next one)."""
        ...

    # -- dialogs (replaceable callables: tests answer them) -------------------------------
    @property
    def show_error(self) -> Callable[[str, str], None]:
        """``show_error(title, message)``."""
        ...

    @property
    def ask_save_path(self) -> Callable[[str, str, str], str]:
        """``ask_save_path(title, file name, filter)``: the path chosen, "" when cancelled."""
        ...

    # -- the session's views, where panels add to them --------------------------------------
    def add_context_bar_action(self, action: QAction) -> None:
        """An action on the context bar's right-click menu."""
        ...

    def timeline_plot(self) -> TimelinePlot | None:
        """The Timeline tab's plot (None when pyqtgraph is missing)."""
        ...

    def show_in_breakdown(
        self, names: Sequence[str], messages: Sequence[int] = (), category: str | None = None
    ) -> None:
        """Select items of the breakdown tree (``BreakdownPanel.select_items``)."""
        ...
