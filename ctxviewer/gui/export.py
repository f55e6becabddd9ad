"""Exports of the current view: the breakdown as JSON or CSV, a widget as PNG."""

from __future__ import annotations

import csv
from collections.abc import Iterator

from PySide6.QtWidgets import QWidget

from ctxviewer.analysis.breakdown import Breakdown, Item
from ctxviewer.analysis.report import breakdown_json
from ctxviewer.jsonish import pretty

CSV_HEADER = ("category", "item", "tokens", "percent")


def _item_rows(category: str, items: tuple[Item, ...], b: Breakdown,
               prefix: str = "") -> Iterator[tuple[str, str, int, float]]:
    for x in items:
        name = f"{prefix}{x.name}"
        yield category, name, x.tokens, b.percent(x.tokens)
        yield from _item_rows(category, x.items, b, f"{name} / ")


def csv_rows(b: Breakdown) -> Iterator[tuple[str, str, int, float]]:
    """(category, item, tokens, percent of window): one row per category, then its items
    (nested items named ``parent / child``)."""
    for c in b.categories:
        yield c.name, "", c.tokens, b.percent(c.tokens)
        yield from _item_rows(c.name, c.items, b)


def write_breakdown_csv(b: Breakdown, path: str) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(CSV_HEADER)
        w.writerows(csv_rows(b))


def write_breakdown_json(b: Breakdown, path: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(pretty(breakdown_json(b)) + "\n")


def save_png(widget: QWidget, path: str) -> bool:
    """Render ``widget`` as it is on screen into a PNG file."""
    return widget.grab().save(path, "PNG")
