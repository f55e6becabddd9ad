"""How the main window is laid out and what it remembers between runs.

The split of its three panes (request list | centre | content): the default
for a first session, and the side panes giving way first when the window is
narrower than the one they were sized in. What is saved at close and restored
at start: geometry, toolbars, the split, the estimator, policy, counts, the
tab in front and the timeline's toggles (a Window size stays with its file: never
restored; the Insights panel keeps its budget).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from PySide6.QtGui import QGuiApplication, QScreen
from PySide6.QtWidgets import QWidget

from ctxviewer.analysis.thresholds import POLICIES
from ctxviewer.analysis.tokens.estimators import names

if TYPE_CHECKING:
    from ctxviewer.gui.session.main_window import MainWindow


def _caps(width: int) -> tuple[float, float, int]:
    """(request list's largest share, content pane's share, content pane's least width),
    from (26%, 15%, 150 px) at 1024 px to (30%, 20%, 180 px) at 1600 px and over: the
    narrower the window, the more the side panes give way (the list keeps its number,
    time, model and prompt columns and scrolls sideways to the rest), and a wider
    window never gives the centre less."""
    t = min(max((width - 1024) / (1600 - 1024), 0.0), 1.0)
    return 0.26 + 0.04 * t, 0.15 + 0.05 * t, int(150 + 30 * t)


def default_split(width: int, need: int) -> list[int]:
    """The request list as wide as its columns ``need`` (within ``_caps``' share and 4
    points less), the content pane its share, the rest for the centre: 59% of a
    1024 px window (it had 53%), half of a 1600 px one."""
    list_cap, content, least = _caps(width)
    left = max(int(width * min(0.22, list_cap - 0.04)), min(need, int(width * list_cap)))
    right = max(least, int(width * content))
    return [left, width - left - right, right]


def centre_room(sizes: list[int]) -> list[int] | None:
    """``sizes`` with the side panes within the shares ``default_split`` gives them;
    None when they already are (or the split is not laid out yet)."""
    total = sum(sizes)
    if len(sizes) != 3 or total < 600:
        return None
    list_cap, content, least = _caps(total)
    left = min(sizes[0], int(total * list_cap))
    right = min(sizes[2], max(least, int(total * content)))
    if (left, right) == (sizes[0], sizes[2]):
        return None
    return [left, total - left - right, right]


LIST_FLOOR = 0.22  # the request list's least share of a restored split (default_split's least)


def within_bounds(sizes: list[int]) -> list[int] | None:
    """A restored split with the request list no narrower than ``LIST_FLOOR`` of the
    window and the content pane no narrower than its least width (``_caps``), the side
    panes within ``centre_room``'s shares; None when it already is."""
    total = sum(sizes)
    if len(sizes) != 3 or total < 600:
        return None
    _cap, _share, least = _caps(total)
    left = max(sizes[0], int(total * LIST_FLOOR))
    right = max(sizes[2], least) if sizes[2] else 0  # 0: folded away
    bounded = centre_room([left, total - left - right, right]) or [
        left,
        total - left - right,
        right,
    ]
    return None if bounded == sizes else bounded


def _tab_name(window: MainWindow, index: int) -> str:
    return window.tabs.tabText(index).replace("&", "")


FRAME_ROOM = (16, 48)  # the window manager's frame and title bar, not known before show


def fit_to_screen(window: QWidget, screen: QScreen | None = None) -> bool:
    """Shrink a window larger than its screen's free area (a laptop, a small monitor)
    to fit in it, centred there; False when it already fits."""
    screen = screen or window.screen() or QGuiApplication.primaryScreen()
    if screen is None:
        return False
    free = screen.availableGeometry()
    w = min(window.width(), free.width() - FRAME_ROOM[0])
    h = min(window.height(), free.height() - FRAME_ROOM[1])
    if (w, h) == (window.width(), window.height()):
        return False
    window.resize(w, h)
    window.move(
        free.x() + (free.width() - w - FRAME_ROOM[0]) // 2,
        free.y() + (free.height() - h - FRAME_ROOM[1]) // 2,
    )
    return True


def restore_layout(window: MainWindow) -> None:
    """Geometry and toolbars of the last run."""
    s = window.settings
    geometry = s.state("geometry")
    if geometry is not None:
        window.restoreGeometry(geometry)
    state = s.state("window_state")
    if state is not None:
        window.restoreState(state)


def restore_split(window: MainWindow) -> bool:
    """The split of the last run (when the session's views are built); False when none
    was saved."""
    split = window.settings.state("splitter")
    if split is not None:
        window.splitter.restoreState(split)
    return split is not None


def restore_options(window: MainWindow) -> None:
    """The estimator, policy and counts chosen in the last run (before any file is
    opened: a file given at start is analysed with them)."""
    saved = window.settings.analysis_options()
    valid = {"estimator": names(), "policy": POLICIES, "counts": ("agent", "wire")}
    chosen: dict[str, Any] = {k: v for k, v in saved.items() if v in valid[k]}
    if chosen:
        window.state.options = replace(window.state.options, **chosen)
        window.controls.set_options(window.state.options)


def restore_choices(window: MainWindow) -> None:
    """The tab and timeline toggles chosen in the last run, once every panel's tab is
    there (the Insights panel keeps its budget itself)."""
    tab = window.settings.tab()
    for i in range(window.tabs.count()):
        if _tab_name(window, i) == tab:
            window.tabs.setCurrentIndex(i)
    window.timeline.set_toggles(window.settings.timeline_toggles())  # the plot: when built


def save(window: MainWindow) -> None:
    s, o = window.settings, window.state.options
    s.set_analysis_options(o.estimator, o.policy, o.counts)
    s.set_state("geometry", window.saveGeometry())
    if not window.finished:  # closed before the rest was built (the panels' docks, the
        s.sync()  # tabs): the last run's layout and choices stay
        return
    s.set_state("window_state", window.saveState())
    s.set_tab(_tab_name(window, window.tabs.currentIndex()))
    s.set_timeline_toggles(window.timeline.toggles())
    folded = window.content.isHidden()
    window.fold_content(False)  # its width is kept, folded or not
    s.set_state("splitter", window.splitter.saveState())
    window.fold_content(folded)
    s.sync()
