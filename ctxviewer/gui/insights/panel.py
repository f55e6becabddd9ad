"""The "Insights" tab: cost & cache, sources, cache breaks, redundancy, sub-agents, diff.

``InsightsPanel`` is a passive view over the core ``insights`` package:
``set_analysis`` (a new session or estimator makes it recompute, on the
thread pool, and only once the tab is visible or a budget needs it),
``set_current`` (the selected request). Intent leaves as ``request_selected``;
``budget_marks_changed`` carries ``(request, kind, label)`` marks for the
timeline. ``install(host)`` adds the tab to the window (a ``PanelHost``) and
wires it to ``host.state`` and the timeline plot (see ``gui/panels.py``).
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction, QKeySequence, QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QTabWidget, QVBoxLayout, QWidget

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.insights import Budget, BudgetReport, Insights, RequestDiff, evaluate_budget
from ctxviewer.fmt import plural
from ctxviewer.gui.host import PanelHost, SharedInsights
from ctxviewer.gui.insights.budget import amount
from ctxviewer.gui.insights.cache import CacheBreaksPage
from ctxviewer.gui.insights.compactions import CompactionsPage
from ctxviewer.gui.insights.cost import CostPage
from ctxviewer.gui.insights.diff import DiffPage
from ctxviewer.gui.insights.redundancy import RedundancyPage
from ctxviewer.gui.insights.runner import InsightsResult, InsightsRunner
from ctxviewer.gui.insights.sources import SourcesPage
from ctxviewer.gui.insights.subagents import SubagentsPage


def budget_marks(report: BudgetReport | None) -> list[tuple[int, str, str]]:
    """Timeline marks of a budget's crossings: (request index, kind, label)."""
    if report is None:
        return []
    b = report.budget
    out = []
    for c in report.crossings:
        task = f" (task {c.task + 1})" if b.scope == "task" else ""
        what = "budget warn" if c.kind == "warn" else "budget limit"
        out.append((c.request, c.kind, f"{what} {amount(c.threshold, b.unit)}{task}"))
    return out


class InsightsPanel(QWidget):
    request_selected = Signal(int)
    requests_selected = Signal(object)  # the requests that carried a source
    budget_marks_changed = Signal(list)  # [(request index, kind, label)]
    insights_ready = Signal(object)  # Insights now shown
    diff_ready = Signal(object)  # RequestDiff now shown

    def __init__(self, parent: QWidget | None = None, runner: InsightsRunner | None = None) -> None:
        super().__init__(parent)
        self._waiting = False  # the session is a first part of a file being read
        self.runner = runner or InsightsRunner(parent=self)
        self.analysis: Analysis | None = None
        self.result: InsightsResult | None = None
        self.budget: Budget | None = None
        self.budget_report: BudgetReport | None = None
        self._key: tuple[int, str] | None = None  # (id of the session, estimator) shown
        self._dirty = False
        self.status = QLabel(self)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 0)
        self.progress.setMaximumWidth(160)
        self.progress.setMaximumHeight(14)
        self.progress.setTextVisible(False)
        self.progress.setVisible(False)
        top = QHBoxLayout()
        top.setContentsMargins(6, 4, 6, 0)
        top.addWidget(self.status, 1)
        top.addWidget(self.progress)
        self.pages = QTabWidget(self)
        self.pages.setDocumentMode(True)
        self.cost, self.cache = CostPage(self), CacheBreaksPage(self)
        self.redundancy, self.subagents = RedundancyPage(self), SubagentsPage(self)
        self.diff, self.compactions = DiffPage(self), CompactionsPage(self)
        self.sources = SourcesPage(self)
        for page, title in (
            (self.cost, "Cost && cache"),
            (self.sources, "Sources"),
            (self.cache, "Cache breaks"),
            (self.redundancy, "Redundancy"),
            (self.subagents, "Sub-agents"),
            (self.compactions, "Compactions"),
            (self.diff, "Diff"),
        ):
            self.pages.addTab(page, title)
            page.request_selected.connect(self.request_selected)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.pages, 1)
        self.runner.computed.connect(self._on_runner_computed)
        self.runner.diffed.connect(self._on_runner_diffed)
        self.runner.failed.connect(self._on_runner_failed)
        self.runner.busy_changed.connect(self._on_runner_busy_changed)
        self.cost.budget_changed.connect(self._on_cost_budget_changed)
        self.cost.reload_requested.connect(self.recompute)
        self.diff.diff_requested.connect(self._on_diff_requested)
        self.sources.requests_selected.connect(self.requests_selected)
        self._show_status()

    @property
    def insights(self) -> Insights | None:
        return self.result.insights if self.result is not None else None

    # -- setters --------------------------------------------------------------------
    def set_analysis(self, a: Analysis | None, wait: bool = False) -> None:
        """Recompute when the session or the estimator changed (not for a policy change);
        ``wait``: ``a`` is the first part of a file still being read, computed later."""
        self.analysis = a
        key = (id(a.session), a.estimator_name) if a is not None else None
        if key == self._key and not wait:
            return
        self._key = None if wait else key
        self._dirty = a is not None
        self._waiting = wait
        if a is None:
            self._show(None)
        elif wait:
            self._show(None)
            self.status.setText("Insights are computed once the whole file is read…")
        elif self.isVisible() or self.budget is not None:
            self.recompute()
        else:
            self._show_status()

    def set_current(self, index: int | None) -> None:
        self.cost.set_current(index)
        self.diff.set_current(index)

    def recompute(self) -> None:
        a = self.analysis
        if a is None:
            return
        self._dirty = False
        self.runner.compute(a.session, a.estimator)

    # -- results ----------------------------------------------------------------------
    def _show(self, result: InsightsResult | None) -> None:
        self.result = result
        ins = self.insights
        for page in (
            self.cost,
            self.sources,
            self.cache,
            self.redundancy,
            self.subagents,
            self.compactions,
        ):
            page.set_insights(ins)
        if result is not None:
            self.diff.set_requests(len(result.session.requests), result.previous)
        else:
            self.diff.set_requests(0, {})
        self._update_budget()
        self._show_status()
        if ins is not None:
            self.insights_ready.emit(ins)

    def _update_budget(self) -> None:
        ins, a = self.insights, self.analysis
        report = None
        if ins is not None and self.budget is not None and a is not None:
            report = evaluate_budget(ins.cost, self.budget, a.session.requests)
        self.budget_report = report
        self.cost.set_budget_report(report)
        self.budget_marks_changed.emit(budget_marks(report))

    def _show_status(self, error: str = "") -> None:
        a, ins = self.analysis, self.insights
        if error:
            text = f"<span style='color:#d03b3b'>Insights failed: {error}</span>"
        elif a is None:
            text = "Open a session to see its cost, cache breaks, redundancy and sub-agents."
        elif self.runner.is_busy() and ins is None:
            text = "Computing insights…"
        elif ins is None:
            text = "Insights are computed when this tab is shown."
        else:
            c = ins.cost
            unknown = (
                f" · <b>unpriced:</b> {', '.join(c.unknown_models)}" if c.unknown_models else ""
            )
            text = (
                f"{plural(len(c.requests), 'request')} · estimator {self.result.estimator}"  # type: ignore[union-attr]
                f"{unknown}"
            )
        self.status.setText(text)

    # -- slots ----------------------------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._dirty and not self._waiting:
            self.recompute()

    def _on_runner_computed(self, result: InsightsResult) -> None:
        a = self.analysis
        if a is None or result.session is not a.session or result.estimator != a.estimator.name:
            return  # a stale session or estimator
        self._show(result)

    def _on_runner_diffed(self, diff: RequestDiff) -> None:
        self.diff.set_diff(diff)
        self.diff_ready.emit(diff)

    def _on_runner_failed(self, reason: str) -> None:
        self._show_status(reason.removeprefix("internal error: "))

    def _on_runner_busy_changed(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        if busy and self.insights is None:
            self._show_status()

    def _on_cost_budget_changed(self, budget: Budget | None) -> None:
        self.budget = budget
        if self._dirty and budget is not None:
            self.recompute()  # the timeline needs the crossings even with the tab hidden
        self._update_budget()

    def _on_diff_requested(self, a: int, b: int) -> None:
        s = self.result.session if self.result is not None else None
        if s is not None and self.analysis is not None and max(a, b) < len(s.requests):
            self.runner.diff(s, a, b, self.analysis.estimator)


def _keep_budget(host: PanelHost, panel: InsightsPanel) -> None:
    """The budget of the last run (switched off: its values kept), saved at close."""
    box = panel.cost.budget
    saved = host.settings.budget()
    if saved is not None:
        on, values = saved
        box.set_budget(values)
        if not on:
            box.set_budget(None)
    host.closing.connect(lambda: host.settings.set_budget(box.isChecked(), box.values()))


def _mark_budget(host: PanelHost, marks: list[tuple[int, str, str]]) -> None:
    plot = host.timeline_plot()  # asked each time: a theme change builds it anew
    if plot is not None:
        plot.set_budget_marks(marks)


def install(host: PanelHost) -> InsightsPanel:
    """Add the Insights tab to the window and wire it to its state."""
    state = host.state
    panel = InsightsPanel(host.window())
    host.add_tab(panel, "Insights")
    state.analysis_changed.connect(lambda a: panel.set_analysis(a, wait=state.loading))
    state.request_changed.connect(panel.set_current)
    panel.request_selected.connect(host.select_request)
    panel.budget_marks_changed.connect(lambda marks: _mark_budget(host, marks))
    panel.requests_selected.connect(host.select_requests)
    panel.runner.computed.connect(  # for the Findings tab
        lambda r: host.share_insights(SharedInsights(r.session, r.estimator, r.insights))
    )
    _keep_budget(host, panel)
    # a second key for the tab (View > Insights, Ctrl+4, is the help menu's tab action):
    # on the window only, so View lists the tab once
    action = QAction("&Insights", host.window())
    action.setShortcut(QKeySequence("Ctrl+Shift+I"))
    action.triggered.connect(lambda: host.show_tab(panel))
    host.add_action(action)
    if state.analysis is not None:
        panel.set_analysis(state.analysis)
        panel.set_current(state.index)
    return panel
