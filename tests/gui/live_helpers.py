"""Helpers shared by the live-attach GUI tests."""

from __future__ import annotations

from pathlib import Path

from ctxviewer.gui.live import panel as live_panel
from ctxviewer.ingest import load


def panel_of(window) -> live_panel.LivePanel:
    """The window's live panel (installed by ``panels.install_all`` or here)."""
    found = window.findChild(live_panel.LivePanel)
    return found if found is not None else live_panel.install(window)


def lines_of(path: str | Path) -> list[bytes]:
    return Path(path).read_bytes().splitlines(keepends=True)


def requests_in(path: str | Path) -> int:
    """How many requests a plain load finds (a half-written last line is skipped)."""
    return len(load(str(path)).requests)


def shown(window) -> int:
    return window.requests.request_model.rowCount()
