"""The "Cache breaks" page: where the cached prompt prefix stopped matching.

One row per ``CacheBreak`` (request, section, position, kind, tokens written
to the cache again, cache read lost); picking a row selects the request
whose prefix broke.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from ctxviewer.analysis.insights import CacheBreak, Insights
from ctxviewer.gui.insights.model import Column, fmt_int, fmt_pct, fmt_tokens, fmt_usd
from ctxviewer.gui.insights.table import InsightsTable


def position(b: CacheBreak) -> str:
    """'messages[3] block 1', 'tools[4]', 'system[0]', or '?' when the source cannot say."""
    if b.position is None:
        return "?" if b.section == "unknown" else b.section
    text = f"{b.section}[{b.position}]"
    return text + (f" block {b.block}" if b.block is not None else "")


def _tokens_tip(b: CacheBreak) -> str:
    return {
        "api": "from the API's cache_creation_input_tokens",
        "estimate": "estimated from the break to the end of the prompt",
    }.get(b.tokens_source, "unknown")


def describe(b: CacheBreak) -> str:
    return (
        f"<b>Request {b.request}</b> ({b.conversation}, after request {b.previous}): "
        f"{b.kind.replace('_', ' ')} at {position(b)} — {b.detail}"
    )


COLUMNS = (
    Column("request", lambda b: b.request, fmt_int, numeric=True),
    Column("previous", lambda b: b.previous, fmt_int, numeric=True),
    Column("conversation", lambda b: b.conversation),
    Column("section", lambda b: b.section),
    Column("position", position),
    Column("kind", lambda b: b.kind.replace("_", " ")),
    Column("re-cached", lambda b: b.tokens, fmt_int, numeric=True, tip=_tokens_tip),
    Column("lost cache read", lambda b: b.lost_cache_read, fmt_int, numeric=True),
    Column("detail", lambda b: b.detail, tip=lambda b: b.detail),
)


class CacheBreaksPage(InsightsTable):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(COLUMNS, lambda b: b.request, parent, describe=describe)
        self.set_note(
            "Re-cached: tokens written to the cache again after the break "
            "(paid at the cache-write rate). Lost cache read: the previous "
            "prompt minus this request's cache read."
        )

    def set_insights(self, ins: Insights | None) -> None:
        if ins is None:
            self.set_rows(())
            self.set_summary("")
            return
        c = ins.cache
        self.set_rows(c.breaks)
        self.set_summary(
            f"Cache hit rate <b>{fmt_pct(c.hit_rate)}</b> · caching saved "
            f"<b>{fmt_usd(c.saved_usd)}</b> · <b>{len(c.breaks)}</b> break"
            f"{'' if len(c.breaks) == 1 else 's'}, {fmt_tokens(c.rewritten_tokens)} tokens "
            "written to the cache again"
        )
