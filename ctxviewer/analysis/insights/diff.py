"""What changed between two requests: blocks added, removed and changed.

System blocks and message blocks are aligned as sequences (``difflib``),
so an edit in the middle shows as one changed block, not as everything after
it; tools are matched by name. Token counts come from the given estimator.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from ctxviewer.analysis.tokens.estimators import Estimator
from ctxviewer.model import Block, Request


@dataclass(frozen=True)
class BlockChange:
    """A block added, removed or changed between two requests."""

    section: str  # "system" | "tools" | "messages"
    status: str  # "added" | "removed" | "changed"
    label: str  # e.g. "message 3 block 0 tool_result", "tool Read"
    tokens_a: int  # tokens in request a (0 when added)
    tokens_b: int  # tokens in request b (0 when removed)
    position_a: tuple[int, int] | None = None  # (message, block) or (index, 0)
    position_b: tuple[int, int] | None = None

    @property
    def delta(self) -> int:
        return self.tokens_b - self.tokens_a

    def to_json(self) -> dict[str, Any]:
        return {
            "section": self.section,
            "status": self.status,
            "label": self.label,
            "tokens_a": self.tokens_a,
            "tokens_b": self.tokens_b,
            "delta": self.delta,
            "position_a": list(self.position_a) if self.position_a else None,
            "position_b": list(self.position_b) if self.position_b else None,
        }


@dataclass(frozen=True)
class RequestDiff:
    """What changed between two requests, block by block."""

    a: int
    b: int
    changes: tuple[BlockChange, ...]
    unchanged_tokens: int  # tokens of the blocks both requests share
    tools_reordered: bool = False

    def tokens(self, status: str) -> int:
        return sum(
            c.tokens_b if status == "added" else c.tokens_a if status == "removed" else c.delta
            for c in self.changes
            if c.status == status
        )

    @property
    def delta(self) -> int:
        return sum(c.delta for c in self.changes)

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "delta": self.delta,
            "added_tokens": self.tokens("added"),
            "removed_tokens": self.tokens("removed"),
            "changed_delta": self.tokens("changed"),
            "unchanged_tokens": self.unchanged_tokens,
            "tools_reordered": self.tools_reordered,
            "changes": [c.to_json() for c in self.changes],
        }


def _flat(req: Request) -> list[tuple[tuple[int, int], str, Block]]:
    return [((i, j), m.role, b) for i, m in enumerate(req.messages) for j, b in enumerate(m.blocks)]


def _label(section: str, pos: tuple[int, int], role: str, b: Block) -> str:
    what = b.kind + (f" {b.name}" if b.name else "")
    if section == "system":
        return f"system block {pos[0]} {what}"
    return f"message {pos[0]} ({role}) block {pos[1]} {what}"


def _align(
    section: str,
    xs: list[tuple[tuple[int, int], str, Block]],
    ys: list[tuple[tuple[int, int], str, Block]],
    est: Estimator,
    out: list[BlockChange],
) -> int:
    same = 0
    sm = SequenceMatcher(
        None, [(r, b) for _, r, b in xs], [(r, b) for _, r, b in ys], autojunk=False
    )
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            same += sum(est.block(b) for _, _, b in xs[i1:i2])
            continue
        pairs = min(i2 - i1, j2 - j1) if op == "replace" else 0
        for k in range(pairs):
            (pa, ra, ba), (pb, rb, bb) = xs[i1 + k], ys[j1 + k]
            out.append(
                BlockChange(
                    section,
                    "changed",
                    _label(section, pb, rb, bb),
                    est.block(ba),
                    est.block(bb),
                    pa,
                    pb,
                )
            )
        for pa, ra, ba in xs[i1 + pairs : i2]:
            out.append(
                BlockChange(
                    section, "removed", _label(section, pa, ra, ba), est.block(ba), 0, pa, None
                )
            )
        for pb, rb, bb in ys[j1 + pairs : j2]:
            out.append(
                BlockChange(
                    section, "added", _label(section, pb, rb, bb), 0, est.block(bb), None, pb
                )
            )
    return same


def diff_requests(a: Request, b: Request, est: Estimator) -> RequestDiff:
    """Blocks of ``b`` compared with ``a`` (system, tools, messages)."""
    changes: list[BlockChange] = []
    sys_a = [((i, 0), "system", x) for i, x in enumerate(a.system)]
    sys_b = [((i, 0), "system", x) for i, x in enumerate(b.system)]
    same = _align("system", sys_a, sys_b, est, changes)
    tools_a = {t.name: (i, t) for i, t in enumerate(a.tools)}
    tools_b = {t.name: (i, t) for i, t in enumerate(b.tools)}
    for name, (i, t) in tools_a.items():
        if name not in tools_b:
            changes.append(
                BlockChange("tools", "removed", f"tool {name}", est.tool(t), 0, (i, 0), None)
            )
        elif tools_b[name][1].text != t.text:
            j, u = tools_b[name]
            changes.append(
                BlockChange(
                    "tools", "changed", f"tool {name}", est.tool(t), est.tool(u), (i, 0), (j, 0)
                )
            )
        else:
            same += est.tool(t)
    for name, (j, u) in tools_b.items():
        if name not in tools_a:
            changes.append(
                BlockChange("tools", "added", f"tool {name}", 0, est.tool(u), None, (j, 0))
            )
    common = [n for n in tools_a if n in tools_b]
    reordered = common != [n for n in tools_b if n in tools_a]
    same += _align("messages", _flat(a), _flat(b), est, changes)
    return RequestDiff(a.index, b.index, tuple(changes), same, reordered)
