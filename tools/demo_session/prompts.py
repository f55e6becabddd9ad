"""What every request of an agent carries besides the conversation: system prompts, tools, memory files."""

from __future__ import annotations

import json
from typing import Any

from .setting import HOME, MODEL, REPO
from .texts import load

IDENTITY = load("system/identity.txt")
GIT_STATUS = load("system/git-status.txt")
# The mid-conversation system message: the sub-agent types, then the skills listing.
SYSTEM_MESSAGE_TEXT = load("system/agent-types.md") + "\n\n" + load("system/skills-listing.md")

USER_MEMORY_PATH = f"{HOME}/.claude/CLAUDE.md"
PROJECT_MEMORY_PATH = f"{REPO}/CLAUDE.md"


def env_block(model_id: str, model_name: str) -> str:
    return load(
        "system/environment.md",
        repo=REPO,
        model_id=model_id,
        model_name=model_name,
        git_status=GIT_STATUS,
    )


def system_blocks(
    kind: str, model_id: str = MODEL, model_name: str = "Sonnet 4.5"
) -> list[dict[str, Any]]:
    cc = {"type": "ephemeral"}
    if kind == "main":
        return [
            {"type": "text", "text": IDENTITY, "cache_control": cc},
            {"type": "text", "text": load("system/main-agent.md"), "cache_control": cc},
            {"type": "text", "text": env_block(model_id, model_name), "cache_control": cc},
        ]
    if kind == "explore":
        return [
            {"type": "text", "text": IDENTITY, "cache_control": cc},
            {
                "type": "text",
                "text": load("system/explore-agent.md") + "\n\n" + env_block(model_id, model_name),
                "cache_control": cc,
            },
        ]
    if kind == "topic":
        return [
            {"type": "text", "text": IDENTITY},
            {"type": "text", "text": load("system/topic-detection.md")},
        ]
    if kind == "compact":
        return [{"type": "text", "text": load("system/compaction.md")}]
    raise ValueError(kind)


def main_tools() -> list[dict[str, Any]]:
    """The main agent's tools in Claude Code's order: built-ins with the Skill tool among them, then MCP tools.

    Schemas come from ``data/tool-schemas.json``, descriptions from ``data/tool-descriptions/<name>.md``.
    """
    return [
        {
            "name": t["name"],
            "description": load(f"tool-descriptions/{t['name']}.md"),
            "input_schema": t["input_schema"],
        }
        for t in json.loads(load("tool-schemas.json"))
    ]


def explore_tools() -> list[dict[str, Any]]:
    return [t for t in main_tools() if t["name"] in ("Bash", "Glob", "Grep", "Read")]


def memory_reminder() -> str:
    """The first user message's ``<system-reminder>`` with the two CLAUDE.md files."""
    return load(
        "memory/reminder.md",
        user_memory_path=USER_MEMORY_PATH,
        user_memory=load("memory/user-CLAUDE.md"),
        project_memory_path=PROJECT_MEMORY_PATH,
        project_memory=load("memory/project-CLAUDE.md"),
    )
