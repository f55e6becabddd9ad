"""Overhead a transcript does not record, read from disk when its project is here.

A transcript keeps the conversation but not the system prompt, the tools or
(for Claude Code 2.x) the memory files. When the project it names (its
``cwd``) still exists on this machine, what the agent loads from disk can be
read again now:

- the memory-file chain: the user's file, then every folder from the root
  down to the project (``CLAUDE.md``, ``CLAUDE.local.md``, ``.claude/CLAUDE.md``
  for Claude Code; ``QWEN.md``, ``AGENTS.md``, ``GEMINI.md`` for the others);
- skills folders (``~/.claude/skills``, ``<project>/.claude/skills``, and
  qwen-code's ``.qwen/skills``): each skill's name and description;
- the MCP configuration (``<project>/.mcp.json``, the settings files): the
  servers' names (their tools' schemas are not on disk).

These are items of the inferred "system prompt + tools" total, marked "read
from disk now": the files may have changed since the session, and together
they are never shown as more than that total.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ctxviewer.analysis.tokens.estimators import Estimator

NOTE = "read from disk now"
MAX_FILE_BYTES = 1 << 20  # a memory file larger than this is not an agent's memory file

MEMORY_NAMES = {
    "claude-code": ("CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md"),
    "qwen-code": ("QWEN.md", "AGENTS.md"),
    "codex": ("AGENTS.md",),
    "gemini-cli": ("GEMINI.md",),
}
USER_MEMORY = {
    "claude-code": (".claude/CLAUDE.md",),
    "qwen-code": (".qwen/QWEN.md",),
    "codex": (".codex/AGENTS.md",),
    "gemini-cli": (".gemini/GEMINI.md",),
}
SKILL_DIRS = {
    "claude-code": (".claude/skills",),
    "qwen-code": (".qwen/skills",),
}
MCP_FILES = {
    "claude-code": (".mcp.json", ".claude/settings.json", ".claude/settings.local.json"),
    "qwen-code": (".qwen/settings.json",),
    "gemini-cli": (".gemini/settings.json",),
}
_FRONT = re.compile(r"^---\n(?P<body>.*?)\n---", re.S)


@dataclass(frozen=True)
class DiskItem:
    """A piece of overhead read from the project on disk now (memory, skill, MCP)."""

    kind: str  # memory | skill | mcp server
    name: str  # a path or a name
    tokens: int
    text: str


def _read(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
            return None
        return path.read_text("utf-8", errors="replace")
    except OSError:
        return None


def _chain(project: Path) -> list[Path]:
    """The project's folders from the root down (the order agents load memory in)."""
    return list(reversed([project, *project.parents]))


def _memory(agent: str, project: Path, home: Path, est: Estimator) -> list[DiskItem]:
    out: list[DiskItem] = []
    seen: set[Path] = set()
    candidates = [home / n for n in USER_MEMORY.get(agent, ())]
    candidates += [d / n for d in _chain(project) for n in MEMORY_NAMES.get(agent, ())]
    for path in candidates:
        real = path.resolve()
        if real in seen:
            continue
        seen.add(real)
        text = _read(path)
        if text and text.strip():
            out.append(DiskItem("memory", str(path), est.count(text), text))
    return out


def _skills(agent: str, project: Path, home: Path, est: Estimator) -> list[DiskItem]:
    out: list[DiskItem] = []
    for base in (home, project):
        for folder in SKILL_DIRS.get(agent, ()):
            root = base / folder
            try:
                files = sorted(root.glob("*/SKILL.md")) if root.is_dir() else []
            except OSError:
                continue
            for f in files:
                text = _read(f) or ""
                m = _FRONT.match(text)
                meta = m.group("body") if m else ""
                name = re.search(r"^name:\s*(.+)$", meta, re.M)
                desc = re.search(r"^description:\s*(.+)$", meta, re.M)
                entry = (
                    f"- {name.group(1).strip() if name else f.parent.name}: "
                    f"{desc.group(1).strip() if desc else ''}"
                )
                out.append(DiskItem("skill", f.parent.name, est.count(entry), entry))
    return out


def _mcp(agent: str, project: Path, home: Path) -> list[DiskItem]:
    names: dict[str, str] = {}
    files = [project / f for f in MCP_FILES.get(agent, ())] + [
        home / f for f in MCP_FILES.get(agent, ()) if f.startswith(".") and "/" in f
    ]
    if agent == "claude-code":
        files.append(home / ".claude.json")
    for path in files:
        text = _read(path)
        try:
            data = json.loads(text) if text else None
        except ValueError:
            continue
        servers = data.get("mcpServers") if isinstance(data, dict) else None
        if isinstance(servers, dict):
            for name in servers:
                names.setdefault(str(name), str(path))
    return [
        DiskItem(
            "mcp server",
            name,
            0,
            f"MCP server {name!r}, configured in {where}; its tools' schemas are not on disk",
        )
        for name, where in names.items()
    ]


def disk_overhead(
    agent: str, cwd: str | None, est: Estimator, home: Path | None = None
) -> list[DiskItem]:
    """What ``agent`` loads from disk for the project at ``cwd``, read now (empty when the
    project is not on this machine)."""
    if not cwd:
        return []
    project = Path(cwd)
    try:
        if not project.is_dir():
            return []
    except OSError:
        return []
    home = home or Path(os.path.expanduser("~"))
    return [
        *_memory(agent, project, home, est),
        *_skills(agent, project, home, est),
        *_mcp(agent, project, home),
    ]


def capped(items: list[DiskItem], total: int) -> list[DiskItem]:
    """``items`` shown inside ``total``: scaled down when they would add up to more."""
    wanted = sum(i.tokens for i in items)
    if wanted <= total or not wanted:
        return items
    scale = total / wanted
    return [DiskItem(i.kind, i.name, int(i.tokens * scale), i.text) for i in items]
