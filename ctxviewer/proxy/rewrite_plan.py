"""Plan a rewrite of one conversation from one of its request bodies.

A plan is a ``Rule`` (what to substitute on every later request) plus the
preview of what it does to that request: the items that go, the items that
come, and the prompt's size before and after.

- ``compact`` (strategies ``qwen``, ``shannon``, ``trim``): the strategy's
  result on the parsed request decides which leading items go; they become
  the summary (and the items kept among them). What the agent injected into
  them rather than the conversation produced (its memory files, environment,
  agent and skill listings, deferred-tool announcements, hook context, any
  system or developer message: the profile's ``injected``) stays, unsummarised
  and in place, before the summary. The substituted prefix is the original
  items, compared by their canonical JSON, so every later request that still
  starts with them gets the same replacement: same bytes, and the provider's
  prompt cache works again after one write.
- ``prune`` (strategy ``slim``, or chosen tools): the tool results the model
  has already answered are slimmed (``compress_tool_output``; the results of
  the last user message, which it has not read yet, stay whole) and chosen
  tool definitions dropped, on this and every later request.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from ctxviewer.analysis.agents.identify import request_agent
from ctxviewer.analysis.agents.table import profile
from ctxviewer.analysis.compaction import (
    STRATEGIES,
    SlimParams,
    Summarizer,
    compress_tool_output,
    simulate_compaction,
)
from ctxviewer.analysis.compaction.base import estimate_request
from ctxviewer.analysis.compaction.summary import QWEN_ACK, SHANNON_PREFIX
from ctxviewer.analysis.thresholds import Thresholds
from ctxviewer.analysis.tokens.estimators import Estimator
from ctxviewer.ingest.api.anthropic import Interner
from ctxviewer.ingest.trace.exchange import request_from_exchange
from ctxviewer.model import Request, Usage
from ctxviewer.proxy import rewrite_shapes as shapes

REWRITE_STRATEGIES = ("qwen", "shannon", "trim", "slim")
_PATHS = {
    "anthropic": "/v1/messages",
    "openai-chat": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
}


class CannotRewrite(ValueError):
    """This body cannot be rewritten as asked; ``str(e)`` says why in one line."""


def digest(part: Sequence[Any]) -> str:
    """A hash of items' canonical JSON (sorted keys): equal items, equal digest."""
    return hashlib.sha256(orjson.dumps(list(part), option=orjson.OPT_SORT_KEYS)).hexdigest()


@dataclass
class Rule:
    """What the proxy does to every request of one conversation."""

    conversation: str
    api: str
    strategy: str
    prefix_len: int = 0  # items after the system head that are replaced (0: none)
    prefix_digest: str = ""
    replacement: list[dict[str, Any]] = field(default_factory=list)
    slim_ids: frozenset[str] = frozenset()  # tool call ids whose results are slimmed
    drop_tools: frozenset[str] = frozenset()  # tool definitions removed by name
    summary: str = ""
    slim: SlimParams = field(default_factory=SlimParams)

    def describe(self) -> str:
        parts = []
        if self.prefix_len:
            parts.append(f"{self.strategy}: {self.prefix_len} items -> {len(self.replacement)}")
        if self.slim_ids:
            parts.append(f"{len(self.slim_ids)} tool results slimmed")
        if self.drop_tools:
            parts.append(f"tools dropped: {', '.join(sorted(self.drop_tools))}")
        return "; ".join(parts) or "nothing"


@dataclass
class Plan:
    """A rule and its preview on the request it was planned from."""

    rule: Rule
    body: dict[str, Any]  # the rewritten request
    removed: list[dict[str, Any]]  # items that go
    added: list[dict[str, Any]]  # items that come
    bytes_before: int
    bytes_after: int
    estimate_before: int
    estimate_after: int
    tokens_before: int  # as the API would count (calibrated), else the estimate
    tokens_after: int
    calibrated: bool  # tokens come from the conversation's last API count per byte
    notes: tuple[str, ...] = ()

    @property
    def saved(self) -> int:
        return self.tokens_before - self.tokens_after

    def as_json(self) -> dict[str, Any]:
        return {
            "conversation": self.rule.conversation,
            "strategy": self.rule.strategy,
            "rule": self.rule.describe(),
            "removed_items": len(self.removed),
            "added_items": len(self.added),
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "calibrated": self.calibrated,
            "estimate_before": self.estimate_before,
            "estimate_after": self.estimate_after,
            "summary": self.rule.summary,
            "notes": list(self.notes),
        }


def parse(api: str, body: dict[str, Any]) -> Request:
    req = request_from_exchange(
        body=body,
        path=_PATHS[api],
        response=None,
        status=None,
        timestamp=None,
        line=0,
        intern=Interner(),
    )
    if not isinstance(req, Request):
        raise CannotRewrite("not a model call")
    return req


def injected_markers(api: str, body: dict[str, Any], client: str | None) -> tuple[str, ...]:
    """How the text the agent injects into the history begins, from its profile (the
    agent told by its User-Agent ``client``, else by the request's content)."""
    try:
        req = parse(api, body)
    except CannotRewrite:
        return ()
    pid, _ = request_agent(replace(req, client=client or req.client))
    return profile(pid).injected


def apply_rule(rule: Rule, body: dict[str, Any]) -> dict[str, Any] | None:
    """``body`` rewritten by ``rule``; None when the rule does not apply (the history no
    longer starts with the replaced items, or nothing to change)."""
    raw = shapes.items(rule.api, body)
    if raw is None:
        return None
    n = shapes.head(rule.api, raw)
    new = raw
    if rule.prefix_len:
        if (
            len(raw) < n + rule.prefix_len + 1
            or digest(raw[n : n + rule.prefix_len]) != rule.prefix_digest
        ):
            return None
        new = [*raw[:n], *rule.replacement, *raw[n + rule.prefix_len :]]
    if rule.slim_ids:
        new = [_slim_item(rule.api, item, rule.slim_ids, rule.slim) for item in new]
    out = {**body, shapes.items_key(rule.api): new}
    if rule.drop_tools and isinstance(body.get("tools"), list):
        out["tools"] = [t for t in body["tools"] if tool_name(t) not in rule.drop_tools]
    return out if out != body else None


def plan(
    api: str,
    body: dict[str, Any],
    conversation: str,
    strategy: str,
    est: Estimator,
    thresholds: Thresholds,
    summarizer: Summarizer | None = None,
    *,
    drop_tools: Sequence[str] = (),
    tokens_per_byte: float | None = None,
    injected: tuple[str, ...] = (),
) -> Plan:
    """Plan ``strategy`` (one of ``REWRITE_STRATEGIES``, or ``prune`` for ``drop_tools``
    only) on ``body``; ``injected``: how the agent's injected text begins (kept by a
    compaction). Raises ``CannotRewrite``."""
    raw = shapes.items(api, body)
    if raw is None:
        raise CannotRewrite(f"{api} requests cannot be rewritten (no history list)")
    if strategy not in (*REWRITE_STRATEGIES, "prune"):
        raise CannotRewrite(
            f"unknown strategy {strategy!r} (known: {', '.join(REWRITE_STRATEGIES)}, prune)"
        )
    req = parse(api, body)
    n = shapes.head(api, raw)
    # the reader may take the head's items as messages (the Responses API's developer
    # items): the strategy sees them as the system prompt they are, never as history
    lead = len(req.messages) - (len(raw) - n)
    if not 0 <= lead <= n:
        raise CannotRewrite("the history has items ctxviewer does not understand")
    if lead:
        req = replace(
            req,
            system=(*req.system, *(b for m in req.messages[:lead] for b in m.blocks)),
            messages=req.messages[lead:],
        )
    if tokens_per_byte:  # what the API would count: the strategies judge their targets on it
        req = replace(
            req, usage=Usage(input_tokens=round(len(orjson.dumps(body)) * tokens_per_byte))
        )
    rule = Rule(conversation, api, strategy, drop_tools=frozenset(drop_tools))
    notes: list[str] = []
    removed: list[dict[str, Any]] = []
    added: list[dict[str, Any]] = []
    if strategy in ("qwen", "shannon", "trim"):
        removed, added = _compact(
            rule, api, raw, n, req, est, thresholds, summarizer, notes, injected
        )
    elif strategy == "slim":
        rule.slim_ids = answered_results(api, raw, n)
    new = apply_rule(rule, body)
    if new is None:
        raise CannotRewrite("nothing to rewrite: " + ("; ".join(notes) or "no change"))
    bad = shapes.problems(api, new, original=body)
    if bad:
        raise CannotRewrite("the rewrite would break the API's rules: " + "; ".join(bad[:3]))
    if strategy == "slim":
        removed = [i for i, j in zip(raw, new[shapes.items_key(api)], strict=True) if i != j]
        added = [j for i, j in zip(raw, new[shapes.items_key(api)], strict=True) if i != j]
    b0, b1 = len(orjson.dumps(body)), len(orjson.dumps(new))
    if b1 >= b0:
        raise CannotRewrite(
            f"{strategy} would not make this request smaller ({b0:,} -> {b1:,} bytes)"
        )
    e0 = estimate_request(req, est)
    e1 = estimate_request(parse(api, new), est)
    if tokens_per_byte:
        t0, t1 = round(b0 * tokens_per_byte), round(b1 * tokens_per_byte)
    else:
        t0, t1 = e0, e1
    return Plan(
        rule, new, removed, added, b0, b1, e0, e1, t0, t1, bool(tokens_per_byte), tuple(notes)
    )


def answered_results(api: str, raw: list[dict[str, Any]], n: int) -> frozenset[str]:
    """The tool calls whose results the model has answered: those before the history's
    last assistant item (the last user message's results it has not read yet)."""
    last = max(
        (i for i in range(n, len(raw)) if shapes.role(api, raw[i]) == "assistant"), default=n
    )
    return frozenset(r for item in raw[n:last] for r in shapes.results(api, item))


def _compact(
    rule: Rule,
    api: str,
    raw: list[dict[str, Any]],
    n: int,
    req: Request,
    est: Estimator,
    thresholds: Thresholds,
    summarizer: Summarizer | None,
    notes: list[str],
    injected: tuple[str, ...],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    result = simulate_compaction(req, rule.strategy, est, thresholds, summarizer=summarizer)
    notes.extend(result.notes)
    gone = sorted({*result.summarized, *result.dropped})
    if not gone:
        raise CannotRewrite("nothing to compact: " + ("; ".join(result.notes) or "too short"))
    first, cut = n + gone[0], n + gone[-1] + 1
    cut = shapes.pair_safe_cut(api, raw, first, cut)
    if cut >= len(raw) or cut <= first:
        raise CannotRewrite("no place to cut that keeps the latest request and its tool pairs")
    keep = set(result.kept)
    seq: list[dict[str, Any]] = []
    for i in range(n, cut):
        if (i - n) in keep:  # primers; what trim keeps
            seq.append(raw[i])
        elif (part := shapes.injected_part(api, raw[i], injected)) is not None:
            seq.append(part)  # the agent's rules, environment and listings stay in place
    if result.summary:
        text = (SHANNON_PREFIX if rule.strategy == "shannon" else "") + result.summary
        seq = shapes.with_user_text(api, seq, text)
        if rule.strategy == "qwen":
            seq.append(shapes.text_item(api, "assistant", QWEN_ACK))
    rule.summary = result.summary
    rule.replacement = shapes.fix_roles(api, seq, shapes.role(api, raw[cut]))
    rule.prefix_len = cut - n
    rule.prefix_digest = digest(raw[n:cut])
    return raw[n:cut], rule.replacement


def _slim_item(
    api: str, item: dict[str, Any], ids: frozenset[str], params: SlimParams
) -> dict[str, Any]:
    ans = shapes.results(api, item)
    if not ans or not ids.intersection(ans):
        return item
    if api == "openai-chat":
        content = item.get("content")
        return (
            {**item, "content": _slim_text(content, params)} if isinstance(content, str) else item
        )
    if api == "openai-responses":
        out = item.get("output")
        return {**item, "output": _slim_text(out, params)} if isinstance(out, str) else item
    blocks = []
    for b in item.get("content") or []:
        if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") in ids:
            c = b.get("content")
            if isinstance(c, str):
                b = {**b, "content": _slim_text(c, params)}
            elif isinstance(c, list):
                b = {
                    **b,
                    "content": [
                        {**p, "text": _slim_text(p["text"], params)}
                        if isinstance(p, dict) and isinstance(p.get("text"), str)
                        else p
                        for p in c
                    ],
                }
        blocks.append(b)
    return {**item, "content": blocks}


def _slim_text(text: str, params: SlimParams) -> str:
    return compress_tool_output(text, params)[0]


def tool_name(tool: Any) -> str | None:
    """A tool definition's name (Anthropic, OpenAI Chat or Responses shape)."""
    if not isinstance(tool, dict):
        return None
    fn = tool.get("function")
    return str(fn.get("name")) if isinstance(fn, dict) else tool.get("name")


assert set(REWRITE_STRATEGIES) <= set(STRATEGIES)
