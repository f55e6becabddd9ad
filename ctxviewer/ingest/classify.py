"""Recognise what a piece of prompt content is, from its text alone.

- Tools: ``mcp__server__tool`` (Claude Code) and ``server__tool`` (qwen-code)
  are MCP tools grouped per server; ``Skill`` / ``skill`` is the skill tool.
- Memory files: qwen-code wraps them in ``--- Context from: <path> ---`` /
  ``--- End of Context from: <path> ---`` inside the system prompt; Claude Code
  puts ``Contents of <path> (...):`` sections in a ``<system-reminder>`` of
  the first user message.
- Claude Code sends its skills listing in a message ("The following skills are
  available for use with the Skill tool:"); qwen-code in the skill tool's
  description (``<available_skills>``).
- Compaction summaries and loaded skill bodies are recognised by the text the
  agents put in front of them.
- Context an agent injects as a message of its own is known by the tag it
  opens with (``INJECTED``): Codex's ``<environment_context>``,
  ``<permissions instructions>``, ``<user_shell_command>`` ..., Gemini CLI's
  ``<session_context>``. Each is a named system reminder; the memory files
  inside a ``<session_context>`` stay memory. Codex's skill listing
  (``<skills_instructions>``, or the ``## Skills`` section of its AGENTS.md
  message) is a skill listing; an injected skill (Codex ``<skill>``, Gemini
  CLI ``<activated_skill>``) is a skill body named after the skill.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ctxviewer.jsonish import js_dumps
from ctxviewer.model import (
    BUILTIN,
    COMPACTION_SUMMARY,
    MCP,
    MEMORY,
    SKILL,
    SKILL_BODY,
    SKILL_LISTING,
    SYSTEM_REMINDER,
    TEXT,
    Block,
    ToolDef,
)

SKILL_TOOL_NAMES = frozenset({"Skill", "skill"})

QWEN_MEMORY = re.compile(
    r"--- Context from: (?P<path>.+?) ---\n(?P<body>.*?)--- End of Context from: (?P=path) ---\n?",
    re.S,
)
_CC_MEMORY_HEAD = re.compile(
    r"^Contents of (?P<path>\S[^\n]*?)(?: \((?P<what>[^()\n]*)\))?:\n", re.M
)
# A section key of Claude Code's context reminder ("# claudeMd", "# currentDate").
_CC_SECTION = re.compile(r"^# [a-z][A-Za-z]+$", re.M)
SKILLS_LISTING = "The following skills are available for use with the Skill tool:"
_SKILL_LINE = re.compile(r"^- (?P<name>[^:\n]{1,120}?): (?P<desc>.*)$", re.M)
_SKILL_XML = re.compile(
    r"<skill>\s*<name>(?P<name>.*?)</name>\s*<description>(?P<desc>.*?)</description>", re.S
)
_SUMMARY_PREFIXES = (
    "This session is being continued from a previous conversation",
    "This conversation is being continued from a previous",
    "Another language model started to solve this problem",  # Codex handoff summary
    "<state_snapshot>",  # qwen-code / Gemini CLI compression
)
_SKILL_BODY_PREFIXES = ("Base directory for this skill:", "Base directory:")
# Codex's skill listing: its "## Skills" section (render_skills_section) and the
# entries "- name: description (file: path)".
CODEX_SKILLS_HEAD = "## Skills\nThese skills are discovered at startup"
_CODEX_LISTINGS = (
    "These skills are discovered at startup",
    "<skills_instructions>",
    "### Available skills",
)
_CODEX_SKILL_LINE = re.compile(r"^- (?P<name>[^:\n]{1,120}?): (?P<desc>.*) \(file: [^\n]*\)$", re.M)
# Tags an agent opens an injected message with -> the reminder's name.
# Codex: codex-rs protocol instruction markers and the developer blocks of
# build_initial_context; Gemini CLI: getEnvironmentContext (environmentContext.ts).
INJECTED = {
    "<environment_context>": "environment_context",
    "<permissions instructions>": "permissions instructions",
    "<collaboration_mode>": "collaboration_mode",
    "<apps_instructions>": "apps_instructions",
    "<plugins_instructions>": "plugins_instructions",
    "<multi_agent_mode>": "multi_agent_mode",
    "<personality_spec>": "personality_spec",
    "<recommended_plugins>": "recommended_plugins",
    "<app-context>": "app-context",
    "<codex_internal_context": "codex_internal_context",
    "<user_shell_command>": "user_shell_command",
    "<turn_aborted>": "turn_aborted",
    "<subagent_notification>": "subagent_notification",
    "<goal_context>": "goal_context",
    "<hook_context": "hook_context",  # Codex and Gemini CLI hooks' additional context
    "<session_context>": "session_context",
}
_SKILL_LISTING_TAGS = ("<skills_instructions>",)
_SKILL_NAME = re.compile(
    r'^<(?:activated_skill|ACTIVATED_SKILL)[^>]*\bname="(?P<attr>[^"]*)"'
    r"|^<skill>\s*<name>(?P<tag>[^<]*)</name>"
)


def classify_tool(name: str, declaration: object, description: str = "") -> ToolDef:
    """A ToolDef for a declaration, with its kind and MCP server."""
    text = js_dumps(declaration)
    if name in SKILL_TOOL_NAMES:
        return ToolDef(name, SKILL, text, description=description)
    if name.startswith("mcp__"):
        server = name[5:].split("__", 1)[0] or "mcp"
        return ToolDef(name, MCP, text, server=server, description=description)
    if "__" in name.strip("_"):
        server = name.split("__", 1)[0]
        return ToolDef(name, MCP, text, server=server, description=description)
    return ToolDef(name, BUILTIN, text, description=description)


def split_system_text(text: str) -> list[Block]:
    """System prompt text -> blocks, with qwen-code memory sections tagged."""
    blocks: list[Block] = []
    pos = 0
    for m in QWEN_MEMORY.finditer(text):
        if m.start() > pos:
            blocks.append(Block(TEXT, text[pos : m.start()]))
        blocks.append(Block(TEXT, m.group(0), tag=MEMORY, name=m.group("path").strip()))
        pos = m.end()
    if pos < len(text) or not blocks:
        blocks.append(Block(TEXT, text[pos:]))
    return [b for b in blocks if b.text] or [Block(TEXT, text)]


def split_message_text(text: str) -> list[Block]:
    """A message text -> blocks tagged memory / skill listing / reminder / summary / skill body."""
    stripped = text.lstrip()
    if stripped.startswith(_SUMMARY_PREFIXES):
        return [Block(TEXT, text, tag=COMPACTION_SUMMARY)]
    if stripped.startswith(_SKILL_BODY_PREFIXES):
        return [Block(TEXT, text, tag=SKILL_BODY)]
    agents = agents_md_blocks(text)
    if agents is not None:
        return agents
    if stripped.startswith("<"):
        injected = _injected(text, stripped)
        if injected:
            return injected
    if "--- Context from: " in text:
        parts = split_system_text(text)
        if any(b.tag == MEMORY for b in parts):
            return parts
    if "<available_skills>" in text and stripped.startswith("<system-reminder>"):
        return [Block(TEXT, text, tag=SKILL_LISTING, name="available_skills")]  # qwen-code 0.24
    blocks: list[Block] = []
    if "<system-reminder>" in text and "Contents of " in text:
        blocks = _split_claude_memory(text)
    if SKILLS_LISTING in text:
        blocks = [piece for b in (blocks or [Block(TEXT, text)]) for piece in _split_listing(b)]
    if not blocks:
        blocks = [Block(TEXT, text)]
    if "<system-reminder>" in text:
        blocks = [b if b.tag else Block(TEXT, b.text, tag=SYSTEM_REMINDER) for b in blocks]
    return blocks


def _injected(text: str, stripped: str) -> list[Block]:
    """A message an agent injected, known by its opening tag (``INJECTED``); [] if not."""
    skill = _SKILL_NAME.match(stripped)
    if skill:
        return [
            Block(
                TEXT,
                text,
                tag=SKILL_BODY,
                name=(skill.group("attr") or skill.group("tag") or "").strip() or None,
            )
        ]
    if stripped.startswith(_SKILL_LISTING_TAGS):
        return [Block(TEXT, text, tag=SKILL_LISTING, name="skills_instructions")]
    name = next((n for t, n in INJECTED.items() if stripped.startswith(t)), None)
    if name is None:
        return []
    parts = split_system_text(text) if "--- Context from: " in text else [Block(TEXT, text)]
    return [b if b.tag else Block(TEXT, b.text, tag=SYSTEM_REMINDER, name=name) for b in parts]


_AGENTS_HEAD = "# AGENTS.md instructions for "


def agents_md_blocks(text: str) -> list[Block] | None:
    """Codex's AGENTS.md message (``# AGENTS.md instructions for <dir>`` or the older
    ``<user_instructions>``) as memory named after its file, less the skill listing Codex
    appends to it; None for any other text."""
    head = text.lstrip()
    if head.startswith("<user_instructions>"):
        name = "AGENTS.md"
    elif head.startswith(_AGENTS_HEAD):
        where = head.split("\n", 1)[0][len(_AGENTS_HEAD) :].strip().rstrip("/")
        name = f"{where}/AGENTS.md" if where else "AGENTS.md"
    else:
        return None
    return [
        b if b.tag else Block(TEXT, b.text, tag=MEMORY, name=name)
        for b in split_skills_section(text)
    ]


def split_skills_section(text: str) -> list[Block]:
    """Codex's AGENTS.md message with its ``## Skills`` section cut out as a skill listing."""
    at = text.find(CODEX_SKILLS_HEAD)
    if at == -1:
        return [Block(TEXT, text)]
    end = text.find("</INSTRUCTIONS>", at)
    end = len(text) if end == -1 else end
    out = [
        Block(TEXT, text[:at]),
        Block(TEXT, text[at:end], tag=SKILL_LISTING, name="## Skills"),
        Block(TEXT, text[end:]),
    ]
    return [b for b in out if b.text]


def _split_claude_memory(text: str) -> list[Block]:
    heads = list(_CC_MEMORY_HEAD.finditer(text))
    if not heads:
        return []
    blocks: list[Block] = []
    pos = 0
    for i, head in enumerate(heads):
        if head.start() < pos:
            continue
        if head.start() > pos:
            blocks.append(Block(TEXT, text[pos : head.start()]))
        limit = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        end = _section_end(text, head.end(), limit)
        blocks.append(Block(TEXT, text[head.start() : head.end()]))  # "Contents of <path>:"
        body = text[head.end() : end]
        if body.strip():
            blocks.append(Block(TEXT, body, tag=MEMORY, name=head.group("path")))
        pos = end
    if pos < len(text):
        blocks.append(Block(TEXT, text[pos:]))
    return blocks


def _section_end(text: str, start: int, limit: int) -> int:
    """End of one memory file's contents: next section key, reminder end or ``limit``."""
    end = limit
    sec = _CC_SECTION.search(text, start, limit)
    if sec:
        end = sec.start()
    close = text.find("</system-reminder>", start, end)
    if close != -1:
        end = close
    return end


_LISTING_END = re.compile(r"\n\n(?!- )|</system-reminder>")


def listing_body(text: str) -> str:
    """A Claude Code skill listing's entries, without what follows them: the reminder's end,
    or (2.1.332, where the listing sits among other text in a system message) the first
    blank line that starts no entry."""
    head = len(text) - len(text.lstrip("\n"))
    end = _LISTING_END.search(text, head)
    return text if end is None else text[: end.start()]


def _split_listing(block: Block) -> list[Block]:
    at = block.text.find(SKILLS_LISTING)
    if block.tag or at == -1:
        return [block]
    start = at + len(SKILLS_LISTING)
    end = start + len(listing_body(block.text[start:]))
    out = [Block(TEXT, block.text[:at])] if at else []
    out.append(Block(TEXT, block.text[at:end], tag=SKILL_LISTING))
    if end < len(block.text):
        out.append(Block(TEXT, block.text[end:]))
    return [b for b in out if b.text]


def skills_in(text: str) -> Iterator[tuple[str, str]]:
    """(name, description) of each skill listed in a listing or a skill tool description."""
    found = False
    for m in _SKILL_XML.finditer(text):
        found = True
        yield m.group("name").strip(), m.group("desc").strip()
    if found:
        return
    if any(h in text for h in _CODEX_LISTINGS):  # Codex: only "(file: path)" lines are skills
        for m in _CODEX_SKILL_LINE.finditer(text):
            yield m.group("name").strip(), m.group("desc").strip()
        return
    at = text.find(SKILLS_LISTING)
    if at == -1:
        return
    start = at + len(SKILLS_LISTING)
    for m in _SKILL_LINE.finditer(text, at, start + len(listing_body(text[start:]))):
        yield m.group("name").strip(), m.group("desc").strip()
