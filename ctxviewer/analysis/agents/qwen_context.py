"""qwen-code 0.24.2's ``/context``, rebuilt from a request as sent.

``packages/cli/src/ui/commands/contextCommand.ts`` (the same from 0.24.2 to
0.24.4) counts with ``estimateContextTextTokens`` (ctxviewer's ``qwen``):

- System prompt: the core prompt alone (``getMainSessionBaseSystemPrompt``):
  the first section of the system message, before the ``---`` that opens the
  memory (the QWEN.md files) and the auto memory;
- Built-in tools: the JSON of the tool declarations, less the skill tool's
  and the MCP tools'; each row is one declaration (``tool.schema``);
- Memory files: each file between its ``--- Context from:`` markers, and the
  auto-memory section (``getAutoMemoryPrompt``) as the row "auto memory";
- Skills: the skill tool's declaration, the whole skill-listing reminder and
  the loaded skill bodies; each skill's row is its ``<skill>…</skill>`` entry;
- Startup context: the other reminders of the startup prelude (the first
  history entry: environment, deferred tools);
- Messages: the history after the prelude, as qwen-code holds it (each
  function call and response as the JSON of ``{id, name, args}`` /
  ``{id, name, response: {output}}``), at most what the API total leaves;
- Unattributed: the API total less all of these. It holds what qwen-code
  sends and attributes to nothing: the reminders it adds to the newest user
  message only (new MCP tools, the date), the memory section's marker lines
  and the text between them.

A declaration is sent converted (``convertLlmToolsToOpenAI``): a tool that
takes no arguments is sent without ``parameters``, where its declaration has
``{"type": "object", "properties": {}, "additionalProperties": false}``; and
``relaxSchemaForFunctionCalling`` drops ``additionalProperties: false`` from an
object with an optional property. Both are put back: the first always, the
second for the tools the profile names (``closed_declarations``: which
declarations say it is in the agent's bundle, not on the wire).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ctxviewer.analysis.tokens.estimators import Estimator
from ctxviewer.jsonish import js_dumps
from ctxviewer.model import (
    MCP,
    SKILL,
    SKILL_BODY,
    SKILL_LISTING,
    SYSTEM_REMINDER,
    TEXT,
    TOOL_RESULT,
    TOOL_USE,
    Block,
    Message,
    Request,
    ToolDef,
)

SECTION = "\n\n---\n\n"
AUTO_MEMORY = "# auto memory"
NO_ARGUMENTS = {"type": "object", "properties": {}, "additionalProperties": False}


@dataclass(frozen=True)
class Prelude:
    """The startup prelude's reminders, and the reminders of the newest user message that
    qwen-code keeps out of its history."""

    startup: tuple[Block, ...]  # reminders of the prelude that are not the skill listing
    transient: tuple[Block, ...]  # reminders sent with the newest user message only
    conversation: tuple[Message, ...]  # the history after the prelude, as qwen-code has it


def system_sections(req: Request) -> tuple[str, str]:
    """(the core prompt, the auto-memory section) of the system message."""
    text = "".join(b.text for b in req.system)
    core = text.split(SECTION, 1)[0]
    at = text.find(SECTION + AUTO_MEMORY)
    auto = text[at + len(SECTION) :] if at != -1 else ""
    return core, auto


def declaration(tool: ToolDef, closed: bool = False) -> str:
    """The JSON of a tool's declaration as qwen-code holds it (``tool.schema``); ``closed``:
    its schema says ``additionalProperties: false``, which the wire may not show."""
    try:
        sent = json.loads(tool.text)
    except ValueError:
        return tool.text
    if not isinstance(sent, dict):
        return tool.text
    params = sent.get("parameters")
    if (
        closed
        and isinstance(params, dict)
        and _has_optional(params)
        and "additionalProperties" not in params
    ):
        params = {**params, "additionalProperties": False}
    return js_dumps(
        {
            "name": sent.get("name", tool.name),
            "description": sent.get("description", ""),
            "parametersJsonSchema": NO_ARGUMENTS if params is None else params,
        }
    )


def _has_optional(schema: dict[str, Any]) -> bool:
    props, required = schema.get("properties"), schema.get("required")
    names = set(required) if isinstance(required, list) else set()
    return isinstance(props, dict) and any(k not in names for k in props)


def tool_rows(
    req: Request, est: Estimator, closed: frozenset[str] = frozenset()
) -> tuple[int, dict[str, int], dict[str, int], int]:
    """(all declarations, built-in rows, MCP rows, the skill tool) as qwen-code counts them."""
    decls = {t.name: declaration(t, t.name in closed) for t in req.tools}
    whole = est.count("[" + ",".join(decls.values()) + "]")
    builtin = {t.name: est.count(decls[t.name]) for t in req.tools if t.kind not in (MCP, SKILL)}
    mcp = {t.name: est.count(decls[t.name]) for t in req.tools if t.kind == MCP}
    skill = sum(est.count(decls[t.name]) for t in req.tools if t.kind == SKILL)
    return whole, builtin, mcp, skill


def _is_reminder(b: Block) -> bool:
    return b.kind == TEXT and b.text.lstrip().startswith("<system-reminder>")


def prelude(req: Request) -> Prelude:
    """The startup prelude (the leading reminders of the first user message), the newest
    user message's own reminders, and the history as qwen-code keeps it: without them, and
    with the reply to ``req`` (its ``/context`` runs once the turn is over)."""
    users = [i for i, m in enumerate(req.messages) if m.role == "user"]
    reply = (req.response,) if req.response is not None else ()
    if not users:
        return Prelude((), (), req.messages + reply)
    first, last = users[0], users[-1]
    head = req.messages[first].blocks
    lead = 0
    while lead < len(head) and _is_reminder(head[lead]):
        lead += 1
    transient: tuple[Block, ...] = ()
    if last != first:
        transient = tuple(b for b in req.messages[last].blocks if _is_reminder(b))
    startup = tuple(b for b in head[:lead] if b.tag != SKILL_LISTING)
    messages = list(req.messages)
    messages[first] = Message("user", head[lead:])
    if last != first:
        newest = req.messages[last]
        messages[last] = Message("user", tuple(b for b in newest.blocks if not _is_reminder(b)))
    return Prelude(startup, transient, tuple(m for m in (*messages, *reply) if m.blocks))


def history_tokens(messages: tuple[Message, ...], est: Estimator) -> int:
    """qwen-code's estimate of its history (``estimateConversationTokens``)."""
    names = {b.ref: b.name for m in messages for b in m.blocks if b.kind == TOOL_USE}
    total = 0
    for m in messages:
        for b in m.blocks:
            if b.tag in (SKILL_LISTING, SKILL_BODY):
                continue
            if b.kind == TOOL_USE:
                total += est.count(js_dumps({"id": b.ref, "name": b.name, "args": _args(b.text)}))
            elif b.kind == TOOL_RESULT:
                total += est.count(
                    js_dumps(
                        {
                            "id": b.ref,
                            "name": names.get(b.ref),
                            "response": {"output": _output(b.text)},
                        }
                    )
                )
            elif b.fixed_tokens is not None:
                total += b.fixed_tokens
            elif b.text:
                total += est.count(b.text)
    return total


def _args(text: str) -> Any:
    try:
        return json.loads(text) if text else {}
    except ValueError:
        return text


def _output(text: str) -> str:
    """A tool result's text: a content list sent as JSON gives its text parts."""
    if text.startswith("[{"):
        try:
            parts = json.loads(text)
        except ValueError:
            return text
        if isinstance(parts, list):
            return "".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
    return text


def reminder_name(text: str) -> str:
    """A reminder's row: its first line."""
    body = text.replace("<system-reminder>", "").strip()
    line = body.splitlines()[0] if body else ""
    return f"[{SYSTEM_REMINDER}] " + (line if len(line) <= 60 else line[:59] + "…")
