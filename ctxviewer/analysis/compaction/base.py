"""Shared pieces of the compaction strategies: the result type, token counts, message units.

A *unit* is a run of messages that must stay together: an assistant message
that calls tools and the messages that carry those tools' results. Strategies
keep, summarize or drop whole units, so a tool call is never separated from
its result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from ctxviewer.analysis.tokens.estimators import Estimator
from ctxviewer.model import COMPACTION_SUMMARY, TEXT, TOOL_RESULT, TOOL_USE, Block, Message, Request


@dataclass(frozen=True)
class SlimmedBlock:
    """One tool output shortened by slimming: where it is and its size before/after."""

    message: int
    block: int
    before: int  # tokens
    after: int
    rule: str  # code | listing | truncate


@dataclass(frozen=True)
class CompactionResult:
    """What a strategy did to one request."""

    strategy: str
    request: Request  # the compacted request (same index, new messages)
    before: int  # API prompt size if known, else the local estimate
    after: int  # local estimate of the compacted request
    before_estimate: int  # local estimate of the original request (compare with ``after``)
    kept: tuple[int, ...]  # indices of the original messages kept verbatim (or slimmed)
    summarized: tuple[int, ...]  # replaced by the summary
    dropped: tuple[int, ...]  # removed without a summary
    summary: str = ""
    title: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    slimmed: tuple[SlimmedBlock, ...] = ()
    summary_tokens: int = 0
    summarizer: str | None = None
    usage: dict[str, Any] | None = None  # tokens / cost of an API summary
    notes: tuple[str, ...] = ()
    target: int | None = None  # the strategy's target, in API tokens (trim, shannon)

    @property
    def saved(self) -> int:
        """Estimate before minus estimate after: like with like."""
        return self.before_estimate - self.after

    @property
    def ratio(self) -> float:
        """The API count before over the local estimate before (1.0 without an API count)."""
        return self.before / self.before_estimate if self.before_estimate else 1.0

    @property
    def projected_after(self) -> int:
        """The estimate after, scaled by ``ratio``: what the API would likely count.

        Comparing the API count before with the raw estimate after would show
        the estimator's error as a saving (76,350 -> 52,770 with nothing
        compacted)."""
        return round(self.after * self.ratio)

    @property
    def missed(self) -> int | None:
        """By how many tokens the projected count after misses the target (None: met,
        or no target)."""
        if self.target is None or self.projected_after <= self.target:
            return None
        return self.projected_after - self.target

    def as_json(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "request": self.request.index,
            "before": self.before,
            "after": self.after,
            "before_estimate": self.before_estimate,
            "projected_after": self.projected_after,
            "saved_estimate": self.saved,
            "target": self.target,
            "missed": self.missed,
            "kept": list(self.kept),
            "summarized": list(self.summarized),
            "dropped": list(self.dropped),
            "summary": self.summary,
            "title": self.title,
            "summary_tokens": self.summary_tokens,
            "summarizer": self.summarizer,
            "usage": self.usage,
            "params": self.params,
            "slimmed": [
                {
                    "message": s.message,
                    "block": s.block,
                    "before": s.before,
                    "after": s.after,
                    "rule": s.rule,
                }
                for s in self.slimmed
            ],
            "messages_after": len(self.request.messages),
            "notes": list(self.notes),
        }


def overhead_tokens(req: Request, est: Estimator, inferred_overhead: int | None = None) -> int:
    """System prompt + tools (complete requests) or the inferred overhead (transcripts)."""
    if not req.complete:
        return inferred_overhead or 0
    return sum(est.block(b) for b in req.system) + sum(est.tool(t) for t in req.tools)


def estimate_request(req: Request, est: Estimator, inferred_overhead: int | None = None) -> int:
    return overhead_tokens(req, est, inferred_overhead) + est.messages(req.messages)


def before_tokens(req: Request, est: Estimator, inferred_overhead: int | None = None) -> int:
    api = req.api_prompt_tokens
    return api if api is not None else estimate_request(req, est, inferred_overhead)


def api_ratio(req: Request, est: Estimator, inferred_overhead: int | None = None) -> float:
    """The API's count of ``req`` over the local estimate (1.0 without an API count): a
    target in API tokens is ``target / ratio`` in the estimator's."""
    estimate = estimate_request(req, est, inferred_overhead)
    return before_tokens(req, est, inferred_overhead) / estimate if estimate else 1.0


def target_note(result: CompactionResult, window: int | None = None) -> str | None:
    """What a result that misses its target says, in API tokens, or None."""
    if result.missed is None or result.target is None:
        return None

    def of(n: int) -> str:
        return f" ({n / window:.1%} of the window)" if window else ""

    return (
        f"misses its target by {result.missed:,} tokens: projected "
        f"{result.projected_after:,}{of(result.projected_after)} against "
        f"{result.target:,}{of(result.target)}"
    )


def build_result(
    strategy: str,
    original: Request,
    messages: Sequence[Message],
    est: Estimator,
    inferred_overhead: int | None,
    *,
    kept: Sequence[int],
    summarized: Sequence[int] = (),
    dropped: Sequence[int] = (),
    **extra: Any,
) -> CompactionResult:
    new = replace(original, messages=tuple(messages))
    return CompactionResult(
        strategy=strategy,
        request=new,
        before=before_tokens(original, est, inferred_overhead),
        after=estimate_request(new, est, inferred_overhead),
        before_estimate=estimate_request(original, est, inferred_overhead),
        kept=tuple(kept),
        summarized=tuple(summarized),
        dropped=tuple(dropped),
        **extra,
    )


def summary_message(text: str, prefix: str = "") -> Message:
    return Message("user", (Block(TEXT, prefix + text, tag=COMPACTION_SUMMARY),))


def has_tool_results(m: Message) -> bool:
    return any(b.kind == TOOL_RESULT for b in m.blocks)


def has_tool_calls(m: Message) -> bool:
    return any(b.kind == TOOL_USE for b in m.blocks)


def is_prompt(m: Message) -> bool:
    """A user message that starts a round: user text, no tool results."""
    return m.role == "user" and not has_tool_results(m)


def units(messages: Sequence[Message]) -> list[list[int]]:
    """Message indices grouped so that each tool call stays with its results.

    A message carrying tool results joins the unit before it (the call).
    """
    out: list[list[int]] = []
    for i, m in enumerate(messages):
        if out and has_tool_results(m):
            out[-1].append(i)
        else:
            out.append([i])
    return out


def safe_start(messages: Sequence[Message], i: int) -> int:
    """Move a cut point back so that it does not fall between a tool call and its result."""
    while 0 < i < len(messages) and has_tool_results(messages[i]):
        i -= 1
    return i


def safe_end(messages: Sequence[Message], i: int) -> int:
    """Move the end of a leading part forward so its last tool calls keep their results."""
    while 0 < i < len(messages) and has_tool_results(messages[i]):
        i += 1
    return i


@dataclass(frozen=True)
class Summary:
    """A summarizer's answer."""

    text: str
    title: str = ""
    source: str = "local"  # local | anthropic
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None

    def usage(self) -> dict[str, Any] | None:
        if self.source == "local":
            return None
        return {
            "model": self.model,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
        }


class Summarizer(Protocol):
    name: str

    def summarize(
        self, messages: Sequence[Message], target_tokens: int, *, force: bool = False
    ) -> Summary: ...
