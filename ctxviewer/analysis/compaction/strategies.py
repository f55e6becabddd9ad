"""The strategy registry and ``simulate_compaction``, the one entry point.

``slim+qwen`` and ``slim+shannon`` slim tool outputs first, then summarize;
their ``slimmed`` list refers to the original message indices.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

from ctxviewer.analysis.compaction.base import (
    CompactionResult,
    Summarizer,
    before_tokens,
    target_note,
)
from ctxviewer.analysis.compaction.slim import SlimParams, slim, slim_messages
from ctxviewer.analysis.compaction.summarize_local import LocalSummarizer
from ctxviewer.analysis.compaction.summary import QwenParams, ShannonParams, qwen, shannon
from ctxviewer.analysis.compaction.trim import TrimParams, trim
from ctxviewer.analysis.thresholds import Thresholds
from ctxviewer.analysis.tokens.estimators import Estimator
from ctxviewer.model import Request

STRATEGIES = ("qwen", "shannon", "trim", "slim", "slim+qwen", "slim+shannon")
LABELS = {
    "qwen": "qwen-code: summarize older history, keep the recent 30%",
    "shannon": "Shannon: 3 primers + summary + 20 recents",
    "trim": "trim by priority under a budget",
    "slim": "slim long tool outputs",
    "slim+qwen": "slim tool outputs, then qwen-code",
    "slim+shannon": "slim tool outputs, then Shannon",
}


@dataclass(frozen=True)
class Params:
    """Editable parameters of every strategy (defaults from their upstreams: docs/compaction.md)."""

    qwen: QwenParams = QwenParams()
    shannon: ShannonParams = ShannonParams()
    trim: TrimParams = TrimParams()
    slim: SlimParams = SlimParams()


def default_params() -> Params:
    return Params()


def _summary_strategy(name: str) -> Callable[..., CompactionResult]:
    def run(
        req: Request,
        est: Estimator,
        t: Thresholds,
        s: Summarizer,
        p: Params,
        inferred: int | None,
        force: bool,
    ) -> CompactionResult:
        if name == "qwen":
            return qwen(req, est, s, p.qwen, inferred, force)
        return shannon(req, est, s, p.shannon, inferred, force, t.window)

    return run


def _combined(
    req: Request,
    est: Estimator,
    t: Thresholds,
    s: Summarizer,
    p: Params,
    inferred: int | None,
    force: bool,
    then: str,
) -> CompactionResult:
    messages, slimmed = slim_messages(req.messages, est, p.slim)
    inner = _summary_strategy(then)(
        replace(req, messages=tuple(messages)), est, t, s, p, inferred, force
    )
    params: dict[str, Any] = {"slim": asdict(p.slim), then: inner.params}
    return replace(
        inner,
        strategy=f"slim+{then}",
        before=before_tokens(req, est, inferred),
        before_estimate=est.messages(req.messages) + inner.before_estimate - est.messages(messages),
        params=params,
        slimmed=tuple(slimmed),
    )


def simulate_compaction(
    req: Request,
    strategy: str,
    est: Estimator,
    thresholds: Thresholds,
    *,
    summarizer: Summarizer | None = None,
    params: Params | None = None,
    inferred_overhead: int | None = None,
    force: bool = True,
) -> CompactionResult:
    """Apply ``strategy`` to ``req``; pure except for the summarizer (local by default)."""
    p = params or Params()
    s = summarizer or LocalSummarizer()
    if strategy in ("qwen", "shannon"):
        result = _summary_strategy(strategy)(req, est, thresholds, s, p, inferred_overhead, force)
    elif strategy == "trim":
        result = trim(req, est, thresholds, p.trim, inferred_overhead)
    elif strategy == "slim":
        result = slim(req, est, p.slim, inferred_overhead)
    elif strategy in ("slim+qwen", "slim+shannon"):
        result = _combined(
            req, est, thresholds, s, p, inferred_overhead, force, strategy.split("+", 1)[1]
        )
    else:
        raise KeyError(f"unknown strategy {strategy!r} (known: {', '.join(STRATEGIES)})")
    if strategy.endswith("shannon") and thresholds.window:
        result = replace(result, target=round(p.shannon.target * thresholds.window))
    # a target is judged on the API count the result projects, never the raw estimate
    missed = target_note(result, thresholds.window)
    return replace(result, notes=(*result.notes, missed)) if missed else result
