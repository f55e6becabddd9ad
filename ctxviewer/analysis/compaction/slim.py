"""Tool-output slimming (Claude Code's ``compressToolOutput``; docs/compaction.md).

Outputs up to ``max_chars`` are left alone. Longer ones:

1. fenced code blocks over ``code_max_lines`` lines keep 60% of that many
   lines from the head and 40% from the tail, with ``[N lines omitted]``
   between; if the result fits in ``max_chars`` it is used;
2. file listings (text with ``→`` or starting with a line number and ``│``
   / ``|``) keep the first 20 and the last 10 lines;
3. anything else keeps its head and tail around ``... [~N chars omitted] ...``
   so that the whole is about ``max_chars`` long.

Nothing is dropped: every message stays, only tool outputs get shorter.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, replace

from ctxviewer.analysis.compaction.base import CompactionResult, SlimmedBlock, build_result
from ctxviewer.analysis.tokens.estimators import Estimator
from ctxviewer.model import TEXT, TOOL_RESULT, Block, Message, Request

_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)
_LISTING = re.compile(r"^\s*\d+\s*[│|]")
# Claude Code re-injects files read before a compaction as plain user text
_TEXT_RESULT = "Result of calling the "


@dataclass(frozen=True)
class SlimParams:
    """How the slim strategy shortens tool results and code."""

    max_chars: int = 2_000
    code_max_lines: int = 50
    code_head_ratio: float = 0.6  # the tail gets the rest (40%)
    listing_head: int = 20
    listing_tail: int = 10
    head_ratio: float = 0.6  # of max_chars, for plain truncation


def compress_code_block(code: str, max_lines: int = 50, head_ratio: float = 0.6) -> str:
    """Keep ``head_ratio`` of ``max_lines`` from the head and the rest from the tail."""
    lines = code.split("\n")
    trailing = lines and lines[-1] == ""
    if trailing:
        lines = lines[:-1]
    if len(lines) <= max_lines:
        return code
    head = round(max_lines * head_ratio)
    tail = max_lines - head
    omitted = len(lines) - head - tail
    out = [*lines[:head], f"[{omitted} lines omitted]", *lines[len(lines) - tail :]]
    return "\n".join(out) + ("\n" if trailing else "")


def is_listing(content: str) -> bool:
    return "→" in content or bool(_LISTING.match(content))


def compress_listing(content: str, head: int = 20, tail: int = 10) -> str:
    lines = content.split("\n")
    if len(lines) <= head + tail:
        return content
    omitted = len(lines) - head - tail
    return "\n".join([*lines[:head], f"[{omitted} lines omitted]", *lines[len(lines) - tail :]])


def truncate_middle(content: str, max_chars: int = 2_000, head_ratio: float = 0.6) -> str:
    if len(content) <= max_chars:
        return content
    head_n = round(max_chars * head_ratio)
    tail_n = max_chars - head_n
    omitted = len(content) - head_n - tail_n
    return f"{content[:head_n]}\n\n... [~{omitted} chars omitted] ...\n\n{content[-tail_n:]}"


def compress_tool_output(content: str, params: SlimParams | None = None) -> tuple[str, str]:
    """The slimmed text and the rule used (``""`` when unchanged)."""
    p = params or SlimParams()
    if len(content) <= p.max_chars:
        return content, ""
    if _FENCE.search(content):
        result = _FENCE.sub(
            lambda m: m.group(0).replace(
                m.group(1), compress_code_block(m.group(1), p.code_max_lines, p.code_head_ratio)
            ),
            content,
        )
        if len(result) <= p.max_chars:
            return result, "code"
    if is_listing(content):
        result = compress_listing(content, p.listing_head, p.listing_tail)
        if result != content:
            return result, "listing"
    return truncate_middle(content, p.max_chars, p.head_ratio), "truncate"


def _slimmable(b: Block) -> bool:
    if b.tag is not None:  # memory, summaries, reminders are not tool output
        return False
    return b.kind == TOOL_RESULT or (b.kind == TEXT and b.text.startswith(_TEXT_RESULT))


def slim_messages(
    messages: tuple[Message, ...], est: Estimator, params: SlimParams | None = None
) -> tuple[list[Message], list[SlimmedBlock]]:
    out: list[Message] = []
    slimmed: list[SlimmedBlock] = []
    for i, m in enumerate(messages):
        blocks = list(m.blocks)
        changed = False
        for j, b in enumerate(blocks):
            if not _slimmable(b):
                continue
            text, rule = compress_tool_output(b.text, params)
            if rule:
                nb = replace(b, text=text)
                slimmed.append(SlimmedBlock(i, j, est.block(b), est.block(nb), rule))
                blocks[j] = nb
                changed = True
        out.append(replace(m, blocks=tuple(blocks)) if changed else m)
    return out, slimmed


def slim(
    req: Request,
    est: Estimator,
    params: SlimParams | None = None,
    inferred_overhead: int | None = None,
) -> CompactionResult:
    p = params or SlimParams()
    messages, slimmed = slim_messages(req.messages, est, p)
    return build_result(
        "slim",
        req,
        messages,
        est,
        inferred_overhead,
        kept=range(len(req.messages)),
        params=asdict(p),
        slimmed=tuple(slimmed),
    )
