"""The context window an agent works with, and where that number came from.

Sources, in order: ``user`` (an override), ``log`` (the agent wrote its window
down, or a prompt proves a larger one), ``agent profile`` (the agent's own rule
for this model and mode), ``model table`` (ctxviewer's table of model windows).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxviewer.analysis.agents.identify import Identity
from ctxviewer.analysis.windows import context_window
from ctxviewer.model import Request

ONE_M = 1_000_000


@dataclass(frozen=True)
class Window:
    """The context window used for a session, and where that number came from."""

    tokens: int
    source: str  # user | log | agent profile | model table
    detail: str  # one line for people: why this number
    raw: int | None = None  # the model's full window where the agent uses a share of it
    wire: int | None = None  # what the requests asked for (the context-1m beta), if different


def _beta(requests: Sequence[Request]) -> bool:
    return any(r.window_hint == ONE_M and r.api == "anthropic" for r in requests)


def agent_window(ident: Identity, requests: Sequence[Request], model: str | None,
                 override: int | None = None) -> Window:
    """The window of ``model``'s requests in a session of agent ``ident``."""
    era = ident.era
    own = era.window_for(model)
    base = own or context_window(model)
    base_source = "agent profile" if own else "model table"
    base_detail = era.window_source if own else f"model table for {model or 'an unknown model'}"
    beta = _beta(requests)
    wire = ONE_M if beta else None
    if override:
        return Window(int(override), "user", "set by the user", wire=wire)
    recorded = [r.window_hint for r in requests if r.window_hint and r.api != "anthropic"]
    if recorded:
        raw = own if era.effective_pct else None
        return Window(max(recorded), "log", "the window the agent recorded in the log", raw)
    peak = max((r.api_prompt_tokens or 0 for r in requests), default=0)
    ext = era.extended_window
    if ext and ext > base:
        name = (model or "").lower()
        when = era.extended_when
        if "model-suffix" in when and "[1m]" in name:
            return Window(ext, "agent profile", f"{ident.profile.label}: a [1m] model", wire=wire)
        if "interactive-beta" in when and beta and ident.interactive:
            return Window(ext, "agent profile", f"{ident.profile.label}, interactive session "
                          "sending the context-1m beta", wire=wire)
        if "beta" in when and beta:
            return Window(ext, "log", "the requests carry the context-1m beta header", wire=wire)
        if "observed-over" in when and peak > base:
            return Window(ext, "log", f"a prompt of {peak:,} tokens is larger than {base:,}",
                          wire=wire)
        if beta:
            mode = "print mode" if ident.interactive is False else "this mode"
            return Window(base, base_source, f"{base_detail}; the context-1m beta is sent but "
                          f"{ident.profile.label} in {mode} works with {base:,}", wire=wire)
    if era.effective_pct and own:
        share = round(own * era.effective_pct)
        return Window(share, "agent profile", f"{ident.profile.label} uses "
                      f"{era.effective_pct:.0%} of {own:,}", raw=own)
    return Window(base, base_source, base_detail, raw=own if era.effective_pct else None)
