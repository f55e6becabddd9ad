"""The "Redundancy" page: stale and duplicated content, by what carrying it cost.

One row per ``Finding`` (largest carry cost first, as the core sorts them):
kind, path, tokens, the number of later requests that still carried it,
the carry cost, and whether the ``trim`` compaction strategy drops it.
Picking a row selects the request where the content first appeared.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from ctxviewer.analysis.insights import Finding, Insights
from ctxviewer.gui.insights.model import Column, fmt_int, fmt_tokens
from ctxviewer.gui.insights.table import InsightsTable

CHECK = "\u2713"


def what(f: Finding) -> str:
    return f.path or f.name


def short(f: Finding) -> str:
    """The path's last three parts ('.../live/session_live.ex'), or the item's name."""
    if not f.path:
        return f.name
    parts = f.path.replace("\\", "/").split("/")
    return f.path if len(parts) <= 2 else "…/" + "/".join(parts[-2:])


def describe(f: Finding) -> str:
    return (
        f"<b>{f.kind.replace('_', ' ')}</b> {what(f)}: {f.tokens:,} tokens, first carried "
        f"by request {f.first_request}, redundant from request {f.since_request} "
        f"(superseded by {f.superseded_by}), then carried by {f.carried_by} requests "
        f"= {f.carry_tokens:,} tokens" + (f"; trim drops it {CHECK}" if f.trim_drops else "")
    )


COLUMNS = (
    Column("kind", lambda f: f.kind.replace("_", " ")),
    Column("path / item", short, tip=what),
    Column("tokens", lambda f: f.tokens, fmt_int, numeric=True),
    Column("carried by", lambda f: f.carried_by, lambda n: f"{n} req", numeric=True),
    Column("carry cost", lambda f: f.carry_tokens, fmt_int, numeric=True),
    Column(
        "trim",
        lambda f: f.trim_drops,
        lambda v: CHECK if v else "",
        tip=lambda f: "the trim strategy drops it" if f.trim_drops else "trim keeps it",
    ),
    Column(
        "first → stale",
        lambda f: f"{f.first_request} → {f.since_request}",
        sort=lambda f: f.first_request,
        tip=lambda f: "first carried by request → redundant from request",
    ),
    Column("superseded by", lambda f: f.superseded_by),
)


class RedundancyPage(InsightsTable):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(COLUMNS, lambda f: f.first_request, parent, describe=describe)
        self.set_note(
            f"Carry cost: tokens x later requests that still carried the content. "
            f"The trim compaction strategy would drop the rows marked {CHECK} "
            "(reads superseded by a later read, old todo lists); it keeps reads "
            "that were only superseded by an edit."
        )

    def set_insights(self, ins: Insights | None) -> None:
        if ins is None:
            self.set_rows(())
            self.set_summary("")
            return
        r = ins.redundancy
        self.set_rows(r.findings)
        kinds = ", ".join(f"{k.replace('_', ' ')} {n}" for k, (n, _t) in r.by_kind().items())
        self.set_summary(
            f"<b>{len(r.findings)}</b> finding{'' if len(r.findings) == 1 else 's'}"
            f"{f' ({kinds})' if kinds else ''} · carried <b>{fmt_tokens(r.carry_tokens)}</b> "
            f"tokens in later requests · trim drops {fmt_tokens(r.trim_carry_tokens)} of them"
        )
