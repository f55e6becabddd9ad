"""Trim by priority (ContextUI's ``Trim``; docs/compaction.md).

Priority, highest first: the system prompt (never dropped, it is not a
message), the last 3 rounds (a round is a model turn with its tool results), critical
messages (memory files, earlier compaction summaries, skill listings), old
messages, obsolete items. Obsolete items go first: tool results superseded by
a later read of the same file, and every TodoWrite state but the last. Then
the oldest non-critical messages go, until the estimate is under the budget.
What is left keeps its original order. Messages are dropped in units, so a
tool call never loses its result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import orjson

from ctxviewer.analysis.compaction.base import (
    CompactionResult,
    api_ratio,
    build_result,
    estimate_request,
    is_prompt,
    units,
)
from ctxviewer.analysis.thresholds import SHANNON_TARGET, Thresholds
from ctxviewer.analysis.tokens.estimators import Estimator
from ctxviewer.model import COMPACTION_SUMMARY, MEMORY, SKILL_LISTING, TOOL_USE, Message, Request

READ_TOOLS = frozenset({"Read", "read_file", "ReadFile", "View", "read_many_files", "view"})
TODO_TOOLS = frozenset({"TodoWrite", "todo_write", "TodoRead", "update_plan"})
CRITICAL_TAGS = frozenset({MEMORY, COMPACTION_SUMMARY, SKILL_LISTING})


@dataclass(frozen=True)
class TrimParams:
    """The trim strategy's rules: rounds kept whole, and the token budget."""

    keep_rounds: int = 3
    budget: int | None = None  # default: the policy's target, else 37.5% of the window


def _calls(messages: Sequence[Message], unit: list[int]) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    for i in unit:
        for b in messages[i].blocks:
            if b.kind == TOOL_USE:
                path = None
                try:
                    data = orjson.loads(b.text) if b.text else {}
                    if isinstance(data, dict):
                        path = (
                            data.get("file_path") or data.get("path") or data.get("absolute_path")
                        )
                except orjson.JSONDecodeError:
                    pass
                out.append((b.name or "", path if isinstance(path, str) else None))
    return out


def obsolete_units(messages: Sequence[Message], groups: list[list[int]]) -> set[int]:
    """Positions in ``groups`` of units whose tool calls were all superseded later."""
    calls = [_calls(messages, g) for g in groups]
    last_read: dict[str, int] = {}
    last_todo = -1
    for u, cs in enumerate(calls):
        for name, path in cs:
            if name in READ_TOOLS and path:
                last_read[path] = u
            if name in TODO_TOOLS:
                last_todo = u
    out: set[int] = set()
    for u, cs in enumerate(calls):
        if not cs or any(is_prompt(messages[i]) for i in groups[u]):
            continue
        if all(
            (n in READ_TOOLS and p and last_read[p] > u) or (n in TODO_TOOLS and last_todo > u)
            for n, p in cs
        ):
            out.add(u)
    return out


def _protected_from(messages: Sequence[Message], groups: list[list[int]], rounds: int) -> int:
    """First protected unit: the start of the last ``rounds`` rounds.

    A round is one model turn: an assistant message with its tool results,
    plus the user prompt right before it (agent sessions make many turns per
    prompt, so counting prompts would protect nearly everything).
    """
    if rounds <= 0:
        return len(groups)
    turns = [u for u, g in enumerate(groups) if messages[g[0]].role == "assistant"]
    u = turns[-rounds] if len(turns) >= rounds else (turns[0] if turns else 0)
    if u > 0 and is_prompt(messages[groups[u - 1][0]]):
        u -= 1
    return u


def trim(
    req: Request,
    est: Estimator,
    thresholds: Thresholds,
    params: TrimParams | None = None,
    inferred_overhead: int | None = None,
) -> CompactionResult:
    p = params or TrimParams()
    budget = p.budget or thresholds.target or round(SHANNON_TARGET * thresholds.window)
    msgs = req.messages
    groups = units(msgs)
    protected = _protected_from(msgs, groups, p.keep_rounds)
    obsolete = obsolete_units(msgs, groups)
    critical = {u for u, g in enumerate(groups) if any(msgs[i].tags & CRITICAL_TAGS for i in g)}
    order = sorted(u for u in obsolete if u < protected)
    order += [u for u in range(protected) if u not in obsolete and u not in critical]
    tokens = estimate_request(req, est, inferred_overhead)
    # the budget is in the API's tokens: judged on the estimate scaled to the API count
    ratio = api_ratio(req, est, inferred_overhead)
    dropped_units: set[int] = set()
    for u in order:
        if round(tokens * ratio) <= budget:
            break
        dropped_units.add(u)
        tokens -= est.messages(msgs[i] for i in groups[u])
    dropped = sorted(i for u in dropped_units for i in groups[u])
    gone = set(dropped)
    kept = [i for i in range(len(msgs)) if i not in gone]
    notes = []
    if round(tokens * ratio) > budget:
        notes.append(f"the rest is protected (last {p.keep_rounds} rounds, memory, summaries)")
    used = {**asdict(p), "budget": budget}
    obsolete_msgs = sorted(i for u in obsolete & dropped_units for i in groups[u])
    if obsolete_msgs:
        notes.append(f"obsolete messages dropped first: {obsolete_msgs}")
    return build_result(
        "trim",
        req,
        [msgs[i] for i in kept],
        est,
        inferred_overhead,
        kept=kept,
        dropped=dropped,
        params=used,
        notes=tuple(notes),
        target=budget,
    )
