"""A context overflow's numbers, and what the agent does next (docs/estimators.md#overflows).

The API states the prompt's size and the limit in its error where it can
(``ingest.overflow``). Two cases differ in what follows:

- the prompt and the output cap together exceed the limit ("input length and
  `max_tokens` exceed context limit: 195000 + 8000 > 200000"): Claude Code retries
  with the cap cut to what the window leaves, ``limit - input - 1,000``, at least
  3,000 (and above the thinking budget); with less than 3,000 left it gives up and
  the error stands;
- the prompt alone is over the limit ("prompt is too long: 213462 tokens > 200000
  maximum"): no output cap helps; only a smaller prompt (a compaction) does.
"""

from __future__ import annotations

from typing import Any

from ctxviewer.model import Overflow

OVERFLOW_RESERVE = 1_000  # tokens kept free when the output cap is cut
MIN_RETRY_OUTPUT = 3_000  # below this, the agent does not retry


def retry_max_tokens(input_tokens: int, limit: int, thinking_budget: int = 0) -> int | None:
    """The output cap the agent retries with after its prompt and cap overflowed the
    limit, or None when less than ``MIN_RETRY_OUTPUT`` would be left."""
    available = max(0, limit - input_tokens - OVERFLOW_RESERVE)
    if available < MIN_RETRY_OUTPUT:
        return None
    return max(MIN_RETRY_OUTPUT, available, thinking_budget + 1)


def numbers(ov: Overflow) -> str:
    """'195,000 + 8,000 > 200,000', '213,462 > 200,000', 'limit 129,024' or ''."""
    if ov.input_tokens is not None and ov.limit is not None:
        cap = f" + {ov.max_tokens:,}" if ov.max_tokens is not None else ""
        return f"{ov.input_tokens:,}{cap} > {ov.limit:,}"
    if ov.limit is not None:
        return f"limit {ov.limit:,}"
    if ov.input_tokens is not None:
        return f"{ov.input_tokens:,} tokens"
    return ""


def retry_of(ov: Overflow) -> int | None:
    """The output cap of the retry, where the prompt fit and the cap did not."""
    if ov.input_tokens is None or ov.limit is None or ov.input_tokens >= ov.limit:
        return None
    return retry_max_tokens(ov.input_tokens, ov.limit)


def next_step(ov: Overflow) -> str:
    """What the agent does next, in words ('' when the error says too little)."""
    if ov.input_tokens is None or ov.limit is None:
        return ""
    if ov.input_tokens >= ov.limit:
        return "the prompt alone is over the limit: only a compaction gets it under"
    retry = retry_of(ov)
    if retry is None:
        left = max(0, ov.limit - ov.input_tokens - OVERFLOW_RESERVE)
        return (
            f"{left:,} tokens left for the output, under {MIN_RETRY_OUTPUT:,}: "
            "the agent gives up, the error stands"
        )
    return f"the agent retries with max_tokens {retry:,}"


def short_next(ov: Overflow) -> str:
    """``next_step`` in a few words, for a mark's label."""
    if ov.input_tokens is None or ov.limit is None:
        return ""
    if ov.input_tokens >= ov.limit:
        return "needs a compaction"
    retry = retry_of(ov)
    return f"retry with max_tokens {retry:,}" if retry is not None else "no room to retry"


def describe(ov: Overflow) -> str:
    """'the API counted 195,000 + 8,000 > 200,000: the agent retries with max_tokens
    4,000' ('' when the error states no number)."""
    said, then = numbers(ov), next_step(ov)
    if not said:
        return ""
    return f"the API counted {said}" + (f": {then}" if then else "")


def overflow_json(ov: Overflow | None) -> dict[str, Any]:
    """An event's overflow keys for the JSON (all null for any other event)."""
    if ov is None:
        return {
            "input_tokens": None,
            "max_tokens": None,
            "limit": None,
            "retry_max_tokens": None,
            "next": None,
        }
    return {
        "input_tokens": ov.input_tokens,
        "max_tokens": ov.max_tokens,
        "limit": ov.limit,
        "retry_max_tokens": retry_of(ov),
        "next": next_step(ov) or None,
    }
