"""Registry of the main window's optional panels and dialogs.

Each entry names a module under ``ctxviewer.gui`` with ``install(window) ->
object``: it adds its tab, dock or menu actions to a built ``MainWindow``
and connects itself to ``window.state``. The window calls ``install_all``
once, at the end of its construction; a panel that fails to install is
reported on stderr and left out, never taking the window down.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

# panel name -> its module under ctxviewer.gui, in the order their tabs / menus appear
# (the name is the key of ``MainWindow.panels``)
PANELS: dict[str, str] = {
    "live_panel": "live.panel",
    "analysis_panels": "analysis_panels",
    "insights_panel": "insights.panel",
    "findings_panel": "findings_panel",
    "context_menus": "session.context_menus",
    "help_menu": "help_menu",
}


def install_all(window: Any) -> dict[str, object]:
    installed: dict[str, object] = {}
    for name, module_name in PANELS.items():
        try:
            module = importlib.import_module(f"ctxviewer.gui.{module_name}")
            installed[name] = module.install(window)
        except Exception as e:  # noqa: BLE001 - one broken panel must not break the window
            print(f"ctxviewer: panel {name} not available: {type(e).__name__}: {e}",
                  file=sys.stderr)
    return installed
