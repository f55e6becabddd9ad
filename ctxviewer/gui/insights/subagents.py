"""The "Sub-agents" page: what each sidechain run cost and who spawned it.

One row per ``SubagentRun``; picking a row selects the parent request (the
main-chain request whose Task/Agent call spawned the run), or the run's
first request when no parent was found.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from ctxviewer.analysis.insights import Insights, SubagentRun
from ctxviewer.fmt import plural
from ctxviewer.gui.insights.model import Column, fmt_int, fmt_tokens, fmt_usd
from ctxviewer.gui.insights.table import InsightsTable
from ctxviewer.gui.session.request_model import short_model


def target(run: SubagentRun) -> int | None:
    """The request a picked run selects: its parent, else its first request."""
    if run.parent is not None:
        return run.parent
    return run.requests[0] if run.requests else None


def _name(run: SubagentRun) -> str:
    return run.description or run.label


def _tools(run: SubagentRun) -> str:
    return ", ".join(f"{name} {n}" for name, n in run.tools) or "no tool calls"


COLUMNS = (
    Column("run", _name, tip=lambda r: f"{r.label}\n{_tools(r)}"),
    Column("model", lambda r: short_model(r.model) if r.model else None),
    Column("requests", lambda r: len(r.requests), fmt_int, numeric=True),
    Column("peak context", lambda r: r.peak_context, fmt_int, numeric=True),
    Column("tokens", lambda r: r.total_tokens, fmt_int, numeric=True),
    Column("cost", lambda r: r.cost_usd, fmt_usd, numeric=True),
    Column("tool calls", lambda r: r.tool_calls, fmt_int, numeric=True, tip=_tools),
    Column("parent request", lambda r: r.parent, fmt_int, numeric=True),
    Column("link", lambda r: r.link),
)


class SubagentsPage(InsightsTable):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(COLUMNS, target, parent, stretch=0)
        self.set_note(
            "Link: exact when the run's first message is the prompt of its "
            "parent's Task/Agent call; inferred from timing otherwise."
        )

    def set_insights(self, ins: Insights | None) -> None:
        runs = ins.subagents if ins is not None else ()
        self.set_rows(runs)
        if ins is None:
            self.set_summary("")
            return
        if not runs:
            self.set_summary("No sub-agent runs in this session.")
            return
        cost = [r.cost_usd for r in runs]
        usd = None if any(c is None for c in cost) else sum(c or 0.0 for c in cost)
        self.set_summary(
            f"<b>{len(runs)}</b> run{'' if len(runs) == 1 else 's'} · "
            f"{plural(sum(len(r.requests) for r in runs), 'request')} · "
            f"{fmt_tokens(sum(r.total_tokens for r in runs))} tokens · <b>{fmt_usd(usd)}</b>"
        )
