"""The three request shapes the proxy can rewrite, at the level of raw JSON items.

- Anthropic Messages: ``messages``, roles ``user`` / ``assistant`` alternating,
  the first a user message; ``tool_use`` blocks answered by ``tool_result``
  blocks (same id) in the next user message.
- OpenAI Chat Completions: ``messages``; leading ``system`` / ``developer``
  messages stay first; an assistant's ``tool_calls`` are answered by ``tool``
  messages (``tool_call_id``) right after it.
- OpenAI Responses: ``input`` items; a ``function_call`` (``call_id``) is
  answered by a later ``function_call_output`` with the same ``call_id``.

Agents put more than the conversation into the history: Claude Code 2.1 sends
its environment, agent and skill listings as ``role: "system"`` messages inside
``messages`` and its memory files as ``<system-reminder>`` blocks of the first
user message; Codex sends its tool schemas (an ``additional_tools`` item) and
instructions as leading developer items, AGENTS.md and the environment as a user
message. ``injected_part`` finds what of an item the agent injected, so that a
compaction keeps it in place.

``problems`` checks a rewritten body against those rules; the proxy never
forwards a rewrite that breaks a rule the original body kept.
"""

from __future__ import annotations

from typing import Any

REWRITABLE = ("anthropic", "openai-chat", "openai-responses")

_CALLS = ("function_call", "custom_tool_call", "local_shell_call")
_SYSTEM_TYPES = ("additional_tools",)  # Codex 0.171: the tool schemas as an input item
_TEXT_PARTS = ("text", "input_text")
_OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")


def items_key(api: str) -> str:
    return "input" if api == "openai-responses" else "messages"


def items(api: str, body: Any) -> list[dict[str, Any]] | None:
    """The body's history items, or None when it is not a rewritable shape."""
    if api not in REWRITABLE or not isinstance(body, dict):
        return None
    raw = body.get(items_key(api))
    if not isinstance(raw, list) or not all(isinstance(i, dict) for i in raw):
        return None
    return raw


def head(api: str, raw: list[dict[str, Any]]) -> int:
    """How many leading items are the system prompt (OpenAI Chat's system and developer
    messages; the Responses API's developer items and Codex's tool schemas), never
    rewritten."""
    n = 0
    if api in ("openai-chat", "openai-responses"):
        while n < len(raw) and role(api, raw[n]) == "system":
            n += 1
    return n


def role(api: str, item: dict[str, Any]) -> str:
    """``user``, ``assistant``, ``tool`` or ``system`` for any item of any shape."""
    if api == "openai-responses":
        kind = item.get("type", "message")
        if kind in _OUTPUTS:
            return "tool"
        if kind in _SYSTEM_TYPES:
            return "system"
        if kind != "message":
            return "assistant"
    r = str(item.get("role", "user"))
    return "system" if r == "developer" else r


def _injected_text(text: Any, markers: tuple[str, ...]) -> bool:
    return isinstance(text, str) and text.lstrip().startswith(markers)


def injected_part(
    api: str, item: dict[str, Any], markers: tuple[str, ...]
) -> dict[str, Any] | None:
    """What of ``item`` the agent injected rather than the conversation produced: the
    item itself (a system or developer message; a user message that is all injected
    text), a copy holding only its injected text blocks, or None. ``markers``: how the
    agent's injected text begins (its profile's ``injected``)."""
    r = role(api, item)
    if r == "system":
        return item
    if r != "user" or not markers:
        return None
    if api == "openai-responses" and item.get("type", "message") != "message":
        return None
    content = item.get("content")
    if isinstance(content, str):
        return item if _injected_text(content, markers) else None
    if not isinstance(content, list):
        return None
    kept = [
        b
        for b in content
        if isinstance(b, dict)
        and b.get("type") in _TEXT_PARTS
        and _injected_text(b.get("text"), markers)
    ]
    if not kept:
        return None
    return item if len(kept) == len(content) else {**item, "content": kept}


def with_user_text(api: str, seq: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """``seq`` followed by a user message of ``text``; on the Anthropic API, whose roles
    alternate, the text joins the last user message when no assistant message follows
    it (the injected blocks kept of a first user message, say)."""
    last = next((i for i in range(len(seq) - 1, -1, -1) if role(api, seq[i]) != "system"), None)
    if (
        api == "anthropic"
        and last is not None
        and role(api, seq[last]) == "user"
        and isinstance(seq[last].get("content"), list)
        and not results(api, seq[last])
    ):
        item = seq[last]
        joined = {**item, "content": [*item["content"], {"type": "text", "text": text}]}
        return [*seq[:last], joined, *seq[last + 1 :]]
    return [*seq, text_item(api, "user", text)]


def text_item(api: str, item_role: str, text: str) -> dict[str, Any]:
    """A plain text message of ``item_role`` in the API's shape."""
    if api == "anthropic":
        return {"role": item_role, "content": [{"type": "text", "text": text}]}
    if api == "openai-chat":
        return {"role": item_role, "content": text}
    part = "input_text" if item_role == "user" else "output_text"
    return {"type": "message", "role": item_role, "content": [{"type": part, "text": text}]}


def calls(api: str, item: dict[str, Any]) -> list[str]:
    """Tool call ids an item makes."""
    if api == "anthropic":
        content = item.get("content")
        return (
            [
                str(b.get("id"))
                for b in content
                if isinstance(b, dict) and b.get("type") in ("tool_use", "server_tool_use")
            ]
            if item.get("role") == "assistant" and isinstance(content, list)
            else []
        )
    if api == "openai-chat":
        return [str(c.get("id")) for c in item.get("tool_calls") or [] if isinstance(c, dict)]
    return [str(item.get("call_id"))] if item.get("type") in _CALLS else []


def results(api: str, item: dict[str, Any]) -> list[str]:
    """Tool call ids an item answers."""
    if api == "anthropic":
        content = item.get("content")
        return (
            [
                str(b.get("tool_use_id"))
                for b in content
                if isinstance(b, dict) and b.get("type") == "tool_result"
            ]
            if item.get("role") == "user" and isinstance(content, list)
            else []
        )
    if api == "openai-chat":
        return [str(item.get("tool_call_id"))] if item.get("role") == "tool" else []
    return [str(item.get("call_id"))] if item.get("type") in _OUTPUTS else []


def pair_safe_cut(api: str, raw: list[dict[str, Any]], start: int, cut: int) -> int:
    """Move ``cut`` (the first item kept after a replaced part starting at ``start``) back
    until no kept item answers a call made in the replaced part."""
    while cut > start:
        called = {c: i for i in range(start, cut) for c in calls(api, raw[i])}
        earliest = min(
            (called[r] for item in raw[cut:] for r in results(api, item) if r in called),
            default=None,
        )
        if earliest is None:
            return cut
        cut = earliest
    return cut


def fix_roles(api: str, seq: list[dict[str, Any]], rest_role: str | None) -> list[dict[str, Any]]:
    """Fill ``seq`` (a replacement for the start of the history) so roles alternate within
    it and into the first kept item (``rest_role``): a short note where two meet."""
    out: list[dict[str, Any]] = []
    for item in seq:
        r = role(api, item)
        if r == "system":  # the agent's own system messages stay where they are
            out.append(item)
            continue
        prev = _last_role(api, out)
        if prev is None and r != "user":
            out.append(text_item(api, "user", "[Earlier conversation compacted by ctxviewer.]"))
        elif prev == "user" and r == "user":
            out.append(text_item(api, "assistant", "Noted."))
        elif prev == "assistant" and r == "assistant" and api == "anthropic":
            out.append(text_item(api, "user", "Continue."))
        out.append(item)
    last = _last_role(api, out)
    if last == "user" and rest_role == "user":
        out.append(text_item(api, "assistant", "Noted."))
    elif last == "assistant" and rest_role in ("assistant",) and api == "anthropic":
        out.append(text_item(api, "user", "Continue."))
    elif last is None and rest_role not in (None, "user"):
        out.append(text_item(api, "user", "[Earlier conversation compacted by ctxviewer.]"))
    return out


def _last_role(api: str, seq: list[dict[str, Any]]) -> str | None:
    """The role of the last item of ``seq`` that is not a system message."""
    return next((r for item in reversed(seq) if (r := role(api, item)) != "system"), None)


def has_inner_system(api: str, body: Any) -> bool:
    """True when a system or developer message comes after the history's first other item
    (Claude Code 2.1 sends its environment so: the API takes it)."""
    raw = items(api, body)
    return raw is not None and any(role(api, i) == "system" for i in raw[head(api, raw) :])


def problems(api: str, body: Any, original: Any = None) -> list[str]:
    """What makes a body break the API's ordering rules (empty: none found). With the
    ``original`` body the agent sent, what the agent itself does is allowed: system
    messages inside the history, which the roles' alternation passes over."""
    raw = items(api, body)
    if raw is None:
        return ["no history list"]
    out: list[str] = []
    n = head(api, raw)
    inner_system = original is not None and has_inner_system(api, original)
    if not inner_system and any(role(api, i) == "system" for i in raw[n:]):
        out.append("a system message after the first non-system one")
    open_calls: dict[str, int] = {}
    answered: set[str] = set()
    prev = None
    last_call_at = -1  # the last non-system item (the Anthropic API: its calls' answers)
    for i, item in enumerate(raw[n:], n):
        r = role(api, item)
        if r == "system" and inner_system:
            continue
        for rid in results(api, item):
            if rid not in open_calls:
                out.append(f"item {i} answers tool call {rid} that no earlier item made")
            answered.add(rid)
        if api == "anthropic":
            if prev is None and r != "user":
                out.append("the first message is not a user message")
            if prev == r:
                out.append(f"items {i - 1} and {i} are both {r} messages")
            expected = [c for c, at in open_calls.items() if at == last_call_at]
            missing = [c for c in expected if c not in results(api, item)]
            if missing:
                out.append(f"item {i} does not answer tool call(s) {', '.join(missing)}")
        elif api == "openai-chat" and r == "tool" and prev not in ("assistant", "tool"):
            out.append(f"tool message {i} does not follow an assistant message")
        for cid in calls(api, item):
            open_calls[cid] = i
        prev = r
        last_call_at = i
    unanswered = [c for c, at in open_calls.items() if c not in answered and at < len(raw) - 1]
    if unanswered and api != "anthropic":
        out.append(f"tool call(s) {', '.join(unanswered)} never answered")
    return out
