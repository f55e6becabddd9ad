"""OpenAI Chat Completions and Responses API bodies -> model objects.

System and developer messages at the start of a chat become the system
prompt (qwen-code sends memory files there, between ``--- Context from``
markers). Usage is normalised: ``prompt_tokens`` = uncached input +
``cache_read_input_tokens`` (the cached part).
"""

from __future__ import annotations

from typing import Any

from ctxviewer.ingest.api.anthropic import DEFAULT_IMAGE_TOKENS, Interner
from ctxviewer.ingest.base import as_int
from ctxviewer.ingest.classify import classify_tool, split_message_text, split_system_text
from ctxviewer.jsonish import js_dumps
from ctxviewer.model import (
    IMAGE,
    OTHER,
    THINKING,
    TOOL_RESULT,
    TOOL_USE,
    Block,
    Message,
    ToolDef,
    Usage,
)


def usage_from_openai(raw: Any) -> Usage | None:
    """Chat (prompt/completion) or Responses (input/output) usage -> Usage."""
    if not isinstance(raw, dict):
        return None
    if "prompt_tokens" in raw:
        prompt = as_int(raw.get("prompt_tokens"))
        details = raw.get("prompt_tokens_details") or {}
        cached = as_int(details.get("cached_tokens")) or as_int(raw.get("prompt_cache_hit_tokens"))
        out_details = raw.get("completion_tokens_details") or {}
        return Usage(
            input_tokens=max(0, prompt - cached),
            cache_read_input_tokens=cached,
            output_tokens=as_int(raw.get("completion_tokens")),
            reasoning_tokens=as_int(out_details.get("reasoning_tokens")),
        )
    if "input_tokens" in raw:
        prompt = as_int(raw.get("input_tokens"))
        cached = as_int((raw.get("input_tokens_details") or {}).get("cached_tokens"))
        out_details = raw.get("output_tokens_details") or {}
        return Usage(
            input_tokens=max(0, prompt - cached),
            cache_read_input_tokens=cached,
            output_tokens=as_int(raw.get("output_tokens")),
            reasoning_tokens=as_int(out_details.get("reasoning_tokens")),
        )
    return None


def _parts(content: Any) -> list[Block]:
    if isinstance(content, str):
        return split_message_text(content) if content else []
    out: list[Block] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in ("text", "input_text", "output_text"):
            out.extend(split_message_text(str(part.get("text", ""))))
        elif kind in ("image_url", "input_image"):
            out.append(Block(IMAGE, "", fixed_tokens=DEFAULT_IMAGE_TOKENS))
        elif kind == "refusal":
            out.extend(split_message_text(str(part.get("refusal", ""))))
        else:
            out.append(Block(OTHER, js_dumps(part), name=str(kind)))
    return out


def _chat_message(raw: dict[str, Any]) -> Message:
    role = str(raw.get("role", "user"))
    blocks: list[Block] = []
    if raw.get("reasoning_content"):
        blocks.append(Block(THINKING, str(raw["reasoning_content"])))
    if role == "tool":
        text = raw.get("content")
        text = text if isinstance(text, str) else js_dumps(text)
        blocks.append(Block(TOOL_RESULT, text, ref=raw.get("tool_call_id")))
    else:
        blocks.extend(_parts(raw.get("content")))
    for call in raw.get("tool_calls") or []:
        fn = call.get("function") or {}
        args = fn.get("arguments", "")
        blocks.append(
            Block(
                TOOL_USE,
                args if isinstance(args, str) else js_dumps(args),
                name=str(fn.get("name", "")),
                ref=call.get("id"),
            )
        )
    return Message(role, tuple(blocks))


def chat_request_parts(
    body: dict[str, Any], intern: Interner
) -> tuple[tuple[Block, ...], tuple[ToolDef, ...], tuple[Message, ...]]:
    """(system blocks, tools, messages) of a Chat Completions request body."""
    system: list[Block] = []
    messages: list[Message] = []
    raw_messages = body.get("messages")
    for raw in raw_messages if isinstance(raw_messages, list) else []:
        if not isinstance(raw, dict):
            continue
        if not messages and raw.get("role") in ("system", "developer"):
            content = raw.get("content")
            text = (
                content
                if isinstance(content, str)
                else "\n".join(
                    str(p.get("text", ""))
                    for p in (content if isinstance(content, list) else [])
                    if isinstance(p, dict)
                )
            )
            system.extend(split_system_text(text))
            continue
        messages.append(intern(_chat_message(raw)))
    return tuple(system), _tools(body.get("tools"), intern), tuple(messages)


def _tools(raw: Any, intern: Interner) -> tuple[ToolDef, ...]:
    out: list[ToolDef] = []
    for tool in raw if isinstance(raw, list) else []:
        if not isinstance(tool, dict):
            continue
        decl = fn if isinstance(fn := tool.get("function"), dict) else tool
        name = decl.get("name")
        if name:
            decl = (
                {k: v for k, v in decl.items() if k not in ("type", "strict")}
                if decl is tool
                else decl
            )
            out.append(classify_tool(str(name), decl, str(decl.get("description", ""))))
    return intern(tuple(out))


def responses_request_parts(
    body: dict[str, Any], intern: Interner
) -> tuple[tuple[Block, ...], tuple[ToolDef, ...], tuple[Message, ...]]:
    """(system blocks, tools, messages) of a Responses API request body.

    Without ``instructions``, a developer (or system) message that opens the input is
    the system prompt: Codex 0.171 sends its base instructions so. Tools come from
    ``tools`` and from ``additional_tools`` input items (Codex's namespaces of tools)."""
    instructions = body.get("instructions")
    system = tuple(split_system_text(instructions)) if isinstance(instructions, str) else ()
    tools = _tools(body.get("tools"), intern)
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    messages: list[Message] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == ADDITIONAL_TOOLS:
            tools += intern(additional_tools(item))
            continue
        if (
            not system
            and not messages
            and item.get("type", "message") == "message"
            and item.get("role") in ("developer", "system")
        ):
            system = tuple(split_system_text(content_text(item.get("content"))))
            continue
        msg = response_item_message(item)
        if msg is not None:
            messages.append(intern(msg))
    return system, tools, tuple(messages)


ADDITIONAL_TOOLS = "additional_tools"  # Codex's input item carrying the tool schemas


def content_text(content: Any) -> str:
    """A message's text: a string, or its text parts joined."""
    if isinstance(content, str):
        return content
    return "\n".join(
        str(p.get("text", ""))
        for p in (content if isinstance(content, list) else [])
        if isinstance(p, dict) and isinstance(p.get("text"), str)
    )


def additional_tools(item: dict[str, Any]) -> tuple[ToolDef, ...]:
    """The tools of an ``additional_tools`` item: Codex sends them in namespaces
    (``functions``, ``collaboration``, ``mcp__<server>``…), each declaration as the model
    reads it. A namespace's tools are named ``ns.tool`` (plain in ``functions``);
    an MCP server's ``mcp__<server>__tool``."""
    out: list[ToolDef] = []
    listed = item.get("tools")
    for tool in listed if isinstance(listed, list) else []:
        if not isinstance(tool, dict):
            continue
        inner = tool.get("tools")
        if tool.get("type") == "namespace" and isinstance(inner, list):
            ns = str(tool.get("name") or "")
            for decl in inner:
                if isinstance(decl, dict) and decl.get("name"):
                    name = str(decl["name"])
                    full = (
                        name
                        if ns in ("", "functions")
                        else f"{ns}__{name}"
                        if ns.startswith("mcp__")
                        else f"{ns}.{name}"
                    )
                    out.append(classify_tool(full, decl, str(decl.get("description", ""))))
        elif tool.get("name"):
            out.append(classify_tool(str(tool["name"]), tool, str(tool.get("description", ""))))
    return tuple(out)


def response_item_message(item: dict[str, Any]) -> Message | None:
    """One Responses API input/output item -> Message (Codex rollouts use the same items)."""
    kind = item.get("type", "message")
    if kind == "message":
        return Message(str(item.get("role", "user")), tuple(_parts(item.get("content"))))
    if kind in ("function_call", "custom_tool_call", "local_shell_call"):
        args = item.get("arguments", item.get("input", item.get("action", "")))
        return Message(
            "assistant",
            (
                Block(
                    TOOL_USE,
                    args if isinstance(args, str) else js_dumps(args),
                    name=str(item.get("name", kind)),
                    ref=item.get("call_id"),
                ),
            ),
        )
    if kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
        out = item.get("output", "")
        if isinstance(out, dict):
            out = out.get("content", js_dumps(out))
        return Message(
            "tool",
            (
                Block(
                    TOOL_RESULT,
                    out if isinstance(out, str) else js_dumps(out),
                    ref=item.get("call_id"),
                ),
            ),
        )
    if kind == "reasoning":
        summary = item.get("summary") or []
        text = "\n".join(str(s.get("text", "")) for s in summary if isinstance(s, dict))
        return Message(
            "assistant", (Block(THINKING, text or str(item.get("encrypted_content", ""))[:0]),)
        )
    return Message("assistant", (Block(OTHER, js_dumps(item), name=str(kind)),))


def chat_response_message(body: Any) -> Message | None:
    if not isinstance(body, dict):
        return None
    choices = body.get("choices") or []
    if choices and isinstance(choices[0], dict) and isinstance(choices[0].get("message"), dict):
        return _chat_message(choices[0]["message"])
    output = body.get("output")
    if isinstance(output, list):
        blocks = [
            b
            for item in output
            if isinstance(item, dict)
            for b in (response_item_message(item) or Message("assistant", ())).blocks
        ]
        return Message("assistant", tuple(blocks), body.get("id"))
    return None
