"""Normalise the usage an upstream reported into Anthropic-style counts.

Recordings carry one usage shape whatever the API, so readers and the GUI can
compare calls: ``input_tokens`` is the uncached prompt part,
``cache_read_input_tokens`` the cached part (OpenAI's ``prompt_tokens`` is
their sum), ``cache_creation_input_tokens`` what was written to the cache.
"""

from __future__ import annotations

from typing import Any

USAGE_KEYS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _cached(usage: dict[str, Any], details_key: str) -> int:
    details = usage.get(details_key)
    return _int(details.get("cached_tokens")) if isinstance(details, dict) else 0


def normalise_usage(api: str, body: Any) -> dict[str, int] | None:
    """Anthropic-style usage from a response body, or None when it reports none.

    ``count_tokens`` answers are not usage (nothing was generated or billed),
    so they give None; their count stays in the recorded body.
    """
    if api in ("anthropic-count-tokens", "gemini-count-tokens") or not isinstance(body, dict):
        return None
    gemini = body.get("usageMetadata")
    if isinstance(gemini, dict) and gemini:  # Gemini: the prompt count includes the cached
        cached = min(
            _int(gemini.get("cachedContentTokenCount")), _int(gemini.get("promptTokenCount"))
        )
        return _counts(
            _int(gemini.get("promptTokenCount")) - cached,
            0,
            cached,
            _int(gemini.get("candidatesTokenCount")) + _int(gemini.get("thoughtsTokenCount")),
        )
    usage = body.get("usage")
    if not isinstance(usage, dict) or not usage:
        return None
    if "prompt_tokens" in usage:  # OpenAI Chat Completions
        cached = _cached(usage, "prompt_tokens_details")
        return _counts(
            _int(usage["prompt_tokens"]) - cached, 0, cached, _int(usage.get("completion_tokens"))
        )
    if "input_tokens_details" in usage or api == "openai-responses":  # OpenAI Responses
        cached = _cached(usage, "input_tokens_details")
        return _counts(
            _int(usage.get("input_tokens")) - cached, 0, cached, _int(usage.get("output_tokens"))
        )
    if "input_tokens" in usage or "output_tokens" in usage:  # Anthropic
        return {key: _int(usage.get(key)) for key in USAGE_KEYS}
    return None


def _counts(uncached: int, created: int, cached: int, output: int) -> dict[str, int]:
    return dict(zip(USAGE_KEYS, (max(uncached, 0), created, cached, output), strict=True))
