"""Opt-in request rewriting: per-conversation rules the proxy applies before forwarding.

Off unless asked for. A conversation is rewritten only when the user picked it
(``compact_now`` / ``prune``, from the window) or when ``compact_at`` is set
(``ctxviewer proxy --compact-at TOKENS``): then each conversation is compacted
once, on its first request whose prompt would exceed TOKENS, and the same
substitution is made on every later request of it. ``undo`` stops rewriting a
conversation for good (``compact_at`` does not fire on it again).

A conversation is told by the agent's session header (when it sends one) and
the first item of its history (the first user message): an agent that
compacts on its own starts a new one.

``Rewriter`` is thread-safe: the proxy's event loop rewrites requests while
the window (another thread) previews and installs rules.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from ctxviewer.analysis.compaction import Summarizer
from ctxviewer.analysis.compaction.summarize_local import LocalSummarizer
from ctxviewer.analysis.thresholds import thresholds
from ctxviewer.analysis.tokens.estimators import DEFAULT, Estimator, get_estimator
from ctxviewer.proxy import rewrite_shapes as shapes
from ctxviewer.proxy.rewrite_plan import (
    CannotRewrite,
    Plan,
    Rule,
    apply_rule,
    injected_markers,
    plan,
)

log = logging.getLogger("ctxviewer.proxy")

SESSION_HEADERS = ("x-claude-code-session-id", "session_id", "x-session-id")
DEFAULT_WINDOW = 200_000
# Statuses that say the upstream refused the request itself (not a key, a limit or an outage).
REJECTED = frozenset({400, 413, 422})


def conversation_key(api: str, headers: Mapping[str, str], body: Any) -> str | None:
    """A stable id for the conversation a request belongs to (None: not rewritable)."""
    raw = shapes.items(api, body)
    if not raw:
        return None
    n = shapes.head(api, raw)
    if n >= len(raw):
        return None
    session = next((headers[h] for h in SESSION_HEADERS if headers.get(h)), "")
    h = hashlib.sha256(
        api.encode()
        + b"\0"
        + session.encode()
        + b"\0"
        + orjson.dumps(raw[n], option=orjson.OPT_SORT_KEYS)
    )
    return "c_" + h.hexdigest()[:12]


@dataclass
class Outcome:
    """What the rewriter did to one request."""

    conversation: str | None
    body: dict[str, Any] | None = None  # the rewritten body; None: forward the original
    rule: Rule | None = None
    note: str = ""
    plan: Plan | None = None  # set when this request triggered an automatic compaction

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "conversation": self.conversation,
            "rule": self.rule.describe() if self.rule else None,
        }
        if self.note:
            out["note"] = self.note
        if self.plan is not None:
            out["plan"] = self.plan.as_json()
        return out


@dataclass
class _Conversation:
    """What the rewriter knows of one conversation."""

    api: str
    last_body: dict[str, Any] | None = None  # the last original body (for a preview)
    tokens_per_byte: float | None = None  # the API's last prompt count / bytes sent
    rule: Rule | None = None
    off: str = ""  # why rewriting is off for good (undo, rejected)
    client: str | None = None  # the agent's User-Agent (which profile's rules apply)
    requests: int = 0
    failed_at: int = 0  # history length of the last request an automatic compaction failed on
    history: list[str] = field(default_factory=list)


class Rewriter:
    """The rules, one per conversation, and the ``--compact-at`` policy."""

    def __init__(
        self,
        *,
        compact_at: int | None = None,
        strategy: str = "qwen",
        summarizer: Summarizer | None = None,
        estimator: Estimator | str = DEFAULT,
        on_event: Callable[[str], None] | None = None,
    ) -> None:
        self.compact_at = compact_at
        self.strategy = strategy
        self.summarizer: Summarizer = summarizer or LocalSummarizer()
        self.estimator = get_estimator(estimator) if isinstance(estimator, str) else estimator
        self._on_event = on_event
        self._lock = threading.Lock()
        self._convs: dict[str, _Conversation] = {}

    # --- used by the proxy ---------------------------------------------------------------

    def rewrite(self, api: str, headers: Mapping[str, str], body: Any) -> Outcome:
        """The body to forward for one request (may run a summarizer: call it off the loop
        when ``needs_planning`` says so)."""
        key = conversation_key(api, headers, body)
        if key is None:
            return Outcome(None)
        with self._lock:
            conv = self._convs.setdefault(key, _Conversation(api))
            conv.last_body = body
            conv.client = headers.get("user-agent") or conv.client
            conv.requests += 1
            rule, off, tpb = conv.rule, conv.off, conv.tokens_per_byte
        if off:
            return Outcome(key, note=f"rewriting off: {off}")
        made: Plan | None = None
        grown = len(shapes.items(api, body) or ()) > conv.failed_at
        if rule is None and grown and self._over(api, body, tpb):
            try:
                made = self._plan(api, body, key, self.strategy, tpb)
            except CannotRewrite as e:  # tried again once the history has grown
                with self._lock:
                    conv.failed_at = len(shapes.items(api, body) or ())
                self._say(f"{key}: over --compact-at {self.compact_at:,} but not compacted: {e}")
                return Outcome(key, note=f"not compacted: {e}")
            rule = self._install(key, made.rule, "auto")
            self._say(
                f"{key}: compacted ({made.rule.describe()}): ~{made.tokens_before:,} -> "
                f"~{made.tokens_after:,} tokens"
            )
        if rule is None:
            return Outcome(key)
        new = apply_rule(rule, body)
        if new is None:
            return Outcome(
                key,
                rule=rule,
                note="the history no longer starts with the compacted items: sent as is",
            )
        bad = shapes.problems(api, new, original=body)
        if bad:
            return Outcome(key, rule=rule, note="rewrite withheld: " + "; ".join(bad[:3]))
        return Outcome(key, new, rule, plan=made)

    def needs_planning(self, api: str, headers: Mapping[str, str], body: Any) -> bool:
        """True when ``rewrite`` would plan a compaction (slow with an API summarizer)."""
        if self.compact_at is None:
            return False
        key = conversation_key(api, headers, body)
        with self._lock:
            conv = self._convs.get(key) if key else None
            if key is None or (conv is not None and (conv.rule or conv.off)):
                return False
            tpb = conv.tokens_per_byte if conv else None
            if conv is not None and len(shapes.items(api, body) or ()) <= conv.failed_at:
                return False
        return self._over(api, body, tpb)

    def rejected(self, key: str, status: int, detail: str) -> str:
        """The upstream refused a rewritten request: rewriting goes off for ``key``."""
        reason = f"the upstream rejected the rewritten request (HTTP {status}: {detail[:200]})"
        with self._lock:
            conv = self._convs.get(key)
            if conv is not None:
                conv.rule = None
                conv.off = reason
                conv.history.append("rejected")
        message = f"{key}: {reason}; sent the original once, rewriting is off for it"
        self._say(message)
        return message

    def observe(self, key: str | None, sent_bytes: int, usage: Any) -> None:
        """Calibrate tokens per byte on the API's count of a request sent whole."""
        if key is None or not isinstance(usage, dict) or not sent_bytes:
            return
        prompt = sum(
            v
            for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
            if isinstance(v := usage.get(k), int)
        )
        if prompt <= 0:
            return
        with self._lock:
            conv = self._convs.get(key)
            if conv is not None:
                conv.tokens_per_byte = prompt / sent_bytes

    # --- used by the window --------------------------------------------------------------

    def conversations(self) -> list[dict[str, Any]]:
        """Each conversation seen: key, api, requests, its rule and whether it is off."""
        with self._lock:
            return [
                {
                    "conversation": k,
                    "api": c.api,
                    "requests": c.requests,
                    "rule": c.rule.describe() if c.rule else None,
                    "off": c.off,
                }
                for k, c in self._convs.items()
            ]

    def preview(
        self,
        key: str,
        strategy: str,
        *,
        drop_tools: tuple[str, ...] = (),
        summarizer: Summarizer | None = None,
    ) -> Plan:
        """What ``strategy`` would do to the conversation's next request (its last one plus
        what the agent appends). Raises ``CannotRewrite``."""
        with self._lock:
            conv = self._convs.get(key)
            if conv is None or conv.last_body is None:
                raise CannotRewrite(f"no request of conversation {key} seen yet")
            body, tpb = conv.last_body, conv.tokens_per_byte
        return self._plan(conv.api, body, key, strategy, tpb, drop_tools, summarizer)

    def tool_names(self, key: str) -> list[str]:
        """The tools the conversation's last request defined (for pruning them)."""
        from ctxviewer.proxy.rewrite_plan import tool_name

        with self._lock:
            conv = self._convs.get(key)
            tools = conv.last_body.get("tools") if conv and conv.last_body else None
        names = [tool_name(t) for t in tools] if isinstance(tools, list) else []
        return [n for n in names if n]

    def commit(self, p: Plan) -> None:
        """Install a previewed plan: the conversation's next requests are rewritten."""
        self._install(p.rule.conversation, p.rule, "manual")
        self._say(f"{p.rule.conversation}: rewriting on ({p.rule.describe()})")

    def undo(self, key: str) -> None:
        """Stop rewriting ``key`` (for good: ``--compact-at`` does not fire on it again)."""
        with self._lock:
            conv = self._convs.get(key)
            if conv is not None:
                conv.rule = None
                conv.off = "undone"
                conv.history.append("undo")
        self._say(f"{key}: rewriting undone")

    def rule(self, key: str) -> Rule | None:
        with self._lock:
            conv = self._convs.get(key)
            return conv.rule if conv else None

    # --- internals -----------------------------------------------------------------------

    def _over(self, api: str, body: Any, tpb: float | None) -> bool:
        if self.compact_at is None:
            return False
        return self.prompt_tokens(api, body, tpb) > self.compact_at

    def prompt_tokens(self, api: str, body: Any, tpb: float | None) -> int:
        """The prompt as the API would count it (calibrated), else the local estimate."""
        if tpb:
            return round(len(orjson.dumps(body)) * tpb)
        from ctxviewer.analysis.compaction.base import estimate_request
        from ctxviewer.proxy.rewrite_plan import parse

        try:
            return estimate_request(parse(api, body), self.estimator)
        except CannotRewrite:
            return 0

    def _plan(
        self,
        api: str,
        body: dict[str, Any],
        key: str,
        strategy: str,
        tpb: float | None,
        drop_tools: tuple[str, ...] = (),
        summarizer: Summarizer | None = None,
    ) -> Plan:
        window = self.compact_at or DEFAULT_WINDOW
        with self._lock:
            conv = self._convs.get(key)
            client = conv.client if conv else None
        return plan(
            api,
            body,
            key,
            strategy,
            self.estimator,
            thresholds(window, "shannon"),
            summarizer or self.summarizer,
            drop_tools=drop_tools,
            tokens_per_byte=tpb,
            injected=injected_markers(api, body, client),
        )

    def _install(self, key: str, rule: Rule, how: str) -> Rule:
        with self._lock:
            conv = self._convs.setdefault(key, _Conversation(rule.api))
            conv.rule = rule
            conv.off = ""
            conv.history.append(how)
        return rule

    def _say(self, message: str) -> None:
        log.info("ctxviewer proxy: %s", message)
        if self._on_event is not None:
            try:
                self._on_event(message)
            except Exception as e:  # noqa: BLE001 - a listener's bug must not stop forwarding
                log.error("ctxviewer proxy: on_event failed: %s", e)
