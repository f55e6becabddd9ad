"""Registry of the main window's optional panels and dialogs.

Each entry names a module with ``install(host: PanelHost) -> object``: it adds
its tab, dock or menu actions to the window through the host
(``gui/host.py``) and connects itself to ``host.state``. The window calls
``install_all`` once, at the end of its construction. A panel that fails to
install is a bug: ``PanelError`` says which, and the window is not built (its
test fails) instead of opening without it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxviewer.gui.host import PanelHost

# panel name (its key in ``MainWindow.panels``) -> its module, in the order their tabs
# and menus appear
PANELS: dict[str, str] = {
    "live_panel": "ctxviewer.gui.live.panel",
    "analysis_panels": "ctxviewer.gui.tools.panel",
    "insights_panel": "ctxviewer.gui.insights.panel",
    "findings_panel": "ctxviewer.gui.findings.panel",
    # the library is a page of its own before the session's views (File > Library…)
    "library": "ctxviewer.gui.library.panel",
    "help_menu": "ctxviewer.gui.help.menu",  # last: it lists every tab and shortcut
}


# what the first screen needs (the library page, the File menu's and toolbar's live
# actions): installed before the window shows; the rest once it has painted (their
# modules import pyqtgraph, numpy and most of the analysis)
FIRST = ("live_panel", "library")


class PanelError(RuntimeError):
    """A panel could not be imported or installed."""


def install_all(
    host: PanelHost, only: tuple[str, ...] | None = None, skip: tuple[str, ...] = ()
) -> dict[str, object]:
    """Install the panels of ``PANELS`` (``only`` those, none of ``skip``) into ``host``,
    in their order; the panels by name."""
    installed: dict[str, object] = {}
    for name, module_name in PANELS.items():
        if (only is not None and name not in only) or name in skip:
            continue
        try:
            module = importlib.import_module(module_name)
            installed[name] = module.install(host)
        except Exception as e:
            raise PanelError(
                f"panel {name} ({module_name}) failed to install: {type(e).__name__}: {e}"
            ) from e
    return installed
