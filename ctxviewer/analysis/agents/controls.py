"""What each agent lets a user turn off or cap, and how (``controls.toml``).

The findings (``analysis.findings``) name the agent's own step for each thing
they flag, and measure a tool's result against the agent's own cap on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class OutputLimit:
    """An agent's own cap on one tool's result (``controls.toml``)."""

    tool: str  # a tool name, "mcp" (any MCP tool) or "*" (any other)
    limit: int
    unit: str  # chars | tokens
    source: str


@dataclass(frozen=True)
class Controls:
    """What an agent lets a user turn off or cap, and how (``controls.toml``)."""

    agent: str
    label: str
    texts: dict[str, str]  # what -> the step, with {name} for the thing concerned
    output_limits: tuple[OutputLimit, ...] = ()
    memory_limit_chars: int | None = None
    memory_limit_source: str = ""

    def action(self, what: str, name: str = "") -> str:
        return self.texts.get(what, "").format(name=name)

    def output_limit(self, tool: str, mcp: bool) -> OutputLimit | None:
        """The cap on ``tool``'s result: its own, any MCP tool's, or any tool's."""
        by = {x.tool: x for x in self.output_limits}
        return by.get(tool) or (by.get("mcp") if mcp else None) or by.get("*")


@cache
def _controls_table() -> dict[str, Any]:
    import tomllib

    text = Path(__file__).with_name("controls.toml").read_text("utf-8")
    return tomllib.loads(text)


def controls(pid: str) -> Controls:
    """The controls of agent ``pid`` (its profile id); the API client's for any other."""
    data = _controls_table()
    raw = data.get(pid) or data["default"]
    texts = {
        **{k: v for k, v in data["default"].items() if isinstance(v, str)},
        **{k: v for k, v in raw.items() if isinstance(v, str)},
    }
    limits = tuple(
        OutputLimit(x["tool"], int(x["limit"]), x["unit"], x["source"])
        for x in raw.get("output_limits", ())
    )
    return Controls(
        pid if pid in data else "default",
        texts.pop("label"),
        texts,
        limits,
        raw.get("memory_limit_chars"),
        texts.pop("memory_limit_source", ""),
    )
