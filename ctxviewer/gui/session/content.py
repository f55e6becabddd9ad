"""The exact text a breakdown row stands for, and its token count (no Qt here).

``Block`` -> its text; ``ToolDef`` -> its declaration as indented JSON;
``Message`` -> its blocks, each under a header; a ``str`` ref as it is; a
category -> a summary of its rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from ctxviewer.analysis.breakdown import Breakdown, Category, Item
from ctxviewer.analysis.tokens.estimators import Estimator
from ctxviewer.jsonish import pretty
from ctxviewer.model import Block, Message, ToolDef


@dataclass(frozen=True)
class Content:
    """The text shown for a selected row, with its token counts."""

    title: str
    text: str
    tokens: int | None  # count of the text under the estimator (None: not applicable)
    shown_tokens: int | None  # the row's number in the breakdown


def _block_header(b: Block) -> str:
    parts = [b.kind]
    if b.name:
        parts.append(b.name)
    if b.tag:
        parts.append(f"[{b.tag}]")
    if b.is_error:
        parts.append("(error)")
    return "── " + " ".join(parts) + " ──"


def _json_text(text: str) -> str:
    try:
        return pretty(orjson.loads(text))
    except orjson.JSONDecodeError:
        return text


def ref_text(ref: object) -> str:
    if isinstance(ref, Block):
        if ref.kind == "tool_use":
            return _json_text(ref.text)
        if ref.fixed_tokens is not None and not ref.text:
            return f"({ref.kind}: {ref.fixed_tokens:,} tokens, no text)"
        return ref.text
    if isinstance(ref, ToolDef):
        return _json_text(ref.text)
    if isinstance(ref, Message):
        return "\n\n".join(f"{_block_header(b)}\n{ref_text(b)}" for b in ref.blocks)
    if isinstance(ref, str):
        return ref
    return ""


def ref_tokens(ref: object, est: Estimator) -> int | None:
    if isinstance(ref, Block):
        return est.block(ref)
    if isinstance(ref, ToolDef):
        return est.tool(ref)
    if isinstance(ref, Message):
        return est.message(ref)
    if isinstance(ref, str):
        return est.count(ref)
    return None


def _category_text(c: Category, b: Breakdown) -> str:
    lines = [f"{c.label}: {c.tokens:,} tokens ({b.percent(c.tokens):.2f}% of the window)"]
    if c.estimated and c.estimated != c.tokens:
        lines.append(f"local estimate before scaling: {c.estimated:,}")
    if c.note:
        lines.append(c.note)
    if c.items:
        lines.append("")
        lines += [f"{x.tokens:>10,}  {x.name}" for x in c.items]
    return "\n".join(lines)


def node_content(obj: object, est: Estimator, b: Breakdown | None) -> Content:
    """What the content pane shows for a selected tree row."""
    if isinstance(obj, Category) and b is not None:
        return Content(obj.label, _category_text(obj, b), None, obj.tokens)
    if isinstance(obj, Item):
        if obj.ref is None and obj.items:  # a group row (an MCP server)
            text = "\n".join(f"{x.tokens:>10,}  {x.name}" for x in obj.items)
            return Content(obj.name, text, None, obj.tokens)
        return Content(obj.name, ref_text(obj.ref), ref_tokens(obj.ref, est), obj.tokens)
    return Content("", "", None, None)
