"""Strategies that replace older history with a summary: ``qwen`` and ``shannon``.

- ``qwen`` (qwen-code's ``findCompressSplitPoint``): keep the most
  recent ~30% of the history (by characters) and summarize the rest. The
  split falls only before a user message that carries no tool result, so a
  tool call is never separated from its result; when the history ends with
  a model answer that calls no tool, everything is summarized. The summary
  call has thinking off and its output capped at 20,000 tokens.
- ``shannon`` (Shannon's sliding window): keep the first 3 messages (primers) and the last
  20 (recents), summarize the middle in about 400 tokens, in the language of
  the conversation. Triggered at 75% of the budget, aiming at 37.5%.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ctxviewer.analysis.compaction.base import (
    CompactionResult,
    Summarizer,
    build_result,
    has_tool_calls,
    has_tool_results,
    is_prompt,
    safe_end,
    safe_start,
    summary_message,
)
from ctxviewer.analysis.thresholds import SUMMARY_RESERVE
from ctxviewer.analysis.tokens.estimators import Estimator
from ctxviewer.fmt import plural
from ctxviewer.model import TEXT, Block, Message, Request

QWEN_ACK = "Got it. Thanks for the additional context!"
SHANNON_PREFIX = "Previous context summary:\n"


@dataclass(frozen=True)
class QwenParams:
    """qwen-code's compression rules: what share is kept, how long the summary may be."""

    preserve_fraction: float = 0.3  # COMPRESSION_PRESERVE_THRESHOLD: recent share kept
    max_output_tokens: int = SUMMARY_RESERVE  # COMPACT_MAX_OUTPUT_TOKENS (20,000)
    summary_tokens: int = 2_000  # what the local summarizer aims at
    image_chars: int = 1_600 * 4  # a picture weighs like this many characters


@dataclass(frozen=True)
class ShannonParams:
    """The shannon strategy's rules: primers and recents kept, trigger and target."""

    primers: int = 3
    recents: int = 20
    summary_tokens: int = 400
    trigger: float = 0.75
    target: float = 0.375


def _chars(m: Message, image_chars: int) -> int:
    return sum(len(b.text) if b.fixed_tokens is None else image_chars for b in m.blocks)


def split_point(
    messages: tuple[Message, ...], preserve_fraction: float = 0.3, image_chars: int = 6_400
) -> int:
    """Index of the first message kept; messages before it are summarized."""
    counts = [_chars(m, image_chars) for m in messages]
    target = sum(counts) * (1 - preserve_fraction)
    last_split = 0
    cumulative = 0
    for i, m in enumerate(messages):
        if is_prompt(m):
            if cumulative >= target:
                return i
            last_split = i
        cumulative += counts[i]
    if messages and messages[-1].role == "assistant" and not has_tool_calls(messages[-1]):
        return len(messages)
    return last_split


def _summarize(
    summarizer: Summarizer, part: list[Message], target: int, force: bool, est: Estimator
) -> dict[str, Any]:
    s = summarizer.summarize(part, target, force=force)
    return {
        "summary": s.text,
        "title": s.title,
        "summarizer": summarizer.name,
        "usage": s.usage(),
        "summary_tokens": est.count(s.text),
    }


def qwen(
    req: Request,
    est: Estimator,
    summarizer: Summarizer,
    params: QwenParams | None = None,
    inferred_overhead: int | None = None,
    force: bool = True,
) -> CompactionResult:
    p = params or QwenParams()
    msgs = req.messages
    split = split_point(msgs, p.preserve_fraction, p.image_chars)
    if split == 0:
        return build_result(
            "qwen",
            req,
            msgs,
            est,
            inferred_overhead,
            kept=range(len(msgs)),
            params=asdict(p),
            notes=("no split point: nothing to summarize",),
        )
    target = min(p.summary_tokens, p.max_output_tokens)
    extra = _summarize(summarizer, list(msgs[:split]), target, force, est)
    new = [
        summary_message(extra["summary"]),
        Message("assistant", (Block(TEXT, QWEN_ACK),)),
        *msgs[split:],
    ]
    return build_result(
        "qwen",
        req,
        new,
        est,
        inferred_overhead,
        kept=range(split, len(msgs)),
        summarized=range(split),
        params=asdict(p),
        **extra,
    )


def shannon_bounds(messages: tuple[Message, ...], primers: int, recents: int) -> tuple[int, int]:
    """(end of primers, start of recents), moved so no tool call loses its result."""
    n = len(messages)
    end = safe_end(messages, min(primers, n))
    start = safe_start(messages, max(0, n - recents))
    while 0 < start < n and has_tool_results(messages[start]):
        start -= 1
    return end, max(start, end)


def shannon(
    req: Request,
    est: Estimator,
    summarizer: Summarizer,
    params: ShannonParams | None = None,
    inferred_overhead: int | None = None,
    force: bool = True,
    window: int | None = None,
) -> CompactionResult:
    p = params or ShannonParams()
    msgs = req.messages
    end, start = shannon_bounds(msgs, p.primers, p.recents)
    notes: list[str] = []
    if window:
        used = est.messages(msgs)
        if req.api_prompt_tokens is not None:
            used = req.api_prompt_tokens
        if used < p.trigger * window:
            notes.append(
                f"below Shannon's trigger ({p.trigger:.0%} of {window:,}): simulated anyway"
            )
    if start <= end:
        notes.append(
            f"{plural(len(msgs), 'message')}: all are primers or recents, nothing to summarize"
        )
        return build_result(
            "shannon",
            req,
            msgs,
            est,
            inferred_overhead,
            kept=range(len(msgs)),
            params=asdict(p),
            notes=tuple(notes),
        )
    extra = _summarize(summarizer, list(msgs[end:start]), p.summary_tokens, force, est)
    new = [*msgs[:end], summary_message(extra["summary"], SHANNON_PREFIX), *msgs[start:]]
    kept = [*range(end), *range(start, len(msgs))]
    return build_result(
        "shannon",
        req,
        new,
        est,
        inferred_overhead,
        kept=kept,
        summarized=range(end, start),
        params=asdict(p),
        notes=tuple(notes),
        **extra,
    )
