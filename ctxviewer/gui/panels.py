"""Registry of the main window's optional panels and dialogs.

Each entry is a module under ``ctxviewer.gui`` with ``install(window) ->
object``: it adds its tab, dock or menu actions to a built ``MainWindow``
and connects itself to ``window.state``. The window calls ``install_all``
once, at the end of its construction; a panel that fails to install is
reported on stderr and left out, never taking the window down.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

# module names under ctxviewer.gui, in the order their tabs / menus appear
PANELS: list[str] = ["live_panel", "analysis_panels", "insights_panel", "findings_panel",
                     "context_menus", "library",
                     "help_menu"]


def install_all(window: Any) -> dict[str, object]:
    installed: dict[str, object] = {}
    for name in PANELS:
        try:
            module = importlib.import_module(f"ctxviewer.gui.{name}")
            installed[name] = module.install(window)
        except Exception as e:  # noqa: BLE001 - one broken panel must not break the window
            print(f"ctxviewer: panel {name} not available: {type(e).__name__}: {e}",
                  file=sys.stderr)
    return installed
