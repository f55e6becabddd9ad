"""Exports of the current view: the breakdown as JSON or CSV, a widget as PNG."""

from __future__ import annotations

import csv
import os
from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import QWidget

from ctxviewer.analysis.breakdown import Breakdown
from ctxviewer.analysis.report import CSV_HEADER, breakdown_csv_rows, breakdown_json
from ctxviewer.jsonish import pretty


def write_breakdown_csv(b: Breakdown, path: str) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(CSV_HEADER)
        w.writerows(breakdown_csv_rows(b))


def write_breakdown_json(b: Breakdown, path: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(pretty(breakdown_json(b)) + "\n")


def save_png(widget: QWidget, path: str) -> bool:
    """Render ``widget`` as it is on screen into a PNG file."""
    return widget.grab().save(path, "PNG")


def _write_png(window: Any, path: str) -> None:
    if not save_png(window.bar_panel, path):
        raise OSError(f"the image could not be saved as {os.path.basename(path)}")


# kind -> (dialog title, file filter, writer(window, breakdown, path))
KINDS: dict[str, tuple[str, str, Callable[[Any, Breakdown, str], None]]] = {
    "json": (
        "Export breakdown as JSON",
        "JSON (*.json)",
        lambda _w, b, path: write_breakdown_json(b, path),
    ),
    "csv": (
        "Export breakdown as CSV",
        "CSV (*.csv)",
        lambda _w, b, path: write_breakdown_csv(b, path),
    ),
    "png": ("Export bar as PNG", "PNG image (*.png)", lambda w, _b, path: _write_png(w, path)),
}


def export_view(window: Any, kind: str) -> None:
    """File > Export: ask where, write the selected request's breakdown (or the bar),
    and say what happened (a dialog on failure, the status bar on success)."""
    title, filter_, write = KINDS[kind]
    s, b = window.state.session, window.state.breakdown
    if b is None:
        return
    base = os.path.splitext(os.path.basename(s.path or "session"))[0] if s else "session"
    path = window.ask_save_path(title, f"{base}-request{b.request}.{kind}", filter_)
    if not path:
        return
    try:
        write(window, b, path)
    except OSError as e:
        window.show_error("Export failed", f"cannot write {path}: {e.strerror or e}")
    else:
        window.status.showMessage(f"Saved {path}", 5000)
