"""Plain-text renderings of a compaction: the new context, and the summary as Markdown."""

from __future__ import annotations

from ctxviewer.analysis.compaction import CompactionResult
from ctxviewer.model import TEXT, THINKING, TOOL_RESULT, TOOL_USE, Request

MAX_BLOCK = 6_000


def _cut(text: str) -> str:
    if len(text) <= MAX_BLOCK:
        return text
    half = MAX_BLOCK // 2
    return f"{text[:half]}\n[… {len(text) - MAX_BLOCK:,} chars not shown …]\n{text[-half:]}"


def context_text(req: Request) -> str:
    """The compacted request as the model receives it: system, tools, then the messages."""
    lines: list[str] = []
    if req.system:
        lines.append(f"=== system ({len(req.system)} blocks) ===")
        lines += [_cut(b.text) for b in req.system]
    elif not req.complete:
        lines.append("=== system prompt and tools: not recorded by this source ===")
    if req.tools:
        lines.append(
            f"=== tools ({len(req.tools)}): " + ", ".join(t.name for t in req.tools) + " ==="
        )
    for i, m in enumerate(req.messages):
        lines.append(f"\n=== [{i}] {m.role} ===")
        for b in m.blocks:
            tag = f" ({b.tag})" if b.tag else ""
            if b.kind == TEXT:
                lines.append(f"{tag.strip()}\n{_cut(b.text)}".strip())
            elif b.kind == THINKING:
                lines.append(f"[thinking]\n{_cut(b.text)}")
            elif b.kind == TOOL_USE:
                lines.append(f"[calls {b.name}] {_cut(b.text)}")
            elif b.kind == TOOL_RESULT:
                lines.append(f"[tool result{' (error)' if b.is_error else ''}]\n{_cut(b.text)}")
            else:
                lines.append(f"[{b.kind}] {_cut(b.text)}")
    return "\n".join(lines)


def summary_markdown(r: CompactionResult) -> str:
    head = [
        f"# {r.title or 'Compaction summary'}",
        "",
        f"- strategy: {r.strategy}",
        f"- request: {r.request.index}",
        (
            f"- tokens (local estimates): {r.before_estimate:,} before → {r.after:,} after, "
            f"saved {r.saved:,}"
        ),
        *(
            [f"- API count before: {r.before:,}; projected after: ~{r.projected_after:,}"]
            if r.before != r.before_estimate
            else []
        ),
        (
            f"- summarized messages: {len(r.summarized)}, kept: {len(r.kept)}, "
            f"dropped: {len(r.dropped)}"
        ),
        f"- summarizer: {r.summarizer or 'none'}",
    ]
    if r.usage:
        cost = r.usage.get("cost_usd")
        head.append(
            f"- summary call: {r.usage.get('model')}, "
            f"{r.usage.get('input_tokens', 0):,} in / "
            f"{r.usage.get('output_tokens', 0):,} out"
            + (f", ${cost:.4f}" if cost is not None else "")
        )
    return "\n".join(head) + "\n\n" + (r.summary or "(no summary)") + "\n"
