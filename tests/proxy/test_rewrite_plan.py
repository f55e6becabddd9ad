"""Plans on raw bodies of the three APIs: every strategy's rewrite obeys the APIs' rules
(checked by the strict fake's independent rules), and a rule keeps applying."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from strict_upstream import anthropic_violations, chat_violations, responses_violations

from ctxviewer.analysis.thresholds import thresholds
from ctxviewer.analysis.tokens.estimators import get_estimator
from ctxviewer.proxy.rewrite import conversation_key
from ctxviewer.proxy.rewrite_plan import CannotRewrite, apply_rule, plan

OUT = "x" * 5_000
RULES = {
    "anthropic": anthropic_violations,
    "openai-chat": chat_violations,
    "openai-responses": responses_violations,
}


def history(api: str, turns: int) -> dict[str, Any]:
    """A body with ``turns`` rounds: prompt, text + two parallel tool calls, results, answer."""
    items: list[dict[str, Any]] = []
    for t in range(turns):
        ids = [f"c{t}_{k}" for k in range(2)]
        prompt = f"Task {t}: please fix bug {t} in module {t}."
        if api == "anthropic":
            items += [
                {"role": "user", "content": prompt},
                {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "Reading."}]
                    + [
                        {"type": "tool_use", "id": i, "name": "read", "input": {"p": i}}
                        for i in ids
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": i, "content": OUT} for i in ids
                    ],
                },
                {"role": "assistant", "content": [{"type": "text", "text": f"Fixed {t}."}]},
            ]
        elif api == "openai-chat":
            items += [
                {"role": "user", "content": prompt},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": i,
                            "type": "function",
                            "function": {"name": "read", "arguments": "{}"},
                        }
                        for i in ids
                    ],
                },
                *({"role": "tool", "tool_call_id": i, "content": OUT} for i in ids),
                {"role": "assistant", "content": f"Fixed {t}."},
            ]
        else:
            items += [
                {"role": "user", "content": prompt},
                *(
                    {"type": "function_call", "call_id": i, "name": "read", "arguments": "{}"}
                    for i in ids
                ),
                *({"type": "function_call_output", "call_id": i, "output": OUT} for i in ids),
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": f"Fixed {t}."}],
                },
            ]
    last = {"role": "user", "content": "Now the last task."}
    tools = [
        {"name": "read", "input_schema": {"type": "object"}},
        {"name": "mcp__notes__search", "input_schema": {"type": "object"}},
    ]
    if api == "anthropic":
        return {"model": "m", "system": "sys", "tools": tools, "messages": [*items, last]}
    if api == "openai-chat":
        return {
            "model": "m",
            "messages": [{"role": "system", "content": "sys"}, *items, last],
            "tools": [{"type": "function", "function": t} for t in tools],
        }
    return {
        "model": "m",
        "instructions": "sys",
        "input": [*items, last],
        "tools": [{"type": "function", **t} for t in tools],
    }


@pytest.mark.parametrize("api", list(RULES))
@pytest.mark.parametrize("strategy", ["qwen", "shannon", "trim", "slim"])
def test_every_strategy_obeys_the_api(api: str, strategy: str) -> None:
    body = history(api, 8)
    assert RULES[api](body) == []
    p = plan(api, body, "c", strategy, get_estimator("qwen"), thresholds(20_000, "shannon"))
    assert RULES[api](p.body) == [], orjson.dumps(p.body)[:2000]
    assert p.bytes_after < p.bytes_before and p.tokens_after < p.tokens_before
    # the next request (the agent appends its answer and a new prompt) gets the same rewrite
    key = "input" if api == "openai-responses" else "messages"
    answer = {"role": "assistant", "content": "Done."}
    if api == "openai-responses":
        answer = {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Done."}],
        }
    nxt = {**body, key: [*body[key], answer, {"role": "user", "content": "And another."}]}
    again = apply_rule(p.rule, nxt)
    assert again is not None and RULES[api](again) == []
    n = len(p.body[key])
    assert again[key][:n] == p.body[key]
    assert again[key][n:] == nxt[key][len(body[key]) :]


@pytest.mark.parametrize("api", list(RULES))
def test_prune_drops_chosen_tools(api: str) -> None:
    body = history(api, 2)
    p = plan(
        api,
        body,
        "c",
        "prune",
        get_estimator("qwen"),
        thresholds(20_000, "shannon"),
        drop_tools=["mcp__notes__search"],
    )
    names = orjson.dumps(p.body["tools"])
    assert b"mcp__notes__search" not in names and b'"read"' in names
    assert RULES[api](p.body) == []


def test_a_changed_history_is_not_rewritten() -> None:
    body = history("anthropic", 6)
    p = plan("anthropic", body, "c", "qwen", get_estimator("qwen"), thresholds(20_000, "qwen"))
    edited = {**body, "messages": [{"role": "user", "content": "other"}, *body["messages"][1:]]}
    assert apply_rule(p.rule, edited) is None


def test_too_short_to_compact() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    with pytest.raises(CannotRewrite):
        plan("anthropic", body, "c", "qwen", get_estimator("qwen"), thresholds(20_000, "qwen"))


def test_conversation_key() -> None:
    a, b = history("anthropic", 2), history("anthropic", 3)
    assert conversation_key("anthropic", {}, a) == conversation_key("anthropic", {}, b)
    assert conversation_key("anthropic", {"x-claude-code-session-id": "s1"}, a) != conversation_key(
        "anthropic", {"x-claude-code-session-id": "s2"}, a
    )
    assert conversation_key("anthropic", {}, {"messages": []}) is None
    assert conversation_key("openai-other", {}, a) is None
