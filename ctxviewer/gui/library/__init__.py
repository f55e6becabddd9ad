"""The session library in the window (``ctxviewer.library`` underneath): the page
the window opens on when no file is given."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxviewer.gui.library.panel import LibraryPanel, install, panel_of

if TYPE_CHECKING:
    from ctxviewer.gui.host import PanelHost

__all__ = ["LibraryPanel", "install", "open_or_library", "panel_of", "show_library"]


def show_library(window: PanelHost, demo_if_empty: str | None = None) -> bool:
    """Show ``window``'s library page and scan; False when the panel is not installed."""
    panel = panel_of(window)
    if panel is None:
        return False
    panel.show_library(demo_if_empty=demo_if_empty)
    return True


def open_or_library(window: PanelHost, path: str) -> None:
    """Open ``path``; when it cannot be read, land on the library (the error says why)."""
    panel = panel_of(window)
    if panel is None:
        window.open_file(path)
    else:
        panel.open_or_land(path)
