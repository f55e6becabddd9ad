"""The auto-compaction threshold a log proves, from the compactions it records.

An agent compacts on its own (``trigger: "auto"``) when what it is about to
send has reached its threshold, and the size it recorded then (Claude Code's
``compactMetadata.preTokens``) is at or above it; the main request before it
went out uncompacted, so its size (with its output, for agents that count
the whole exchange) was below it. Each such compaction bounds the threshold
that really fired: above the request before, at most the size recorded. A
profile whose threshold falls outside those bounds did not fire there: the
log wins (an auto-compact window set by ``CLAUDE_CODE_AUTO_COMPACT_WINDOW``,
the ``autoCompactWindow`` setting or the server, an older version's rule).
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxviewer.model import COMPACT_BOUNDARY, MAIN, Session


@dataclass(frozen=True)
class Fired:
    """The bounds an auto compaction puts on the threshold: ``above < auto <= at``."""

    above: int  # the size of the main request before it (the threshold is higher)
    at: int  # the size the agent recorded when it compacted (the threshold is no higher)
    request: int  # the first request after the compaction

    def allows(self, auto: int) -> bool:
        return self.above < auto <= self.at


def fired(session: Session, counts_output: bool) -> Fired | None:
    """The tightest bounds the log's auto compactions put on the threshold, or None when
    it records none (or bounds that contradict each other)."""
    above, at, first = 0, None, None
    prev = None
    for r in session.requests:
        if r.role != MAIN or r.sidechain:
            continue
        for e in r.events:
            if e.kind == COMPACT_BOUNDARY and e.trigger == "auto" and e.pre_tokens:
                before = 0
                if prev is not None and prev.usage is not None:
                    before = prev.usage.prompt_tokens + (
                        prev.usage.output_tokens if counts_output else 0
                    )
                above = max(above, min(before, e.pre_tokens - 1))
                at = e.pre_tokens if at is None else min(at, e.pre_tokens)
                first = r.index if first is None else first
        if r.usage is not None:
            prev = r
    if at is None or first is None or above >= at:
        return None
    return Fired(above, at, first)
