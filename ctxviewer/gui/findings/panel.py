"""The "Findings" tab: what to cut from the context, most severe and largest first.

A passive view over ``analysis.findings``: computed on the thread pool once
the tab is shown (with the Insights tab's redundancy and cache breaks when it
has them for the same session), one row per finding with its code, title,
tokens per request, tokens carried, cost and the agent's own step to change
it. Picking a row selects the finding's request (``Finding.shown``) in the
request list and timeline, and its items in the breakdown tree.
``install(host)`` adds the tab (View > Findings, Ctrl+5, comes with the tab).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QShowEvent
from PySide6.QtWidgets import QVBoxLayout, QWidget

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.findings import ERROR, WARN, Finding, findings
from ctxviewer.analysis.insights import load_prices
from ctxviewer.fmt import fmt_tokens, plural, usd
from ctxviewer.gui.host import PanelHost, SharedInsights
from ctxviewer.gui.insights.model import Column, fmt_int
from ctxviewer.gui.insights.table import InsightsTable
from ctxviewer.gui.widgets.jobs import LatestJob

TINTS = {ERROR: QColor(208, 59, 59, 70), WARN: QColor(230, 160, 30, 60)}


def _usd(x: float | None) -> str:
    return usd(x, "")


def unused_tools_text(found: list[Finding]) -> str:
    """What the unused tools cost, in dollars where every request is priced, else in
    the tokens they carried (never $0 for what has no price)."""
    unused = [f for f in found if f.code == "unused-tool"]
    if not unused:
        return "no unused tools"
    if all(f.usd is not None for f in unused):
        return f"unused tools cost {usd(sum(f.usd or 0.0 for f in unused))}"
    tokens = sum(f.tokens_carried or 0 for f in unused)
    return f"unused tools carried {fmt_tokens(tokens)} tokens (no price for the model)"


def describe(f: Finding) -> str:
    reqs = (
        f"request {f.requests[0]}"
        if len(f.requests) == 1
        else f"{len(f.requests)} requests ({f.requests[0]}..{f.requests[-1]})"
        if f.requests
        else ""
    )
    return (
        f"<b>{f.severity}</b> <code>{f.code}</code> {f.title}<br>{f.detail}"
        f"{'<br>' + reqs if reqs else ''}<br><b>Action:</b> {f.action}"
    )


def _tip(f: Finding) -> str:
    return f"{f.code}: {f.detail or f.title}\nAction: {f.action}"


# The title gets the room (it stretches); the code and the agent's action are in the
# row's tooltip and, for the picked row, in full below the table.
COLUMNS = (
    Column("severity", lambda f: f.severity, sort=lambda f: -f.sort_key[0], tip=_tip),
    Column("title", lambda f: f.title, tip=_tip),
    Column("tokens/req", lambda f: f.tokens_per_request, fmt_int, numeric=True),
    Column("carried", lambda f: f.tokens_carried, fmt_int, numeric=True),
    Column(
        "usd",
        lambda f: f.usd,
        _usd,
        numeric=True,
        sort=lambda f: f.usd if f.usd is not None else -1.0,
    ),
)
TITLE = 1  # the stretching column


class FindingsPanel(QWidget):
    finding_picked = Signal(object)  # the Finding picked (click or keyboard)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.analysis: Analysis | None = None
        self.found: list[Finding] | None = None
        # the insights computed last, whose redundancy and cache breaks are reused when
        # they are of this session and estimator
        self.insights_of: Callable[[], SharedInsights | None] = lambda: None
        self._dirty = False
        self._jobs = LatestJob(parent=self)
        self._jobs.finished.connect(self._on_finished)
        self._jobs.failed.connect(self._on_failed)
        self.table = InsightsTable(
            COLUMNS,
            lambda _f: None,
            self,
            describe=describe,
            tint=lambda f: TINTS.get(f.severity),
            stretch=TITLE,
        )
        self.table.set_note(
            "Sorted by severity, then tokens carried over the session. "
            "usd: what carrying it cost (cache reads and writes priced apart); "
            "removing it would have saved as much. Pick a row to select its "
            "request and items."
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table)
        self.table.view.clicked.connect(self._on_view_picked)
        self.table.view.selectionModel().currentRowChanged.connect(self._on_view_picked)
        self._show(None)

    # -- setters --------------------------------------------------------------------
    def set_analysis(self, a: Analysis | None, wait: bool = False) -> None:
        same = (
            a is not None
            and self.analysis is not None
            and a.session is self.analysis.session
            and a.estimator_name == self.analysis.estimator_name
            and a.window == self.analysis.window
        )
        self.analysis = a
        if same and not wait:
            return
        self._dirty = a is not None and not wait
        self._show(None, "Findings are computed once the whole file is read…" if wait else "")
        if self._dirty and self.isVisible():
            self.recompute()

    def recompute(self) -> None:
        a = self.analysis
        if a is None:
            return
        self._dirty = False
        ins = self.insights_of()
        parts: dict[str, Any] = {}
        if ins is not None and ins.session is a.session and ins.estimator == a.estimator.name:
            parts = {
                "redundant": ins.insights.redundancy.findings,
                "breaks": ins.insights.cache.breaks,
            }
        self.table.set_summary("Computing findings…")
        self._jobs.start(lambda _p, _c: findings(a, prices=load_prices(), **parts), soon=True)

    # -- results ----------------------------------------------------------------------
    def _show(self, found: list[Finding] | None, status: str = "") -> None:
        self.found = found
        self.table.set_rows(found or ())
        if found is None:
            self.table.set_summary(
                status
                or (
                    "Open a session to see its findings."
                    if self.analysis is None
                    else "Findings are computed when this tab is shown."
                )
            )
            return
        counts = ", ".join(
            f"{sum(f.severity == s for f in found)} {s}" for s in ("error", "warn", "info")
        )
        self.table.set_summary(
            f"<b>{plural(len(found), 'finding')}</b> ({counts}) · {unused_tools_text(found)}"
        )

    def _on_finished(self, found: object) -> None:
        self._show(list(found))  # type: ignore[call-overload]

    def _on_failed(self, reason: str) -> None:
        self._show(None, f"<span style='color:#d03b3b'>Findings failed: {reason}</span>")

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._dirty:
            self.recompute()

    def _on_view_picked(self, index: QModelIndex, _previous: object = None) -> None:
        if index.isValid():
            f = index.data(Qt.ItemDataRole.UserRole)
            if f is not None:
                self.finding_picked.emit(f)


def show_finding(host: PanelHost, f: Finding) -> None:
    """Select ``f``'s request in the list and timeline and its items in the breakdown."""
    if f.shown is not None:
        host.select_request(f.shown)
    host.show_in_breakdown(f.items, f.messages, f.category)


def install(host: PanelHost) -> FindingsPanel:
    """Add the Findings tab to the window and wire it to its state."""
    state = host.state
    panel = FindingsPanel(host.window())
    panel.insights_of = host.shared_insights
    host.add_tab(panel, "Findings")  # View > Findings: the help menu's tab actions
    state.analysis_changed.connect(lambda a: panel.set_analysis(a, wait=state.loading))
    panel.finding_picked.connect(lambda f: show_finding(host, f))
    if state.analysis is not None:
        panel.set_analysis(state.analysis)
    return panel
