"""Summaries from the Anthropic API, through the ``anthropic`` SDK, streamed.

The call follows qwen-code's compression call: no ``thinking``
parameter (thinking off) and ``max_tokens`` capped at 20,000. Model, key and
base URL come from the arguments or from ``ANTHROPIC_MODEL``,
``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL``.

A circuit breaker mirrors qwen-code's: after 3 consecutive failures the
summarizer stops trying (``SummarizerStopped``) until a ``force=True`` call
succeeds, which resets the count.

The cost shown is ``input * in + output * out`` at the prices of the table
Insights uses (the genai-prices catalogue, ctxviewer's table, the user's file);
it ignores caching and batch discounts.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ctxviewer.analysis.compaction.base import Summary
from ctxviewer.analysis.compaction.summarize_local import language, title_for
from ctxviewer.analysis.pricing import load_prices
from ctxviewer.analysis.thresholds import MAX_CONSECUTIVE_FAILURES, SUMMARY_RESERVE
from ctxviewer.model import IMAGE, TEXT, THINKING, TOOL_RESULT, TOOL_USE, Message

if TYPE_CHECKING:  # imported on first use at run time
    import anthropic

DEFAULT_MODEL = "claude-sonnet-4-6"
MAX_OUTPUT_TOKENS = SUMMARY_RESERVE  # 20,000

SYSTEM_PROMPT = (
    "You compress an AI coding agent's conversation into a factual summary that lets the agent "
    "continue the work. Keep: the user's goals and explicit requests, key decisions, important "
    "discoveries, files and commands involved, errors met and how they were handled, unresolved "
    "questions, and the latest state. Drop trial-and-error detail. Use the SAME LANGUAGE as the "
    "conversation."
)


class SummarizerError(Exception):
    """The summary call failed; ``str(e)`` says why in one line."""


class SummarizerStopped(SummarizerError):
    """Too many consecutive failures: automatic summaries are off until a forced one succeeds."""


class SummaryCancelled(SummarizerError):
    """The caller's cancel flag turned true during the stream."""


def cost_usd(model: str | None, input_tokens: int, output_tokens: int) -> float | None:
    """The summary call's cost from the price table Insights uses (the shipped one with
    the user's file over it); None for an unknown model or a broken user file."""
    try:
        price = load_prices().lookup(model)
    except ValueError:
        return None
    if price is None:
        return None
    price = price.at(input_tokens)  # a long prompt's tier
    return round((input_tokens * price.input + output_tokens * price.output) / 1_000_000, 6)


def format_messages(messages: Sequence[Message], max_block_chars: int = 4_000) -> str:
    """The conversation as plain text for the summary prompt (long blocks shortened)."""
    lines: list[str] = []
    for m in messages:
        for b in m.blocks:
            text = b.text
            if len(text) > max_block_chars:
                half = max_block_chars // 2
                text = (
                    f"{text[:half]}\n[... {len(text) - max_block_chars} chars ...]\n{text[-half:]}"
                )
            if b.kind == TEXT:
                lines.append(f"[{m.role}] {text}")
            elif b.kind == THINKING:
                continue
            elif b.kind == TOOL_USE:
                lines.append(f"[{m.role} calls {b.name}] {text}")
            elif b.kind == TOOL_RESULT:
                lines.append(f"[tool result{' (error)' if b.is_error else ''}] {text}")
            elif b.kind == IMAGE:
                lines.append(f"[{m.role}] (image)")
            else:
                lines.append(f"[{m.role} {b.kind}] {text}")
    return "\n\n".join(lines)


class AnthropicSummarizer:
    """Streams a summary from the Messages API; counts consecutive failures."""

    name = "anthropic"

    def __init__(
        self,
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float = 120.0,
        max_retries: int = 0,
        max_output_tokens: int = MAX_OUTPUT_TOKENS,
        cancelled: Callable[[], bool] | None = None,
    ) -> None:
        self.model = model or os.environ.get("ANTHROPIC_MODEL") or DEFAULT_MODEL
        self.api_key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        self.base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL")
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_output_tokens = min(max_output_tokens, MAX_OUTPUT_TOKENS)
        self.cancelled = cancelled
        self.failures = 0
        self.last_error: str | None = None

    @property
    def stopped(self) -> bool:
        return self.failures >= MAX_CONSECUTIVE_FAILURES

    def _client(self) -> anthropic.Anthropic:
        import anthropic  # imported on first use: the core works without it

        if not self.api_key and not self.base_url:
            raise SummarizerError("no ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL) set")
        return anthropic.Anthropic(
            api_key=self.api_key or "none",
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=self.max_retries,
        )

    def summarize(
        self, messages: Sequence[Message], target_tokens: int = 2_000, *, force: bool = False
    ) -> Summary:
        if self.stopped and not force:
            raise SummarizerStopped(
                f"stopped after {self.failures} consecutive failures (last: {self.last_error}); "
                "a forced summary can still be requested"
            )
        try:
            summary = self._call(messages, target_tokens)
        except SummaryCancelled:
            raise
        except Exception as e:  # noqa: BLE001 - any failure counts toward the breaker
            self.failures += 1
            self.last_error = _reason(e)
            raise SummarizerError(
                f"summary failed ({self.failures}/{MAX_CONSECUTIVE_FAILURES}): {self.last_error}"
            ) from e
        self.failures = 0
        self.last_error = None
        return summary

    def _call(self, messages: Sequence[Message], target_tokens: int) -> Summary:
        lang = "Chinese" if language(messages) == "zh" else "the conversation's language"
        prompt = (
            f"{format_messages(messages)}\n\n---\nSummarize the conversation above in at "
            f"most {target_tokens} tokens, in {lang}. Start with one line 'Title: ' and a "
            "5-10 word title."
        )
        max_tokens = self.max_output_tokens  # qwen-code's COMPACT_MAX_OUTPUT_TOKENS cap
        parts: list[str] = []
        client = self._client()
        with client.messages.stream(
            model=self.model,
            max_tokens=max_tokens,
            system=SYSTEM_PROMPT,
            messages=[{"role": "user", "content": prompt}],
        ) as stream:
            for event in stream:
                if self.cancelled is not None and self.cancelled():
                    raise SummaryCancelled("cancelled")
                if event.type == "content_block_delta" and event.delta.type == "text_delta":
                    parts.append(event.delta.text)
            final = stream.get_final_message()
        text = "".join(parts).strip()
        title = ""
        if text.startswith("Title:"):
            first, _, rest = text.partition("\n")
            title, text = first[len("Title:") :].strip(), rest.strip()
        if not title:
            title = title_for([text], language(messages))
        usage = final.usage
        return Summary(
            text,
            title,
            "anthropic",
            final.model or self.model,
            usage.input_tokens,
            usage.output_tokens,
            cost_usd(final.model or self.model, usage.input_tokens, usage.output_tokens),
        )


def _reason(e: Exception) -> str:
    status = getattr(e, "status_code", None)
    msg = " ".join(str(e).split())[:200]
    name = type(e).__name__
    return f"{name} {status}: {msg}" if status else f"{name}: {msg}"
