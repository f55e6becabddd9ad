"""Panels see the window as a PanelHost (gui/host.py); one that fails to install is an error.

The panels here are real modules written to a temporary folder and listed in
``panels.PANELS`` as the window's own are.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from ctxviewer.gui import panels
from ctxviewer.gui.app import build_main_window
from ctxviewer.gui.panels import PANELS, PanelError
from ctxviewer.gui.session.context_menus import actions_of

# A panel as the session library will be one: a tab, a dock, a menu, an action that
# opens a session, a toolbar button and a status indicator, all through the host.
LIBRARY = """
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget, QLabel


class Library:
    def __init__(self, host):
        self.page = QLabel("sessions", host.window())
        host.add_tab(self.page, "Library")
        self.dock = QDockWidget("Recent sessions", host.window())
        self.dock.setObjectName("library_dock")
        self.dock.setWidget(QLabel("recent"))
        host.add_dock(self.dock)
        self.menu = host.menu("&Library", before="Help")
        self.open = QAction("Open from the &library…", host.window())
        self.menu.addAction(self.open)
        host.add_open_actions([self.open])
        host.add_toolbar_action(self.open)
        self.indicator = QLabel("library")
        host.add_status_widget(self.indicator)


def install(host):
    return Library(host)
"""


@pytest.fixture
def panel_folder(tmp_path, monkeypatch):
    """A folder importable as panels' modules: ``write(name, source)``."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def write(name: str, source: str) -> str:
        (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
        return name

    return write


def with_panel(monkeypatch, name: str, module: str) -> None:
    """``PANELS`` with ``name`` installed before the help menu (which lists every tab)."""
    listed = {k: v for k, v in PANELS.items() if k != "help_menu"}
    monkeypatch.setattr(
        panels, "PANELS", {**listed, name: module, "help_menu": PANELS["help_menu"]}
    )


def menu_titles(window) -> list[str]:
    return [a.text().replace("&", "") for a in window.menuBar().actions()]


def test_every_panel_is_installed(window):
    assert list(window.panels) == list(PANELS)
    assert not hasattr(window, "panel")  # panels reach each other through the typed host


def test_a_panel_that_fails_to_install_stops_the_window(qtbot, monkeypatch, panel_folder):
    broken = panel_folder("broken_panel", "def install(host):\n    return host.no_such_part\n")
    with_panel(monkeypatch, "broken", broken)
    with pytest.raises(
        PanelError,
        match=r"panel broken \(broken_panel\) failed to install: "
        r"AttributeError: .*no_such_part",
    ):
        build_main_window()


def test_a_panel_that_cannot_be_imported_stops_the_window(qtbot, monkeypatch):
    with_panel(monkeypatch, "gone", "ctxviewer.gui.no_such_panel")
    with pytest.raises(PanelError, match="panel gone .* ModuleNotFoundError"):
        build_main_window()


def test_a_panel_adds_its_parts_through_the_host(qtbot, monkeypatch, panel_folder):
    with_panel(monkeypatch, "shelf", panel_folder("library_panel", LIBRARY))
    window = build_main_window()
    qtbot.addWidget(window)
    lib = window.panels["shelf"]
    # the tab, after the other panels' tabs, with its View action from the help menu
    titles = [title for title, _page in window.tab_pages()]
    assert titles[-2:] == ["Findings", "Library"]
    view = actions_of(window.menu("&View"))
    assert view["&Library"].shortcut().toString() == f"Ctrl+{len(titles)}"
    view["&Library"].trigger()
    assert window.current_tab() is lib.page
    # its menu before Help; its open action right after File > Open Recent
    names = menu_titles(window)
    assert names.index("Tools") < names.index("Library") == names.index("Help") - 1
    file_actions = window.menu("&File").actions()
    recent = file_actions.index(window.actions_.recent_menu.menuAction())
    assert file_actions[recent + 1] is lib.open
    assert window.file_bar.actions()[-1] is lib.open
    # the dock on the right, the indicator in the status bar, messages below
    assert window.dockWidgetArea(lib.dock) == Qt.DockWidgetArea.RightDockWidgetArea
    assert window.status.isAncestorOf(lib.indicator)
    window.show_message("3 sessions indexed", 0)
    assert window.status.currentMessage() == "3 sessions indexed"


def test_a_panels_dock_comes_back_where_the_user_left_it(qtbot, monkeypatch, panel_folder):
    with_panel(monkeypatch, "shelf", panel_folder("library_panel", LIBRARY))
    first = build_main_window()
    qtbot.addWidget(first)
    dock = first.panels["shelf"].dock
    first.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)  # the user moves it
    first.save_layout()
    again = build_main_window()  # the same settings: the next run
    qtbot.addWidget(again)
    assert again.dockWidgetArea(again.panels["shelf"].dock) == Qt.DockWidgetArea.LeftDockWidgetArea


GIVER = """
class Giver:
    def __init__(self, host):
        self.asked = []
        self.worried = "a job runs"
        host.add_quit_concern(lambda: self.worried)
        host.add_request_action("Mark this request", self.asked.append)


def install(host):
    return Giver(host)
"""


def test_panels_give_the_window_typed_hooks(
    qtbot, monkeypatch, panel_folder, open_and_wait, trace_path
):
    """A quit concern and a request-list action given through the host; the insights
    shared through it (what Findings reuses), never a panel looked up by name."""
    with_panel(monkeypatch, "giver", panel_folder("giver_panel", GIVER))
    window = build_main_window()
    qtbot.addWidget(window)
    window.show()
    giver = window.panels["giver"]
    assert window.quit_concerns() == ["a job runs"]
    giver.worried = None
    assert window.quit_concerns() == []
    open_and_wait(window, trace_path)
    menu = window.context_menus.requests_menu(window.requests.request_model.index(2, 0))
    actions = {a.text(): a for a in menu.actions()}
    assert "Simulate compaction of this request…" in actions  # the compaction panel's
    actions["Mark this request"].trigger()
    assert giver.asked == [
        window.requests.request_model.index(2, 0).data(Qt.ItemDataRole.UserRole).index
    ]
    insights = window.panels["insights_panel"]
    window.show_tab(insights)
    qtbot.waitUntil(lambda: window.shared_insights() is not None, timeout=30000)
    shared = window.shared_insights()
    assert shared.session is window.state.session and shared.insights is insights.insights
