"""Claude Code's ``attachment`` records: what each one put in front of the model.

Claude Code keeps context it adds on its own (the skill listing, the agent
listing, deferred tools, hook context, memory files met along the way,
reminders) as ``attachment`` records in the transcript, and renders each into
a message of the request (``normalizeAttachmentForAPI``). This module renders
them the same way, so a transcript's requests hold what the model saw:

- ``skill_listing``: "The following skills are available for use with the
  Skill tool:" and the listing (Skills);
- ``agent_listing_delta``: "Available agent types for the Agent tool:" and
  the added agents;
- ``deferred_tools_delta``: the names of the tools whose schemas are deferred;
- ``nested_memory``: "Contents of <path>:" and the file (Memory files);
- ``hook_additional_context``, ``hook_success`` (SessionStart and
  UserPromptSubmit only), ``critical_system_reminder``, ``todo_reminder`` /
  ``task_reminder``, ``plan_file_reference``, ``queued_command``,
  ``edited_text_file``, ``compact_file_reference``, ``invoked_skills``,
  ``mcp_instructions_delta``, ``relevant_memories``, ``selected_lines_in_ide``,
  ``opened_file_in_ide``, ``diagnostics``, ``output_style``.

The texts around the recorded fields follow Claude Code 2.1.197 as it sent
them (listings) and its ``normalizeAttachmentForAPI`` (the rest). Records that
put nothing before the model (hook errors, permissions, already-read files)
are quiet. Any other type is counted as skipped, by name: its text, if it had
one, is not in the requests.

From 2.1.332 a record carries the text it put in the request (``rendered``,
and ``renderedRole``): that text is taken as it is, whatever the type
(``instructions`` holds the CLAUDE.md files, ``session_context`` the git
status, ``environment``, ``model``, ``date``, ...). A ``system`` one is sent
inside the conversation's system message, without its ``<system-reminder>``
tags.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ctxviewer.ingest.base import as_dict
from ctxviewer.ingest.classify import SKILLS_LISTING, split_message_text
from ctxviewer.model import MEMORY, SYSTEM_REMINDER, TEXT, Block, Message

SKILLS_HEAD = SKILLS_LISTING + "\n\n"
DEFERRED_HEAD = "The following deferred tools are now available via ToolSearch:\n"
AGENTS_HEAD = "Available agent types for the Agent tool:\n"
AGENTS_TAIL = (
    "\n\nWhen you launch multiple agents for independent work, send them in a single "
    "message with multiple tool uses so they run concurrently."
)

# Attachment types that add nothing to the request.
QUIET = frozenset(
    {
        "already_read_file",
        "command_permissions",
        "edited_image_file",
        "hook_cancelled",
        "hook_error_during_execution",
        "hook_non_blocking_error",
        "hook_system_message",
        "structured_output",
        "hook_permission_decision",
        "autocheckpointing",
        "background_task_status",
        "hook_blocking_error",
        "hook_stopped_continuation",
        "permission_mode",
        "mode",
        "credential_org",
        "remote_session_change",
        "auto_mode",
        "prompt_snapshot",
        "deferred_tools_record",
    }
)
_PROMPT_HOOKS = ("SessionStart", "UserPromptSubmit")


def _s(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _lines(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _reminder(text: str) -> tuple[Block, ...]:
    return (Block(TEXT, f"<system-reminder>\n{text}\n</system-reminder>", tag=SYSTEM_REMINDER),)


def _skill_listing(a: dict[str, Any]) -> tuple[Block, ...]:
    content = _s(a.get("content"))
    return tuple(split_message_text(SKILLS_HEAD + content)) if content else ()


def _agent_listing(a: dict[str, Any]) -> tuple[Block, ...]:
    lines = _lines(a.get("addedLines"))
    return (
        (Block(TEXT, AGENTS_HEAD + "\n".join(lines) + AGENTS_TAIL, tag=SYSTEM_REMINDER),)
        if lines
        else ()
    )


def _deferred_tools(a: dict[str, Any]) -> tuple[Block, ...]:
    lines = _lines(a.get("addedLines")) or _lines(a.get("addedNames"))
    if not lines:
        return ()
    return _reminder(DEFERRED_HEAD + "\n".join(lines))


def _nested_memory(a: dict[str, Any]) -> tuple[Block, ...]:
    content = as_dict(a.get("content"))
    path, body = _s(content.get("path")), _s(content.get("content"))
    if not body:
        return ()
    return (
        Block(TEXT, f"<system-reminder>\nContents of {path}:\n\n", tag=SYSTEM_REMINDER),
        Block(TEXT, body, tag=MEMORY, name=path or "memory"),
        Block(TEXT, "\n</system-reminder>", tag=SYSTEM_REMINDER),
    )


def _hook_context(a: dict[str, Any]) -> tuple[Block, ...]:
    content = _lines(a.get("content")) or ([a["content"]] if _s(a.get("content")) else [])
    if not content:
        return ()
    return _reminder(
        f"{_s(a.get('hookName')) or 'hook'} hook additional context: " + "\n".join(content)
    )


def _hook_success(a: dict[str, Any]) -> tuple[Block, ...]:
    if a.get("hookEvent") not in _PROMPT_HOOKS or not _s(a.get("content")):
        return ()
    return _reminder(f"{_s(a.get('hookName'))} hook success: {a['content']}")


def _todo(a: dict[str, Any]) -> tuple[Block, ...]:
    items = c if isinstance(c := a.get("content"), list) else []
    listed = "\n".join(
        f"{i + 1}. [{_s(x.get('status'))}] {_s(x.get('content') or x.get('subject'))}"
        for i, x in enumerate(items)
        if isinstance(x, dict)
    )
    text = (
        "The task tools haven't been used recently. If you're working on tasks that would "
        "benefit from tracking progress, consider using them. This is just a gentle "
        "reminder - ignore if not applicable."
    )
    if listed:
        text += f"\n\nHere are the existing contents of your list:\n\n[{listed}]"
    return _reminder(text)


def _text_field(field: str, template: str = "{}") -> Callable[[dict[str, Any]], tuple[Block, ...]]:
    def render(a: dict[str, Any]) -> tuple[Block, ...]:
        value = a.get(field)
        text = (
            value
            if isinstance(value, str)
            else (json.dumps(value, ensure_ascii=False) if value else "")
        )
        return _reminder(template.format(text)) if text else ()

    return render


def _fields(a: dict[str, Any]) -> tuple[Block, ...]:
    """Every string a record holds (types whose template is not known word for word)."""
    parts: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, str):
            parts.append(v)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for k, x in v.items():
                if k not in ("type", "uuid", "toolUseID", "timestamp"):
                    walk(x)

    walk({k: v for k, v in a.items() if k != "type"})
    text = "\n".join(p for p in parts if p)
    return _reminder(text) if text else ()


RENDER: dict[str, Callable[[dict[str, Any]], tuple[Block, ...]]] = {
    "skill_listing": _skill_listing,
    "agent_listing_delta": _agent_listing,
    "deferred_tools_delta": _deferred_tools,
    "nested_memory": _nested_memory,
    "hook_additional_context": _hook_context,
    "hook_success": _hook_success,
    "todo_reminder": _todo,
    "task_reminder": _todo,
    "critical_system_reminder": _text_field("content"),
    "queued_command": _text_field(
        "prompt",
        "The user sent the following message:\n{}\n\n"
        "Please address this message and continue with "
        "your tasks.",
    ),
    "edited_text_file": _fields,
    "compact_file_reference": _fields,
    "plan_file_reference": _fields,
    "plan_mode": _fields,
    "plan_mode_reentry": _fields,
    "plan_mode_exit": _fields,
    "invoked_skills": _fields,
    "mcp_instructions_delta": _fields,
    "relevant_memories": _fields,
    "selected_lines_in_ide": _fields,
    "opened_file_in_ide": _fields,
    "diagnostics": _fields,
    "output_style": _fields,
    "todo": _fields,
    "date_change": _fields,
}


_REMINDER_OPEN, _REMINDER_CLOSE = "<system-reminder>\n", "\n</system-reminder>"


def _rendered(record: dict[str, Any]) -> Message | None:
    """The message as Claude Code rendered it into the request (2.1.332), or None when the
    record does not say (older versions: the type's template renders it)."""
    raw = record.get("rendered")
    if not isinstance(raw, list):
        return None
    texts = [t for x in raw if isinstance(x, dict) and isinstance(t := x.get("content"), str) and t]
    role = _s(record.get("renderedRole")) or "user"
    if role == "system":  # joined into the system message, the tags left out
        texts = [t.removeprefix(_REMINDER_OPEN).removesuffix(_REMINDER_CLOSE) for t in texts]
    blocks = tuple(b for t in texts for b in split_message_text(t))
    if not blocks:
        return None
    uuid = record.get("uuid")
    return Message(
        role, blocks, uuid if isinstance(uuid, str) else None, _s(record.get("timestamp")) or None
    )


def attachment_message(record: dict[str, Any]) -> tuple[Message | None, str | None]:
    """(the message an attachment record put in the request, or None; why it was left out
    when its type is unknown, else None)."""
    a = as_dict(record.get("attachment"))
    kind = a.get("type")
    if not isinstance(kind, str):
        return None, "attachment without a type"
    rendered = _rendered(record)
    if rendered is not None:
        return rendered, None
    render = RENDER.get(kind)
    if render is None:
        return None, None if kind in QUIET else f"attachment {kind!r}: not counted"
    blocks = render(a)
    if not blocks:
        return None, None
    role = "system" if kind in ("skill_listing", "agent_listing_delta") else "user"
    uuid = record.get("uuid")
    return Message(
        role, blocks, uuid if isinstance(uuid, str) else None, _s(record.get("timestamp")) or None
    ), None
