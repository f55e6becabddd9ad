"""Under the library's table while a search is on: the picked session's requests that
hold the words, each with the text around them. A double-click (or Enter) on one
opens the session at that request."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from ctxviewer.fmt import plural
from ctxviewer.gui.library.model import when
from ctxviewer.gui.library.queries import Hits

REQUEST_ROLE = Qt.ItemDataRole.UserRole + 1


class HitsPane(QWidget):
    """What ``show_hits`` is given; ``open_requested`` asks for a session at a request."""

    open_requested = Signal(object, int)  # the session's row, the request's index

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("library_hits")
        self.entry: dict[str, Any] | None = None
        self.label = QLabel("", self)
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.list = QTreeWidget(self)
        self.list.setColumnCount(2)
        self.list.setHeaderLabels(["Request", "Where the words are"])
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(True)
        self.list.setAlternatingRowColors(True)
        self.list.setColumnWidth(0, 80)
        self.list.itemActivated.connect(self._on_item_activated)
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 4, 0, 0)
        box.addWidget(self.label)
        box.addWidget(self.list, 1)

    def prompt(self, text: str) -> None:
        """A search is on and no session is picked."""
        from html import escape  # html.entities: not before the window's first paint

        self.entry = None
        self.list.clear()
        self.label.setText(f"Pick a session to see its requests that hold “{escape(text)}”.")

    def waiting(self, entry: dict[str, Any], text: str) -> None:
        from html import escape

        self.entry = entry
        self.list.clear()
        self.label.setText(f"Looking for “{escape(text)}” in {escape(_name(entry))}…")

    def show_hits(self, hits: Hits) -> None:
        """The matching requests of ``hits.entry`` (the first of them when there are many)."""
        from html import escape

        self.entry = hits.entry
        self.list.clear()
        for m in hits.matches:
            item = QTreeWidgetItem([str(m["request"]), m["snippet"]])
            item.setData(0, REQUEST_ROLE, m["request"])
            item.setTextAlignment(0, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            item.setToolTip(1, m["snippet"])
            self.list.addTopLevelItem(item)
        shown = len(hits.matches)
        what = (
            plural(hits.total, "request")
            if shown == hits.total
            else f"the first {shown:,} of {hits.total:,} requests"
        )
        verb = "holds" if hits.total == 1 else "hold"
        self.label.setText(
            f"<b>{escape(_name(hits.entry))}</b>: {what} {verb} "
            f"“{escape(hits.text)}”. "
            "Double-click one (or press Enter) to open the session there."
        )
        first = self.list.topLevelItem(0)
        if first is not None:
            self.list.setCurrentItem(first)

    def _on_item_activated(self, item: QTreeWidgetItem, _column: int) -> None:
        request = item.data(0, REQUEST_ROLE)
        if self.entry is not None and isinstance(request, int):
            self.open_requested.emit(self.entry, request)


def _name(entry: dict[str, Any]) -> str:
    """The session as the table's row names it: its start and its agent."""
    return " · ".join(x for x in (when(entry), entry.get("agent_label") or entry.get("agent")) if x)
