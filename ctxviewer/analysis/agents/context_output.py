"""Read an agent's own ``/context`` output and hold ctxviewer's numbers against it.

Understands Claude Code's screen (the TUI's grid and tree, ``/context all``
included), its print-mode Markdown (``claude -p /context``), qwen-code's text
(``/context`` and ``/context detail``, its compaction thresholds included) and
Codex's ``/status`` screen (context window used and size). Each number keeps
the precision it was printed with ("1.6k" is 1,550-1,649), so a comparison
never blames rounding. A row the agent prints that ctxviewer has no
counterpart for (Claude Code's deferred tools, qwen-code's startup context)
is compared with nothing and so fails: the agent shows something ctxviewer
does not. Where the log does not record the overhead (a transcript before
Claude Code 2.1.332, qwen-code's chat file), ctxviewer shows one "not recorded"
category inferred from the first API usage: its row holds the sum of the
agent's categories it stands for, and those categories have nothing beside
them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

LABELS = {
    "system prompt": "system_prompt",
    "system tools": "builtin_tools",
    "built-in tools": "builtin_tools",
    "mcp tools": "mcp_tools",
    "memory files": "memory_files",
    "skills": "skills",
    "messages": "messages",
    "free space": "free_space",
    "free": "free_space",
    "autocompact buffer": "autocompact_buffer",
    "custom agents": "custom_agents",
    "mcp tools (deferred)": "mcp_tools_deferred",
    "system tools (deferred)": "builtin_tools_deferred",
    "startup context": "startup_context",
    "unattributed": "unattributed",
}
_NUM = r"~?(?P<num>[\d.,]+)(?P<unit>[kKmM]?)"
_CATEGORY = re.compile(
    r"^\W*(?P<label>[A-Za-z][A-Za-z -]+?(?: \(deferred\))?):?\s+\|?\s*"
    + _NUM
    + r"(?: tokens)?\s*(?:\||\()",
    re.M,
)
_ITEM = re.compile(r"^\s*[├└│]\s*(?P<name>\S.*?):?\s+" + _NUM + r" tokens", re.M)
_TABLE_ROW = re.compile(r"^\|(?P<cells>.+)\|\s*$", re.M)
_WINDOW = (
    re.compile(r"(?P<used>[\d.,]+[kKmM]?)\s*/\s*(?P<window>[\d.,]+[kKmM]?)\s+tokens"),
    re.compile(r"\*\*Tokens:\*\*\s*(?P<used>[\d.,]+[kKmM]?)\s*/\s*(?P<window>[\d.,]+[kKmM]?)"),
    re.compile(r"Context window:\s*(?P<window>[\d.,]+[kKmM]?)"),
)
# Codex /status: "Context window:      99% left (15.7K used / 475K)"
_CODEX_WINDOW = re.compile(
    r"Context window:\s*\d+% left \((?P<used>[\d.,]+[kKmM]?) used / "
    r"(?P<window>[\d.,]+[kKmM]?)\)"
)
# qwen-code 0.21+: "Effective window:   980,000  (window − 20,000 reserve)", "Auto threshold: …"
_THRESHOLD = re.compile(
    r"^\s*(?P<name>Effective window|Warn threshold|Auto threshold|"
    r"Hard threshold):\s*(?P<num>[\d.,]+)(?P<unit>[kKmM]?)\b",
    re.M,
)
# Claude Code 2.1.3xx TUI: "Auto-compact window:  1m tokens"
_AUTOCOMPACT_WINDOW = re.compile(r"Auto-compact window:\s*" + _NUM + r" tokens")
_SECTIONS = {
    "mcp tools": "mcp_tools",
    "memory files": "memory_files",
    "skills": "skills",
    "built-in tools": "builtin_tools",
    "system tools": "builtin_tools",
}


@dataclass(frozen=True)
class Number:
    """A number as an agent printed it, with the rounding its digits may hide."""

    value: float
    half_unit: float  # half the last printed digit: the rounding it may hide

    def matches(self, ours: int, rel: float = 0.05, slack: float = 0.0) -> bool:
        return abs(ours - self.value) <= max(rel * self.value, self.half_unit, slack)


@dataclass
class AgentContext:
    """What an agent's own ``/context`` output says: window, use, categories, items."""

    agent: str  # "claude-code" | "qwen-code" | "codex"
    window: Number | None = None
    used: Number | None = None
    categories: dict[str, Number] = field(default_factory=dict)
    items: dict[str, dict[str, Number]] = field(default_factory=dict)
    # "effective", "warn", "auto", "hard" (qwen-code prints them), "auto_window" (Claude Code)
    thresholds: dict[str, Number] = field(default_factory=dict)

    @property
    def command(self) -> str:
        """The agent's command that printed these numbers."""
        return "/status" if self.agent == "codex" else "/context"


def number(text: str, unit: str = "") -> Number:
    """'1.6k' -> 1600 +- 50; '976.5k' -> 976500 +- 50; '163' -> 163 +- 0.5."""
    text = text.replace(",", "")
    scale = {"k": 1e3, "m": 1e6}.get(unit.lower(), 1.0)
    decimals = len(text.split(".", 1)[1]) if "." in text else 0
    return Number(float(text) * scale, 0.5 * scale / 10**decimals)


def _num(raw: str) -> Number:
    m = re.fullmatch(r"~?([\d.,]+)([kKmM]?)", raw.strip())
    if not m:
        raise ValueError(raw)
    return number(m.group(1), m.group(2))


def _section_of(line: str) -> str | None:
    text = re.sub(r"\s*\([^)]*\)\s*$", "", line)  # "MCP tools · /mcp (loaded on-demand)"
    text = re.sub(r"[#*·/]", " ", text).strip().lower()
    text = re.sub(r"\s+mcp$|\s+memory$|\s+skills$", "", text).strip()
    return _SECTIONS.get(text)


def parse(text: str) -> AgentContext:
    """The numbers of one ``/context`` or ``/status`` output (ValueError when it holds none)."""
    if m := _CODEX_WINDOW.search(text):
        return AgentContext("codex", window=_num(m.group("window")), used=_num(m.group("used")))
    agent = (
        "qwen-code" if "Usage by category" in text or "Context window:" in text else "claude-code"
    )
    out = AgentContext(agent)
    for pattern in _WINDOW:
        if m := pattern.search(text):
            out.window = _num(m.group("window"))
            if "used" in m.groupdict() and m.group("used"):
                out.used = _num(m.group("used"))
            break
    if m := re.search(r"^\s*Used\s+" + _NUM + " tokens", text, re.M):
        out.used = number(m.group("num"), m.group("unit"))
    for m in _THRESHOLD.finditer(text):
        name = m.group("name").split()[0].lower()
        out.thresholds[name] = number(m.group("num"), m.group("unit"))
    if m := _AUTOCOMPACT_WINDOW.search(text):
        out.thresholds["auto_window"] = number(m.group("num"), m.group("unit"))
    _parse_rows(text, out)
    if not out.categories:
        raise ValueError("no /context categories found")
    return out


def _parse_rows(text: str, out: AgentContext) -> None:
    section: str | None = None
    for line in text.splitlines():
        sec = _section_of(line)
        if sec is not None and not re.search(r"\d", line):
            section = sec
            continue
        if section and (m := _ITEM.match(line)):
            out.items.setdefault(section, {})[_clean(m.group("name"))] = number(
                m.group("num"), m.group("unit")
            )
            continue
        if section and (row := _TABLE_ROW.match(line)):
            cells = [c.strip() for c in row.group("cells").split("|")]
            if len(cells) >= 2 and re.fullmatch(r"~?[\d.,]+[kKmM]?", cells[-1]):
                name = cells[1] if section == "memory_files" and len(cells) >= 3 else cells[0]
                out.items.setdefault(section, {})[_clean(name)] = _num(cells[-1])
            continue
        m = _CATEGORY.match(line)
        if m and (key := LABELS.get(m.group("label").strip().lower())):
            if key not in out.categories:
                out.categories[key] = number(m.group("num"), m.group("unit"))
            section = None if section != key else section


def _clean(name: str) -> str:
    return name.strip().strip("`").strip()


def same_path(theirs: str, ours: str) -> bool:
    """'~/.claude/CLAUDE.md' or 'CLAUDE.md' against an absolute path, '../x' against 'x'."""
    a = theirs.replace("\\", "/").lstrip("~").lstrip("./")
    b = ours.replace("\\", "/")
    return b == theirs or b.endswith(("/" + a, a)) or b.lstrip("./") == a


def compare(theirs: AgentContext, report: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows of (what, agent's number, ours, within tolerance) for a ``report --json``: window,
    use, thresholds and categories within 5% (or the printed precision); items within 5% or
    10 tokens."""
    b = report["breakdown"]
    cats = {c["name"]: c for c in (*b["categories"], *b.get("outside", ()))}
    rows: list[dict[str, Any]] = []
    if theirs.window is not None:
        rows.append(_row("window", theirs.window, report["window"]))
    if theirs.used is not None:
        rows.append(_row("used", theirs.used, b["used"]))
    rows += _threshold_rows(theirs, report)
    for key, num in theirs.categories.items():
        rows.append(_row(key, num, cats.get(key, {}).get("tokens")))
    if (unrecorded := cats.get("unrecorded_overhead")) is not None:
        rows += _unrecorded_row(theirs, cats, unrecorded["tokens"])
    for key, items in theirs.items.items():
        mine = _flat(
            [
                *cats.get(key, {}).get("items", []),  # a deferred MCP tool is listed
                *cats.get(f"{key}_deferred", {}).get("items", []),
            ]
        )  # with the others
        for name, num in items.items():
            match = mine.get(name)
            if match is None:  # qwen drops "mcp__"; paths are printed relative or with ~
                match = next(
                    (
                        v
                        for n, v in mine.items()
                        if n.endswith("__" + name) or (key == "memory_files" and same_path(name, n))
                    ),
                    None,
                )
            if match is None and num.value == 0:
                match = 0  # a row of 0 tokens (a skill not in the listing) is none of ours
            rows.append(_row(f"{key}: {name}", num, match, slack=10))
    return rows


# the agent's rows that are no part of the prompt's overhead (or lie outside its total)
_NOT_OVERHEAD = frozenset(
    {"messages", "free_space", "autocompact_buffer", "mcp_tools_deferred", "builtin_tools_deferred"}
)


def _unrecorded_row(
    theirs: AgentContext, cats: dict[str, Any], tokens: int
) -> list[dict[str, Any]]:
    """ctxviewer's "not recorded" overhead against the agent's categories it stands for:
    those of the overhead the log gave ctxviewer nothing of."""
    parts = [
        num
        for key, num in theirs.categories.items()
        if key not in _NOT_OVERHEAD and not cats.get(key, {}).get("tokens")
    ]
    if not parts:
        return []
    total = Number(sum(n.value for n in parts), sum(n.half_unit for n in parts))
    return [_row("unrecorded_overhead", total, tokens)]


def _threshold_rows(theirs: AgentContext, report: dict[str, Any]) -> list[dict[str, Any]]:
    """The compaction thresholds the agent printed (qwen-code), the window its auto-compaction
    counts against (Claude Code's TUI) and the auto threshold its buffer row implies."""
    ours = report["thresholds"]
    rows = [
        _row(f"threshold: {name}", num, ours.get(name))
        for name, num in theirs.thresholds.items()
        if name != "auto_window"
    ]
    if (num := theirs.thresholds.get("auto_window")) is not None:
        rows.append(_row("threshold: auto-compact window", num, report["window"]))
    buffer = theirs.categories.get("autocompact_buffer")
    if theirs.agent == "claude-code" and buffer is not None and theirs.window is not None:
        auto = Number(
            theirs.window.value - buffer.value, theirs.window.half_unit + buffer.half_unit
        )
        rows.append(_row("threshold: auto (window - buffer)", auto, ours.get("auto")))
    return rows


def _flat(items: list[dict[str, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in items:
        if x.get("items"):
            out.update(_flat(x["items"]))
        out[x["name"]] = x["tokens"]
    return out


def _row(what: str, theirs: Number, ours: int | None, slack: float = 0.0) -> dict[str, Any]:
    ok = ours is not None and theirs.matches(ours, slack=slack)
    return {"what": what, "agent": theirs.value, "ours": ours, "ok": ok}
