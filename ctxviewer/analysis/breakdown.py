"""The ``/context`` breakdown of one request (docs/json.md: ``breakdown``).

Categories, in order, sum to the context window: system prompt, built-in
tools, MCP tools, skills, memory files, messages, free space, autocompact
buffer (plus ``unrecorded_overhead`` for transcripts, whose system prompt and
tools were never written down, and qwen-code 0.24.2's ``startup_context`` and
``unattributed``). Rows an agent shows outside its total (Claude Code
2.1.332's deferred tools) are ``Breakdown.outside``.

Mode A (no size known: no API usage before it): estimated overhead only, no
total, no Messages row.
Mode B (a size known): total = API prompt size; overhead categories are
scaled by ``min(1, total / raw_overhead)``; Messages = ``max(0, total -
scaled_overhead)`` and so absorbs the estimation error, which is reported.
A request without usage has a size when an earlier call of its conversation
was counted (that count plus the estimate of what was added: ``total_basis``
"estimate") or when its context-overflow error states it ("overflow").
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from ctxviewer.analysis.agents.counting import (
    DEFERRED_BUILTIN,
    DEFERRED_MCP,
    OUTSIDE,
    CountingView,
    Difference,
)
from ctxviewer.analysis.thresholds import Thresholds
from ctxviewer.analysis.tokens.estimators import Estimator
from ctxviewer.analysis.windows import baseline_note
from ctxviewer.fmt import short_text
from ctxviewer.ingest.base import messages_unsure
from ctxviewer.ingest.classify import skills_in
from ctxviewer.model import (
    COMPACTION_SUMMARY,
    MCP,
    MEMORY,
    SKILL,
    SKILL_LISTING,
    Block,
    Message,
    Request,
    ToolDef,
)

LABELS = {
    "system_prompt": "System prompt",
    "unrecorded_overhead": "System prompt + tools (not recorded)",
    "builtin_tools": "Built-in tools",
    "mcp_tools": "MCP tools",
    "skills": "Skills",
    "memory_files": "Memory files",
    "startup_context": "Startup context",
    "messages": "Messages",
    "unattributed": "Unattributed",
    "free_space": "Free space",
    "autocompact_buffer": "Autocompact buffer",
    # outside the total (Breakdown.outside)
    DEFERRED_MCP: "MCP tools (deferred)",
    DEFERRED_BUILTIN: "System tools (deferred)",
}
ORDER = tuple(k for k in LABELS if k not in OUTSIDE)
SIZE_NOTES = {
    "estimate": "no API usage for this request: its size is the last API count of its "
    "conversation plus the estimate of what was added since (the pre-send "
    "estimate)",
    "overflow": "no API usage for this request: its size is the one its context-overflow "
    "error states",
}
OVERHEAD = (
    "system_prompt",
    "unrecorded_overhead",
    "builtin_tools",
    "mcp_tools",
    "skills",
    "memory_files",
    "startup_context",
)
SPACE = ("free_space", "autocompact_buffer")


@dataclass(frozen=True)
class Item:
    """A row under a category: a tool, a server, a memory file, a message, a block."""

    name: str
    tokens: int
    kind: str  # tool | server | memory | skill | system | message | block | note
    items: tuple[Item, ...] = ()
    ref: object = None  # the model object (Block, ToolDef, Message) or text it stands for
    index: int | None = None  # position in the request (messages, blocks)


@dataclass(frozen=True)
class Category:
    """One row of the breakdown (system prompt, tools, messages ...) with its items."""

    name: str
    tokens: int
    items: tuple[Item, ...] = ()
    estimated: int = 0  # the local estimate before scaling / subtraction
    note: str = ""
    basis: str = "estimate"  # estimate | count_tokens | api | api - overhead | window
    title: str = ""  # a label of its own (the unrecorded part when the system prompt is recorded)

    @property
    def label(self) -> str:
        return self.title or LABELS[self.name]


@dataclass(frozen=True)
class Breakdown:
    """The context window of one request, split into categories."""

    request: int
    mode: str  # "A" | "B"
    estimator: str
    window: int
    thresholds: Thresholds
    total: int | None  # API prompt size (mode B)
    used: int  # total (B) or estimated overhead (A)
    categories: tuple[Category, ...]
    overhead_scale: float = 1.0
    raw_overhead: int = 0
    messages_estimate: int = 0  # local estimate of the messages, whatever the mode
    complete: bool = True
    notes: tuple[str, ...] = field(default=())
    source_notes: tuple[str, ...] = field(default=())  # what the reader says it knows / inferred
    counts: str = "wire"  # "agent": counted by the agent's own /context rules; "wire": as sent
    differences: tuple[Difference, ...] = ()  # where the agent's view and the wire disagree
    # the prompt as exact growth, estimate and unattributed tokens (analysis.attribution)
    attribution: dict[str, int] | None = None
    failure: str | None = None  # the call got no answer (HTTP error, upstream unreachable)
    simulated: bool = False  # a simulated compaction's request: the total is an estimate
    # rows the agent shows outside its total (deferred tools): not in used, nor the window
    outside: tuple[Category, ...] = ()
    # where the total comes from (mode B): "api" (the usage), "overflow" (the size a
    # context-overflow error states), "estimate" (no usage: the last API count of the
    # conversation plus the estimate of what was added); None in mode A
    total_basis: str | None = None

    def category(self, name: str) -> Category | None:
        return next((c for c in (*self.categories, *self.outside) if c.name == name), None)

    def percent(self, tokens: int) -> float:
        return round(100.0 * tokens / self.window, 2) if self.window else 0.0

    @property
    def messages_error(self) -> int | None:
        """Messages row minus its local estimate: the estimation error it absorbs (mode B)."""
        cat = self.category("messages")
        return None if cat is None else cat.tokens - self.messages_estimate


def _block_label(b: Block) -> str:
    if b.kind == "tool_use":
        return f"tool call {b.name}"
    if b.kind == "tool_result":
        return f"tool result{' (error)' if b.is_error else ''}: {short_text(b.text, 40)}"
    if b.kind in ("image", "document"):
        return b.kind
    tag = f"[{b.tag}{': ' + b.name if b.name else ''}] " if b.tag else ""
    return f"{b.kind}: {tag}{short_text(b.text, 48)}"


def _message_label(i: int, m: Message) -> str:
    first = (
        next((b for b in m.blocks if b.tag == COMPACTION_SUMMARY), None)
        or next((b for b in m.blocks if b.text.strip()), None)
        or next((b for b in m.blocks if b.kind != "text"), None)
    )  # a turn's first block may be empty
    what = _block_label(first) if first else "(empty)"
    return f"#{i} {m.role}: {what}"


def _counted(b: Block) -> bool:
    """Blocks of a message that count under Messages (not memory / skill listing)."""
    return b.tag not in (MEMORY, SKILL_LISTING)


# (position, id(message)) -> (the message, its row or None when it is no row): a trace
# repeats its history, so the next request's rows are mostly the last one's
MessageMemo = dict[tuple[int, int], tuple[Message, "Item | None"]]
MEMO_LIMIT = 50_000  # rows kept: a log whose requests share no message objects starts over


def message_items(
    messages: Iterable[Message], est: Estimator, memo: MessageMemo | None = None
) -> tuple[list[Item], int]:
    """The Messages rows (a message, its blocks inside) and their total. ``memo`` keeps
    the rows of messages seen before at the same position, for one estimator."""
    items: list[Item] = []
    total = 0
    for i, m in enumerate(messages):
        known = memo.get((i, id(m))) if memo is not None else None
        if known is not None and known[0] is m:
            item = known[1]
        else:
            item = _message_item(i, m, est)
            if memo is not None:
                if len(memo) >= MEMO_LIMIT:
                    memo.clear()
                memo[(i, id(m))] = (m, item)
        if item is not None:
            total += item.tokens
            items.append(item)
    return items, total


def message_total(messages: Iterable[Message], est: Estimator) -> int:
    """The total of ``message_items`` without its rows (their labels cost more than
    the counting)."""
    total = 0
    overhead = est.message_overhead
    for m in messages:
        counted = [b for b in m.blocks if _counted(b)]
        if counted or not m.blocks:
            total += sum(est.block(b) for b in counted) + overhead
    return total


def _message_item(i: int, m: Message, est: Estimator) -> Item | None:
    blocks = [
        Item(_block_label(b), est.block(b), "block", ref=b, index=j)
        for j, b in enumerate(m.blocks)
        if _counted(b)
    ]
    if not blocks and any(not _counted(b) for b in m.blocks):
        return None
    tokens = sum(x.tokens for x in blocks) + est.message_overhead
    return Item(_message_label(i, m), tokens, "message", tuple(blocks), ref=m, index=i)


def overhead_parts(req: Request, est: Estimator) -> dict[str, tuple[int, list[Item]]]:
    parts: dict[str, tuple[int, list[Item]]] = {}
    sys_items = [
        Item(f"block {i + 1}: {short_text(b.text)}", est.block(b), "system", ref=b, index=i)
        for i, b in enumerate(req.system)
        if b.tag not in (MEMORY, SKILL_LISTING)
    ]
    parts["system_prompt"] = (sum(x.tokens for x in sys_items), sys_items)
    builtin, mcp = tool_items(req, est)
    parts["builtin_tools"] = (sum(x.tokens for x in builtin), builtin)
    parts["mcp_tools"] = (sum(x.tokens for x in mcp), mcp)
    parts["skills"] = _skills(req, est)
    parts["memory_files"] = _memory(req, est)
    return parts


def tool_items(req: Request, est: Estimator) -> tuple[list[Item], list[Item]]:
    """The request's built-in tools, and its MCP tools by server (one ``server`` item
    each, its tools inside): the rows of the Built-in tools and MCP tools categories."""
    builtin = [
        Item(t.name, est.tool(t), "tool", ref=t) for t in req.tools if t.kind not in (MCP, SKILL)
    ]
    servers: dict[str, list[Item]] = defaultdict(list)
    for t in req.tools:
        if t.kind == MCP:
            servers[mcp_server(t)].append(Item(t.name, est.tool(t), "tool", ref=t))
    mcp = [
        Item(s, sum(x.tokens for x in tools), "server", tuple(_desc(tools)))
        for s, tools in servers.items()
    ]
    return builtin, mcp


def mcp_server(t: ToolDef) -> str:
    """The name an MCP tool's server goes by in the breakdown."""
    return t.server or "mcp"


def _skills(req: Request, est: Estimator) -> tuple[int, list[Item]]:
    sources: list[tuple[str, str]] = []  # (text the skills are listed in, its kind)
    total = 0
    for t in req.tools:
        if t.kind == SKILL:
            total += est.tool(t)
            sources.append((t.description, "tool"))
    for b in (*req.system, *(b for m in req.messages for b in m.blocks)):
        if b.tag == SKILL_LISTING:
            total += est.block(b)
            sources.append((b.text, "listing"))
    items: dict[str, Item] = {}
    for text, _ in sources:
        for name, desc in skills_in(text):
            items.setdefault(
                name, Item(name, est.count(f"{name}: {desc}"), "skill", ref=f"{name}: {desc}")
            )
    return total, list(items.values())


def _memory(req: Request, est: Estimator) -> tuple[int, list[Item]]:
    files: dict[str, list[Block]] = defaultdict(list)
    for b in req.system:
        if b.tag == MEMORY:
            files[b.name or "memory"].append(b)
    for m in req.messages:
        for b in m.blocks:
            if b.tag == MEMORY:
                files[b.name or "memory"].append(b)
    items = [
        Item(
            path,
            sum(est.block(b) for b in blocks),
            "memory",
            ref=blocks[0] if len(blocks) == 1 else "\n".join(b.text for b in blocks),
        )
        for path, blocks in files.items()
    ]
    return sum(x.tokens for x in items), items


def _desc(items: Iterable[Item]) -> list[Item]:
    return sorted(items, key=lambda x: (-x.tokens, x.name))


def _scaled(items: Iterable[Item], scale: float) -> tuple[Item, ...]:
    if scale >= 1.0:
        return tuple(_desc(items))
    out = [
        Item(x.name, round(x.tokens * scale), x.kind, _scaled(x.items, scale), x.ref, x.index)
        for x in items
    ]
    return tuple(_desc(out))


def breakdown(
    req: Request,
    est: Estimator,
    window: int,
    thresholds: Thresholds,
    inferred_overhead: int | None = None,
    view: CountingView | None = None,
    memo: MessageMemo | None = None,
    rows: bool = True,
    size: tuple[int, str] | None = None,
) -> Breakdown:
    """The breakdown of ``req``; ``inferred_overhead`` is for transcripts (see
    ``infer_overhead``); ``view`` counts as the agent's own ``/context`` does; ``memo``
    (see ``message_items``) is for breakdowns of many requests with one estimator.
    ``rows=False`` leaves the Messages category without its rows (every number stays).
    ``size``: (tokens, basis) of a request without usage (``total_basis``)."""
    parts = overhead_parts(req, est)
    diffs: list[Difference] = []
    if view is not None:
        parts, diffs = view.adjust(parts, req, est, Item)
    outside = {k: parts.pop(k) for k in OUTSIDE if k in parts}
    notes: list[str] = []
    if not req.complete and req.system and req.tools:  # Claude Code 2.1.332 records both
        notes.append(
            "system prompt and tools as the transcript records them; no count_tokens "
            "answers: estimated"
        )
    elif not req.complete:
        unrec = inferred_overhead or 0
        kept = {"memory_files": parts["memory_files"], "skills": parts["skills"]}
        if req.system:  # a transcript that records its system prompt (Codex base instructions)
            recorded = sum(est.block(b) for b in req.system)
            unrec = max(0, unrec - recorded)
            kept["system_prompt"] = parts["system_prompt"]
            notes.append(
                f"tools not recorded by this source: inferred {unrec:,} tokens from the "
                f"first API usage minus the recorded system prompt ({recorded:,})"
            )
        elif inferred_overhead is None:
            notes.append(
                "system prompt + tools not recorded by this source, and no API usage "
                "in its conversation to infer them from"
            )
        else:
            notes.append(
                f"system prompt + tools not recorded by this source: inferred {unrec:,} "
                "tokens from the first API usage"
            )
        parts = {"unrecorded_overhead": (unrec, []), **kept}
    if rows:
        msg_items, msg_est = message_items(req.messages, est, memo)
    else:
        msg_items, msg_est = [], message_total(req.messages, est)
    raw_overhead = sum(tokens for tokens, _ in parts.values())
    total = req.api_prompt_tokens
    size_basis = "api" if total is not None else None
    if total is None and size is not None:
        total, size_basis = size
        notes.append(SIZE_NOTES[size_basis])
    mode = "B" if total is not None else "A"
    scale = 1.0
    if total is not None and raw_overhead > total:  # mode B
        scale = total / raw_overhead if raw_overhead else 1.0
        notes.append(
            f"estimated overhead {raw_overhead:,} exceeds the API total {total:,}: "
            f"overhead scaled by {scale:.3f}"
        )
    cats: list[Category] = []
    names = [name for name in OVERHEAD if name in parts]
    # scaled to the total exactly (largest remainder), not each rounded on its own
    sizes = (
        [parts[n][0] for n in names]
        if scale >= 1.0
        else apportion([parts[n][0] for n in names], total or 0)
    )
    for name, size_ in zip(names, sizes, strict=True):
        tokens, items = parts[name]
        note = notes[0] if name == "unrecorded_overhead" else ""
        basis = "count_tokens" if view is not None and view.counted(name) else "estimate"
        title = "Tools (not recorded)" if name == "unrecorded_overhead" and req.system else ""
        cats.append(Category(name, size_, _scaled(items, scale), tokens, note, basis, title))
    scaled_overhead = sum(c.tokens for c in cats)
    if mode == "B":
        assert total is not None
        messages = max(0, total - scaled_overhead)
        if messages < msg_est and not req.complete:
            cats, messages = _make_room(cats, messages, msg_est, notes)
        diff = messages - msg_est
        absorbed = (
            "estimation error"
            if req.complete
            else "estimation error and content the log does not record"
        )
        whole = (
            "API total"
            if size_basis == "api"
            else "overflow error's count"
            if size_basis == "overflow"
            else "estimated total"
        )
        split = (
            view.split_messages(req, est, messages) if view is not None and scale >= 1.0 else None
        )
        if split is None:
            cats.append(
                Category(
                    "messages",
                    messages,
                    tuple(_desc(msg_items)),
                    msg_est,
                    f"{whole} minus overhead; local estimate {msg_est:,} "
                    f"({diff:+,} absorbed: {absorbed})",
                    basis="api - overhead" if size_basis == "api" else f"{size_basis} - overhead",
                )
            )
        else:
            cats += _history_split(view, split, msg_items, messages)
        used = total
    else:
        used = scaled_overhead
    buffer = min(thresholds.buffer, max(0, window - used))
    buffer_note = f"space above the auto-compaction threshold ({thresholds.auto:,})"
    if view is not None and not view.shows_buffer and buffer:
        diffs.append(
            Difference(
                "autocompact buffer",
                0,
                buffer,
                f"{view.agent}'s /context shows no autocompact buffer: its free "
                f"space runs to the window (auto-compaction at "
                f"{thresholds.auto:,})",
            )
        )
        buffer_note = (
            f"not shown by {view.agent}'s /context; auto-compaction at {thresholds.auto:,}"
        )
        buffer = 0
    free = max(0, window - used - buffer)
    cats.append(Category("free_space", free, basis="window"))
    cats.append(Category("autocompact_buffer", buffer, note=buffer_note, basis="window"))
    shown_outside = tuple(
        Category(
            name,
            tokens,
            tuple(_desc(items)),
            tokens,
            f"{view.agent if view else 'the agent'} shows this row outside its total: "
            "deferred tools are named to the model, their schemas are not sent",
            "count_tokens" if view is not None and view.counted(name) else "estimate",
        )
        for name, (tokens, items) in outside.items()
    )
    baseline = baseline_note(req.api, req.client)
    if baseline:
        notes.append(baseline)
    return Breakdown(
        request=req.index,
        mode=mode,
        estimator=est.name,
        window=window,
        thresholds=thresholds,
        total=total,
        used=used,
        categories=tuple(cats),
        overhead_scale=scale,
        raw_overhead=raw_overhead,
        messages_estimate=msg_est,
        complete=req.complete,
        notes=tuple(notes),
        source_notes=req.notes,
        counts="agent" if view is not None else "wire",
        differences=tuple(diffs),
        failure=req.failure,
        simulated=req.simulated,
        outside=shown_outside,
        total_basis=size_basis,
    )


def _history_split(
    view: CountingView | None,
    split: tuple[int, int, int, list[tuple[str, int, str]]],
    msg_items: list[Item],
    left: int,
) -> list[Category]:
    """Messages and Unattributed as an agent that splits them counts them (qwen-code 0.24.2)."""
    messages, unattributed, history, transient = split
    agent = view.agent if view is not None else "the agent"
    rows = [Item(name, tokens, "block", ref=text) for name, tokens, text in transient]
    rest = unattributed - sum(x.tokens for x in rows)
    if rest:
        rows.append(
            Item(
                "the rest: text sent outside its rows, and the estimate's error",
                rest,
                "note",
                ref="the API total less every row",
            )
        )
    return [
        Category(
            "messages",
            messages,
            tuple(_desc(msg_items)),
            history,
            f"{agent}'s estimate of its history ({history:,}), at most what the API "
            f"total leaves ({left:,})",
            basis="estimate",
        ),
        Category(
            "unattributed",
            unattributed,
            tuple(_desc(rows)),
            unattributed,
            f"the API total less every row: what {agent} sends and attributes to "
            "nothing (the reminders of the newest message, the memory section's "
            "markers) and the estimate's error",
            basis="api - overhead",
        ),
    ]


def apportion(values: list[int], total: int) -> list[int]:
    """``values`` scaled to sum to ``total`` exactly (largest remainder; ``total`` at
    most ``sum(values)``)."""
    whole = sum(values)
    if whole <= 0:
        return [0] * len(values)
    exact = [v * total / whole for v in values]
    out = [int(x) for x in exact]
    for i in sorted(range(len(values)), key=lambda i: out[i] - exact[i])[: total - sum(out)]:
        out[i] += 1
    return out


def _make_room(
    cats: list[Category], messages: int, msg_est: int, notes: list[str]
) -> tuple[list[Category], int]:
    """A transcript whose recorded messages do not fit beside the inferred system prompt
    + tools in the API's total: the inference (from another request's usage) gives way
    to what the log holds, so Messages is never smaller than its rows."""
    at = next((i for i, c in enumerate(cats) if c.name == "unrecorded_overhead"), None)
    if at is None or not cats[at].tokens:
        return cats, messages
    cut = min(cats[at].tokens, msg_est - messages)
    unrec = cats[at]
    notes.append(
        f"the recorded messages' estimate ({msg_est:,}) does not fit beside the "
        f"inferred system prompt + tools in this request's total: those cut by "
        f"{cut:,} to {unrec.tokens - cut:,}"
    )
    cats = [*cats[:at], replace(unrec, tokens=unrec.tokens - cut), *cats[at + 1 :]]
    return cats, messages + cut


def infer_overhead(requests: Iterable[Request], target: Request, est: Estimator) -> int | None:
    """System prompt + tools of a transcript, inferred from the first API usage.

    The first request with usage in the same conversation (same role and
    agent) as ``target``: its API prompt size minus the local estimate of its
    messages. None for complete requests.
    """
    if target.complete:
        return None
    fallback: Request | None = None
    for r in requests:
        if r.role == target.role and r.agent == target.agent and r.usage is not None:
            # a request whose log lost messages (an OpenTelemetry body cut short) would
            # count them as overhead: one with its messages whole is taken first
            if not messages_unsure(r.notes):
                return max(0, r.usage.prompt_tokens - est.messages(r.messages))
            fallback = fallback or r
    if fallback is None or fallback.usage is None:
        return None
    return max(0, fallback.usage.prompt_tokens - est.messages(fallback.messages))
