"""The "Diff" page: what changed between two requests, block by block.

Two spin boxes pick requests A and B; "Compare selected with previous" sets
B to the selected request and A to the previous request of the same
conversation ("Follow selection" keeps doing so). Any change emits
``diff_requested(a, b)``; the owner computes the ``RequestDiff`` off the GUI
thread and hands it back with ``set_diff``. Rows are tinted by status
(added / removed / changed); picking one selects the request it lives in.
"""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QPushButton, QSpinBox, QWidget

from ctxviewer.analysis.insights import BlockChange, RequestDiff
from ctxviewer.gui.insights.model import Column, fmt_int, fmt_tokens
from ctxviewer.gui.insights.table import InsightsTable
from ctxviewer.gui.widgets.palette import is_dark, tier_background

STATUS_TIER = {"added": "safe", "removed": "hard", "changed": "warn"}


def _signed(n: int) -> str:
    return f"{n:+,}"


def _pos(p: tuple[int, int] | None) -> str:
    return "" if p is None else f"{p[0]}:{p[1]}"


COLUMNS = (
    Column("status", lambda c: c.status),
    Column("section", lambda c: c.section),
    Column("block", lambda c: c.label, tip=lambda c: c.label),
    Column("tokens A", lambda c: c.tokens_a, fmt_int, numeric=True),
    Column("tokens B", lambda c: c.tokens_b, fmt_int, numeric=True),
    Column("delta", lambda c: c.delta, _signed, numeric=True),
    Column("at A", lambda c: _pos(c.position_a), tip=lambda c: "message:block (or index:0)"),
    Column("at B", lambda c: _pos(c.position_b), tip=lambda c: "message:block (or index:0)"),
)


class DiffPage(InsightsTable):
    diff_requested = Signal(int, int)  # request A, request B

    def __init__(self, parent: QWidget | None = None) -> None:
        dark = is_dark()
        super().__init__(
            COLUMNS,
            lambda c: self._request_of(c),
            parent,
            stretch=2,
            tint=lambda c: QColor(tier_background(STATUS_TIER[c.status], dark)),
        )
        self.diff: RequestDiff | None = None
        self._previous: Mapping[int, int] = {}
        self._current: int | None = None
        self.spin_a, self.spin_b = QSpinBox(self), QSpinBox(self)
        for spin, name in ((self.spin_a, "A"), (self.spin_b, "B")):
            spin.setPrefix(f"{name}: request ")
            spin.setRange(0, 0)
            spin.setKeyboardTracking(False)
            spin.valueChanged.connect(self._on_spin_changed)
        self.previous_button = QPushButton("Compare selected with previous", self)
        self.follow = QCheckBox("Follow selection", self)
        self.busy = QLabel("computing…", self)
        self.busy.setVisible(False)
        row = QHBoxLayout()
        for w in (self.spin_a, self.spin_b, self.previous_button, self.follow, self.busy):
            row.addWidget(w)
        row.addStretch(1)
        self.box.insertLayout(0, row)
        self.previous_button.clicked.connect(self._on_previous_clicked)
        self.follow.toggled.connect(self._on_follow_toggled)
        self.set_note(
            "Blocks aligned in order (system, then messages); tools matched by "
            "name. Tokens from the current estimator."
        )

    def _request_of(self, c: BlockChange) -> int | None:
        if self.diff is None:
            return None
        return int(self.diff.a if c.status == "removed" else self.diff.b)

    # -- setters --------------------------------------------------------------------
    def set_requests(self, count: int, previous: Mapping[int, int]) -> None:
        """A new session: ``count`` requests, ``previous[i]`` the request before ``i``
        in its conversation. Compares the last request with its previous one."""
        self._previous = previous
        self.set_diff(None)
        last = max(count - 1, 0)
        for spin in (self.spin_a, self.spin_b):
            spin.blockSignals(True)
            spin.setRange(0, last)
            spin.blockSignals(False)
        self.compare(self._previous.get(last, max(last - 1, 0)), last)

    def compare(self, a: int, b: int) -> None:
        """Show A and B in the spin boxes and ask for their diff."""
        for spin, v in ((self.spin_a, a), (self.spin_b, b)):
            spin.blockSignals(True)
            spin.setValue(v)
            spin.blockSignals(False)
        self._on_spin_changed()

    def set_current(self, index: int | None) -> None:
        self._current = index
        if self.follow.isChecked():
            self._compare_current()

    def set_diff(self, diff: RequestDiff | None) -> None:
        self.diff = diff
        self.busy.setVisible(False)
        self.set_rows(diff.changes if diff is not None else ())
        if diff is None:
            self.set_summary("")
            return
        n = {s: sum(1 for c in diff.changes if c.status == s) for s in STATUS_TIER}
        self.set_summary(
            f"Request {diff.a} → {diff.b}: net <b>{_signed(diff.delta)}</b> tokens · "
            f"added {n['added']} (+{fmt_tokens(diff.tokens('added'))}) · "
            f"removed {n['removed']} (−{fmt_tokens(diff.tokens('removed'))}) · "
            f"changed {n['changed']} ({_signed(diff.tokens('changed'))}) · "
            f"unchanged {fmt_tokens(diff.unchanged_tokens)}"
            + (" · tool order changed" if diff.tools_reordered else "")
        )

    # -- slots ----------------------------------------------------------------------
    def _compare_current(self) -> None:
        if self._current is not None:
            b = self._current
            self.compare(self._previous.get(b, max(b - 1, 0)), b)

    def _on_previous_clicked(self) -> None:
        self._compare_current()

    def _on_follow_toggled(self, on: bool) -> None:
        if on:
            self._compare_current()

    def _on_spin_changed(self, *_: object) -> None:
        if self.spin_a.maximum() == 0 and self.spin_b.maximum() == 0 and not self._previous:
            return  # no session
        self.busy.setVisible(True)
        self.diff_requested.emit(self.spin_a.value(), self.spin_b.value())
