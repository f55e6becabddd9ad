"""The throwaway project and home every agent runs in: memory files, a skill, an MCP server.

Each scenario gets a fresh pair (``proj/`` and ``home/``) so that its agent finds one session
in its own log folder. The files are small and distinctive (RULE-… lines) so a reader can
find each one in a transcript or a request body.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

FAKES = Path(__file__).resolve().parent / "fakes"

CLAUDE_PROJECT = """# Project rules (proj/CLAUDE.md)
- RULE-PROJ-1: Always use 4-space indentation in Python.
- RULE-PROJ-2: Never modify files under vendor/.
- RULE-PROJ-3: Prefer f-strings over % formatting.
- RULE-PROJ-4: Run `python3 hello.py` after editing hello.py.
"""
CLAUDE_USER = """# User-level memory (~/.claude/CLAUDE.md)
- RULE-USER-1: Answer concisely.
- RULE-USER-2: The user's name is Testy McTestface.
"""
QWEN_PROJECT = """# Project rules (proj/QWEN.md)
- RULE-QWEN-PROJ-1: Always use 4-space indentation in Python.
- RULE-QWEN-PROJ-2: Prefer f-strings over % formatting.
"""
QWEN_USER = "# User-level memory (~/.qwen/QWEN.md)\n- RULE-QWEN-USER-1: Answer concisely.\n"
AGENTS_MD = "# AGENTS.md\n- RULE-CODEX-1: Answer concisely.\n"
GEMINI_MD = "# GEMINI.md\n- RULE-GEM-1: Answer concisely.\n"
HELLO = '''def greet(name: str) -> str:
    """Return a friendly greeting."""
    return f"Hello, {name}!"


if __name__ == "__main__":
    print(greet("world"))
'''
SKILL = """---
name: pdf-notes
description: Extract key points from a PDF file and write them as Markdown notes. Use when the \
user asks to summarise or take notes on a PDF.
---

# PDF notes

1. Convert the PDF to text with `pdftotext input.pdf -`.
2. Pick the 5-10 most important points.
3. Write them to `notes/<pdf-name>.md` as a bullet list, with page numbers.
"""


@dataclass(frozen=True)
class Sandbox:
    """One scenario's folders: the agent's project, its HOME, and where captures go."""

    root: Path
    python: str  # the interpreter of the fakes' venv: runs the MCP server too

    @property
    def proj(self) -> Path:
        return self.root / "proj"

    @property
    def home(self) -> Path:
        return self.root / "home"

    def mcp_server(self, log: Path) -> dict[str, object]:
        """The stdio MCP server (tools get_weather and search_notes), as agents configure it."""
        return {
            "command": self.python,
            "args": [str(FAKES / "mcp_server.py")],
            "env": {"CONFORMANCE_MCP_LOG": str(log)},
        }


def build(root: Path, python: str) -> Sandbox:
    """A fresh project and home under ``root`` (what was there is removed)."""
    if root.exists():
        subprocess.run(["rm", "-rf", str(root)], check=True)
    box = Sandbox(root, python)
    files = {
        "proj/CLAUDE.md": CLAUDE_PROJECT,
        "proj/QWEN.md": QWEN_PROJECT,
        "proj/AGENTS.md": AGENTS_MD,
        "proj/GEMINI.md": GEMINI_MD,
        "proj/hello.py": HELLO,
        "proj/.claude/skills/pdf-notes/SKILL.md": SKILL,
        "proj/.qwen/skills/pdf-notes/SKILL.md": SKILL,
        "home/.claude/CLAUDE.md": CLAUDE_USER,
        "home/.qwen/QWEN.md": QWEN_USER,
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    server = box.mcp_server(root / "mcp_calls.log")
    _json(box.proj / ".mcp.json", {"mcpServers": {"notes-weather": {"type": "stdio", **server}}})
    _json(
        box.proj / ".qwen/settings.json",
        {"mcpServers": {"notes-weather": {**server, "trust": True}}, "$version": 4},
    )
    _json(
        box.home / ".qwen/settings.json",
        {
            "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": False}},
            "model": {"name": "qwen3-coder-plus"},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"enableAutoUpdate": False, "checkpointing": {"enabled": False}},
            "ui": {"hideTips": True},
            "$version": 4,
        },
    )
    _json(
        box.home / ".gemini/settings.json",
        {
            "security": {
                "auth": {"selectedType": "gemini-api-key"},
                "folderTrust": {"enabled": False},
            },
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
            "mcpServers": {"notes-weather": {**server, "trust": True}},
        },
    )
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    for cmd in (["git", "init", "-q"], [*git, "add", "-A"], [*git, "commit", "-qm", "init"]):
        subprocess.run(cmd, cwd=box.proj, check=True, stdout=subprocess.DEVNULL)
    return box


def _json(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2) + "\n", "utf-8")


if __name__ == "__main__":  # python sandbox.py DIR: build one to look at
    print(build(Path(sys.argv[1]), sys.executable).root)
