"""The context window an agent works with, and where that number came from.

Sources, in order: ``user`` (an override), ``log`` (the agent wrote its window
down, or a prompt proves a larger one), ``agent profile`` (the agent's own rule
for this model and mode), ``model table`` (ctxviewer's table of model windows).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxviewer.analysis.agents.identify import Identity
from ctxviewer.analysis.agents.table import Era
from ctxviewer.analysis.windows import DEFAULT_WINDOW, context_window, window_source
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


def _profile_detail(ident: Identity, era: Era, model: str | None) -> tuple[int, str] | None:
    """(window, why) by the agent's own rule for ``model``; None when its rules name none."""
    match = era.window_match(model)
    if match is None:
        return None
    prefix, window = match
    if prefix or not model:
        return window, era.window_source
    why = era.fallback_source or "the window its rules give any model they do not list"
    return window, (f"{model} is not in {ident.label}'s model list: {window:,}, {why}")


def _table_detail(model: str | None) -> str:
    """Why the model table gives ``model`` its window, the default said as such."""
    if window_source(model) != "default":
        return f"model table for {model}"
    name = model or "no model named"
    return (
        f"{name} is in no table ctxviewer knows: assumed {DEFAULT_WINDOW:,}, "
        "ctxviewer's default (the Window box or --window sets it)"
    )


def uncut(recorded: int, pct: float) -> int:
    """The model's full window from the share of it an agent records (Codex writes
    ``model_context_window`` as 95% of it: 258,400 for 272,000, 475,000 for 500,000)."""
    return round(recorded / pct)


def agent_window(
    ident: Identity, requests: Sequence[Request], model: str | None, override: int | None = None
) -> Window:
    """The window of ``model``'s requests in a session of agent ``ident``."""
    era = ident.era
    mine = _profile_detail(ident, era, model)
    own = mine[0] if mine else None
    base = own or context_window(model)
    base_source = "agent profile" if own else "model table"
    base_detail = mine[1] if mine else _table_detail(model)
    beta = _beta(requests)
    wire = ONE_M if beta else None
    if override:
        return Window(int(override), "user", "set by the user", wire=wire)
    recorded = [r.window_hint for r in requests if r.window_hint and r.api != "anthropic"]
    if recorded:
        logged = max(recorded)
        if not era.effective_pct:
            return Window(logged, "log", "the window the agent recorded in the log")
        # the log holds the agent's share of the window; its rules need the whole of it
        raw = uncut(logged, era.effective_pct)
        return Window(
            logged,
            "log",
            f"the window the agent recorded in the log, "
            f"{era.effective_pct:.0%} of the model's {raw:,}",
            raw,
        )
    peak = max((r.api_prompt_tokens or 0 for r in requests), default=0)
    ext = era.extended_window
    if ext and ext > base:
        name = (model or "").lower()
        when = era.extended_when
        if "model-suffix" in when and "[1m]" in name:
            return Window(ext, "agent profile", f"{ident.profile.label}: a [1m] model", wire=wire)
        if "interactive-beta" in when and beta and ident.interactive:
            return Window(
                ext,
                "agent profile",
                f"{ident.profile.label}, interactive session sending the context-1m beta",
                wire=wire,
            )
        if "beta" in when and beta:
            return Window(ext, "log", "the requests carry the context-1m beta header", wire=wire)
        if "observed-over" in when and peak > base:
            return Window(
                ext, "log", f"a prompt of {peak:,} tokens is larger than {base:,}", wire=wire
            )
        if beta:
            mode = "print mode" if ident.interactive is False else "this mode"
            return Window(
                base,
                base_source,
                f"{base_detail}; the context-1m beta is sent but "
                f"{ident.profile.label} in {mode} works with {base:,}",
                wire=wire,
            )
    if era.effective_pct and own:
        share = round(own * era.effective_pct)
        return Window(
            share,
            "agent profile",
            f"{ident.profile.label} uses {era.effective_pct:.0%} of {own:,} ({base_detail})",
            raw=own,
        )
    return Window(base, base_source, base_detail, raw=own if era.effective_pct else None)
