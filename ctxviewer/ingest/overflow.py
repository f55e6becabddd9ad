"""Context-overflow errors in every agent's wording, and the numbers they state.

An API that refuses a prompt for its size says so in words of its own:

- Anthropic: ``prompt is too long: 213462 tokens > 200000 maximum``, and
  ``input length and `max_tokens` exceed context limit: 195000 + 8000 > 200000``
  (the prompt fits, the prompt and the output cap together do not);
- OpenAI: ``context_length_exceeded``, ``This model's maximum context length is
  128000 tokens. However, your messages resulted in 130223 tokens`` (or ``you
  requested 140000 tokens (130000 in the messages, 10000 in the completion)``),
  and the Responses API's ``Your input exceeds the context window of this model``;
- Gemini: ``The input token count (1194323) exceeds the maximum number of tokens
  allowed (1048576)``; qwen-code's OpenAI-compatible backends: ``Range of input
  length should be [1, 129024]``;
- Codex: ``Codex ran out of room in the model's context window``.

``error_event`` turns an error text into a ``context_overflow`` event carrying the
numbers it states (``Overflow``), or an ``api_error`` event.
"""

from __future__ import annotations

import re

from ctxviewer.model import API_ERROR, CONTEXT_OVERFLOW, Event, Overflow

_N = r"(\d[\d,]*)"
# (pattern, the groups' meanings in order)
_NUMBERS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(rf"prompt is too long:?\s*{_N}\s*tokens?\s*>\s*{_N}"), ("input", "limit")),
    (
        re.compile(
            rf"input length and `?max_tokens`? exceed context limit:?\s*{_N}\s*\+\s*{_N}"
            rf"\s*>\s*{_N}"
        ),
        ("input", "max", "limit"),
    ),
    (
        re.compile(
            rf"maximum context length is {_N} tokens.{{0,80}}?you requested {_N} tokens"
            rf"\s*\({_N} in the messages,\s*{_N} in the completion"
        ),
        ("limit", "", "input", "max"),
    ),
    (
        re.compile(rf"maximum context length is {_N} tokens.{{0,80}}?resulted in {_N} tokens"),
        ("limit", "input"),
    ),
    (
        re.compile(
            rf"input token count\s*\(?{_N}\)?\s*exceeds the maximum number of tokens "
            rf"allowed\s*\(?{_N}\)?"
        ),
        ("input", "limit"),
    ),
    (re.compile(rf"range of input length should be \[\s*\d+\s*,\s*{_N}\s*\]"), ("limit",)),
)
_HINTS = (
    "prompt is too long",
    "exceed context limit",
    "context_length_exceeded",
    "maximum context length",
    "exceeds the context window",
    "context_window_exceeded",
    "ran out of room in the model's context window",
    "context window",
    "exceeds the maximum number of tokens",
    "input token count",
    "too many tokens",
    "input is too long",
    "range of input length",
    "context_length",
)


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def overflow_of(text: str) -> Overflow | None:
    """The overflow ``text`` reports (its numbers where it states them), or None when
    it is no context-overflow error."""
    low = text.lower()
    if not any(h in low for h in _HINTS):
        return None
    for pattern, names in _NUMBERS:
        m = pattern.search(low)
        if m is not None:
            got = {n: _int(v) for n, v in zip(names, m.groups(), strict=True) if n}
            return Overflow(got.get("input"), got.get("max"), got.get("limit"))
    return Overflow()


def error_event(text: str, timestamp: str | None, detail: str | None = None) -> Event:
    """An error -> a context-overflow event with its numbers when ``text`` says so, else
    an API error. ``detail`` is what the event shows (``text`` cut short by default)."""
    found = overflow_of(text)
    kind = API_ERROR if found is None else CONTEXT_OVERFLOW
    return Event(kind, timestamp, detail=text[:300] if detail is None else detail, overflow=found)
