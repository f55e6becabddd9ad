"""The "Compactions" page: what each real compaction kept, re-attached and dropped.

One row per compaction and kind of content (summary, kept word for word,
re-attached, dropped) and what it was (tool results, memory files, files read
again...); picking a row selects the first request after that compaction.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from PySide6.QtWidgets import QWidget

from ctxviewer.analysis.insights import Insights
from ctxviewer.analysis.insights.compaction_outcome import KINDS, Outcome
from ctxviewer.gui.insights.model import Column, fmt_int, fmt_tokens
from ctxviewer.gui.insights.table import InsightsTable


@dataclass(frozen=True)
class Row:
    """A row of the compactions table: one kind of part of one compaction."""

    after: int  # the first request after the compaction
    kind: str
    what: str
    count: int
    tokens: int


def rows_of(outcomes: tuple[Outcome, ...]) -> list[Row]:
    out: list[Row] = []
    for c in outcomes:
        groups: dict[tuple[str, str], list[int]] = defaultdict(list)
        for p in c.parts:
            groups[(p.kind, p.what)].append(p.tokens)
        for (kind, what), tokens in sorted(
            groups.items(), key=lambda kv: (KINDS.index(kv[0][0]), -sum(kv[1]))
        ):
            out.append(Row(c.after, kind, what, len(tokens), sum(tokens)))
    return out


COLUMNS = (
    Column("before request", lambda r: r.after, fmt_int, numeric=True),
    Column("part", lambda r: r.kind),
    Column("what", lambda r: r.what),
    Column("blocks", lambda r: r.count, fmt_int, numeric=True),
    Column("tokens (est.)", lambda r: r.tokens, fmt_int, numeric=True),
)


class CompactionsPage(InsightsTable):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(COLUMNS, lambda r: r.after, parent, stretch=2)
        self.set_note(
            "The sizes before and after are the API's; each part is the estimator's "
            "count times the ratio calibrated on this session's own growth."
        )

    def set_insights(self, ins: Insights | None) -> None:
        outcomes = ins.compactions if ins is not None else ()
        self.set_rows(rows_of(outcomes))
        if ins is None:
            self.set_summary("")
            return
        if not outcomes:
            self.set_summary("No compaction happened in this session.")
            return
        self.set_summary(
            " &nbsp;·&nbsp; ".join(
                f"before request <b>{c.after}</b>: {fmt_tokens(c.before_tokens)} → "
                f"<b>{fmt_tokens(c.after_tokens)}</b> (summary {fmt_tokens(c.tokens('summary'))}, "
                f"kept {fmt_tokens(c.tokens('kept'))}, re-attached "
                f"{fmt_tokens(c.tokens('reattached'))}, dropped {fmt_tokens(c.tokens('dropped'))})"
                for c in outcomes
            )
        )
