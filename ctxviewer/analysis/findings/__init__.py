"""Findings: what to cut from a session's context, and what it would have saved.

``findings(analysis)`` gathers them, each a ``Finding`` with a stable
``code``, a severity, the items and requests it is about, its tokens per
request and over the session, what carrying it cost and the step the agent
offers to change it (``analysis/agents/controls.toml``):

- ``unused-tool``, ``unused-mcp-server``, ``mcp-server-cost``,
  ``builtin-tools-cost`` (``tools``);
- ``oversized-tool-result``, ``large-item``, ``large-memory-file``,
  ``large-skill-listing`` (``content``);
- ``repeated-content``, ``stale-content``, ``cache-break``, from the insights
  (``from_insights``);
- ``compaction-soon`` (``forecast``);
- ``secret-in-context``: a key or token the provider was sent (``secrets``).

Sorted by severity, then tokens carried. No Qt; docs/findings.md describes
every field and rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxviewer.analysis.agents.controls import controls
from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.findings.carry import Carrier
from ctxviewer.analysis.findings.content import Messages, content_findings
from ctxviewer.analysis.findings.forecast import forecast_finding
from ctxviewer.analysis.findings.from_insights import cache_break_findings, redundancy_findings
from ctxviewer.analysis.findings.model import ERROR, INFO, SEVERITIES, WARN, Cost, Finding, rank
from ctxviewer.analysis.findings.secrets import secret_findings
from ctxviewer.analysis.findings.tools import called_tools, tool_findings
from ctxviewer.analysis.insights.cache_breaks import CacheBreak, cache_breaks
from ctxviewer.analysis.insights.redundancy import Finding as Redundant
from ctxviewer.analysis.insights.redundancy import redundancy
from ctxviewer.analysis.pricing import PriceTable, load_prices

__all__ = [
    "ERROR",
    "INFO",
    "SEVERITIES",
    "WARN",
    "Cost",
    "Finding",
    "at_least",
    "findings",
    "findings_json",
    "rank",
]


def findings(
    a: Analysis,
    *,
    prices: PriceTable | None = None,
    redundant: Sequence[Redundant] | None = None,
    breaks: Sequence[CacheBreak] | None = None,
) -> list[Finding]:
    """Every finding of ``a``'s session, most severe and largest first. ``redundant``
    and ``breaks``: the insights' results when they are at hand (else computed)."""
    s = a.session
    requests = s.requests
    if not requests:
        return []
    est = a.estimator
    ctl = controls(a.identity.profile.id)
    carrier = Carrier(prices or load_prices())
    window = a.window
    msgs = Messages(requests)
    used = called_tools(x.message for x in msgs.seen)
    used |= called_tools(r.response for r in requests if r.response is not None)
    out = tool_findings(requests, used, est, carrier, ctl, window)
    out += content_findings(msgs, est, carrier, ctl, window)
    out += secret_findings(msgs, requests, ctl)
    if redundant is None:
        redundant = redundancy(s, est).findings
    if breaks is None:
        breaks = cache_breaks(s, est)
    out += redundancy_findings(redundant, requests, carrier, ctl, window)
    out += cache_break_findings(breaks, requests, carrier, ctl, window)
    soon = forecast_finding(requests, a.thresholds, window, ctl)
    if soon is not None:
        out.append(soon)
    return sorted(out, key=lambda f: f.sort_key)


def at_least(found: Sequence[Finding], severity: str) -> list[Finding]:
    """The findings of ``severity`` or above."""
    return [f for f in found if rank(f.severity) >= rank(severity)]


def findings_json(found: Sequence[Finding]) -> dict[str, Any]:
    return {"findings": [f.to_json() for f in found]}
