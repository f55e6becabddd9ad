"""Every agent's wording of a context overflow, its numbers, and the agent's next step."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxviewer.analysis.overflows import MIN_RETRY_OUTPUT, next_step, retry_max_tokens
from ctxviewer.ingest import load
from ctxviewer.ingest.overflow import error_event, overflow_of
from ctxviewer.model import API_ERROR, CONTEXT_OVERFLOW, Overflow

# As the APIs and agents word them (the numbers are examples).
WORDINGS = [
    # Anthropic, the prompt alone over the window
    (
        '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: '
        '213462 tokens > 200000 maximum"}}',
        Overflow(213_462, None, 200_000),
    ),
    # Anthropic, the prompt and the output cap together
    (
        "input length and `max_tokens` exceed context limit: 195000 + 8000 > 200000, decrease "
        "input length or `max_tokens` and try again",
        Overflow(195_000, 8_000, 200_000),
    ),
    (
        "input length and max_tokens exceed context limit: 195000 + 8000 > 200000",
        Overflow(195_000, 8_000, 200_000),
    ),
    # OpenAI Chat Completions (code context_length_exceeded), both sentences
    (
        "This model's maximum context length is 128000 tokens. However, your messages resulted "
        "in 130223 tokens. Please reduce the length of the messages.",
        Overflow(130_223, None, 128_000),
    ),
    (
        "This model's maximum context length is 128000 tokens. However, you requested 140000 "
        "tokens (130000 in the messages, 10000 in the completion). Please reduce the length of "
        "the messages or completion.",
        Overflow(130_000, 10_000, 128_000),
    ),
    # OpenAI Responses: no numbers
    (
        "Your input exceeds the context window of this model. Please adjust your input and try "
        "again.",
        Overflow(),
    ),
    ("{'error': {'code': 'context_length_exceeded', 'type': 'invalid_request_error'}}", Overflow()),
    # Gemini
    (
        "The input token count (1194323) exceeds the maximum number of tokens allowed (1048576).",
        Overflow(1_194_323, None, 1_048_576),
    ),
    # qwen-code's DashScope backend
    (
        "<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 129024]",
        Overflow(None, None, 129_024),
    ),
    # Codex
    (
        "Codex ran out of room in the model's context window. Start a new thread or clear "
        "earlier history before retrying.",
        Overflow(),
    ),
]


@pytest.mark.parametrize(("text", "numbers"), WORDINGS)
def test_each_wording_is_an_overflow_with_its_numbers(text: str, numbers: Overflow) -> None:
    assert overflow_of(text) == numbers
    event = error_event(text, None)
    assert event.kind == CONTEXT_OVERFLOW and event.overflow == numbers


@pytest.mark.parametrize(
    "text",
    [
        '{"type":"error","error":{"type":"rate_limit_error","message":"Slow down"}}',
        "Overloaded",
        "HTTP 500: upstream reset",
    ],
)
def test_other_errors_stay_errors(text: str) -> None:
    assert overflow_of(text) is None and error_event(text, None).kind == API_ERROR


def test_the_retry_cap() -> None:
    """Claude Code's answer to the second wording: limit - input - 1,000, at least 3,000."""
    assert retry_max_tokens(195_000, 200_000) == 4_000
    assert retry_max_tokens(196_000, 200_000) == MIN_RETRY_OUTPUT  # exactly 3,000 left
    assert retry_max_tokens(196_001, 200_000) is None  # 2,999 left: no retry
    assert retry_max_tokens(100_000, 200_000, thinking_budget=120_000) == 120_001
    assert next_step(Overflow(196_001, 8_000, 200_000)).endswith("the error stands")
    assert next_step(Overflow()) == ""


def test_a_claude_code_api_error_message(tmp_path: Path) -> None:
    """Claude Code writes the refused call as a synthetic assistant message with
    ``isApiErrorMessage``; the overflow marks the next call, with its numbers."""

    def rec(uuid: str, parent: str | None, **extra: object) -> dict[str, object]:
        return {
            "uuid": uuid,
            "parentUuid": parent,
            "sessionId": "s",
            "timestamp": "2026-01-01T00:00:00Z",
            **extra,
        }

    error = (
        'API Error: 400 {"type":"error","error":{"type":"invalid_request_error",'
        '"message":"input length and `max_tokens` exceed context limit: 195000 + 32000 '
        '> 200000, decrease input length or `max_tokens` and try again"}}'
    )
    records = [
        rec("u1", None, type="user", message={"role": "user", "content": "go on"}),
        rec(
            "e1",
            "u1",
            type="assistant",
            isApiErrorMessage=True,
            message={
                "id": "x",
                "role": "assistant",
                "model": "<synthetic>",
                "content": [{"type": "text", "text": error}],
            },
        ),
        rec(
            "a1",
            "u1",
            type="assistant",
            requestId="r1",
            message={
                "id": "m1",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "done"}],
                "usage": {
                    "input_tokens": 3,
                    "cache_read_input_tokens": 195_000,
                    "output_tokens": 40,
                },
            },
        ),
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    (req,) = load(str(path)).requests
    (event,) = req.events
    assert event.kind == CONTEXT_OVERFLOW and event.overflow == Overflow(195_000, 32_000, 200_000)
    assert next_step(event.overflow) == "the agent retries with max_tokens 4,000"
