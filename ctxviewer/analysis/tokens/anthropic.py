"""The ``anthropic`` estimator: the API's own ``messages.count_tokens``.

Needs ``ANTHROPIC_API_KEY`` or ``ANTHROPIC_BASE_URL``. The request body is
rebuilt from the model objects, which is an approximation of what the agent
sent: system text blocks; tools from ``ToolDef.text``; messages with text,
tool_use (``input`` = the parsed JSON) and tool_result blocks. Thinking blocks
are dropped (they need signatures and earlier turns' thinking is not billed),
images and documents become a short text placeholder, empty texts are
skipped, and messages of roles other than user/assistant are sent as user.

Results are cached on disk by a hash of the exact body, so the same content
is never asked twice (``$CTXVIEWER_HOME/cache`` or
``$XDG_CACHE_HOME/ctxviewer``). Calls run on a small thread pool; a 429 waits
``retry-after`` seconds (capped) and retries, 5xx and connection errors retry
with backoff, and a request that still fails is reported as missing.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ctxviewer.analysis.tokens.counter import CATEGORIES
from ctxviewer.analysis.tokens.registry import ANTHROPIC
from ctxviewer.model import MCP, MEMORY, SKILL, Block, Message, Request

NAME = ANTHROPIC
_PLACEHOLDER = [{"role": "user", "content": "."}]


def cache_path() -> Path:
    home = os.environ.get("CTXVIEWER_HOME")
    if home:
        return Path(home) / "cache" / "anthropic_count.json"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ctxviewer" / "anthropic_count.json"


class DiskCache:
    """body hash -> input_tokens, in one JSON file written atomically."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or cache_path()
        self._lock = threading.Lock()
        try:
            self._data: dict[str, int] = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self._data = {}
        self._dirty = False

    def get(self, key: str) -> int | None:
        with self._lock:
            return self._data.get(key)

    def put(self, key: str, value: int) -> None:
        with self._lock:
            self._data[key] = value
            self._dirty = True

    def save(self) -> None:
        with self._lock:
            if not self._dirty:
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(self._data))
            tmp.replace(self.path)
            self._dirty = False


def _block(b: Block) -> dict[str, Any] | None:
    if b.kind == "tool_use":
        try:
            args = json.loads(b.text) if b.text else {}
        except ValueError:
            args = {"input": b.text}
        return {
            "type": "tool_use",
            "id": b.ref or "toolu_0",
            "name": b.name or "tool",
            "input": args if isinstance(args, dict) else {"input": args},
        }
    if b.kind == "tool_result":
        out: dict[str, Any] = {"type": "tool_result", "tool_use_id": b.ref or "toolu_0"}
        if b.text:
            out["content"] = b.text
        if b.is_error:
            out["is_error"] = True
        return out
    if b.kind == "thinking":
        return None
    if b.kind in ("image", "document"):
        return {"type": "text", "text": f"[{b.kind}]"}
    return {"type": "text", "text": b.text} if b.text else None


def _messages(messages: Iterable[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in messages:
        blocks = [x for b in m.blocks if (x := _block(b)) is not None]
        if blocks:
            out.append(
                {"role": "assistant" if m.role == "assistant" else "user", "content": blocks}
            )
    return out or list(_PLACEHOLDER)


def _tool(text: str) -> dict[str, Any]:
    declaration: dict[str, Any] = json.loads(text)  # a ToolDef's text: its JSON object
    return declaration


def request_body(req: Request) -> dict[str, Any]:
    """A count_tokens body for the whole request (see the module doc)."""
    body: dict[str, Any] = {
        "model": req.model or "claude-sonnet-4-6",
        "messages": _messages(req.messages),
    }
    system = [{"type": "text", "text": b.text} for b in req.system if b.text]
    if system:
        body["system"] = system
    if req.tools:
        body["tools"] = [_tool(t.text) for t in req.tools]
    return body


def category_bodies(req: Request) -> dict[str, dict[str, Any]]:
    """One body per category; its count minus the ``empty`` body's is the category."""
    model = req.model or "claude-sonnet-4-6"

    def body(
        system: Sequence[Block] = (),
        tools: Iterable[str] = (),
        messages: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        out: dict[str, Any] = {"model": model, "messages": messages or list(_PLACEHOLDER)}
        sys_blocks = [{"type": "text", "text": b.text} for b in system if b.text]
        if sys_blocks:
            out["system"] = sys_blocks
        tl = [_tool(t) for t in tools]
        if tl:
            out["tools"] = tl
        return out

    memory = [b for b in req.system if b.tag == MEMORY] + [
        b for m in req.messages for b in m.blocks if b.tag == MEMORY
    ]
    plain_messages = [
        Message(m.role, tuple(b for b in m.blocks if b.tag != MEMORY)) for m in req.messages
    ]
    return {
        "empty": body(),
        "system_prompt": body(system=[b for b in req.system if b.tag != MEMORY]),
        "builtin_tools": body(tools=[t.text for t in req.tools if t.kind not in (MCP, SKILL)]),
        "mcp_tools": body(tools=[t.text for t in req.tools if t.kind == MCP]),
        "skills": body(tools=[t.text for t in req.tools if t.kind == SKILL]),
        "memory_files": body(system=memory),
        "messages": body(messages=_messages(plain_messages)),
    }


def body_key(body: Mapping[str, Any]) -> str:
    return hashlib.sha256(
        json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()


class CountFailed(Exception):
    pass


class AnthropicCounter:
    """``PromptCounter`` backed by ``messages.count_tokens`` (see the module doc)."""

    name = NAME

    def __init__(
        self,
        client: Any,
        cache: DiskCache | None = None,
        workers: int = 4,
        retries: int = 3,
        max_wait: float = 30.0,
        backoff: float = 0.5,
    ) -> None:
        self.client = client
        self.cache = cache or DiskCache()
        self.workers = workers
        self.retries = retries
        self.max_wait = max_wait
        self.backoff = backoff
        self.errors: dict[str, str] = {}  # body key -> last error
        self.calls = 0  # API calls made (cache misses)
        self._lock = threading.Lock()

    @classmethod
    def from_env(cls, **kwargs: Any) -> AnthropicCounter:
        from ctxviewer.errors import UsageError

        key = os.environ.get("ANTHROPIC_API_KEY")
        base = os.environ.get("ANTHROPIC_BASE_URL")
        if not key and not base:
            raise UsageError(
                "the anthropic estimator needs the API: set ANTHROPIC_API_KEY or "
                "ANTHROPIC_BASE_URL (a proxy that holds the key)"
            )
        import anthropic

        client = anthropic.Anthropic(api_key=key or "none", base_url=base or None, max_retries=0)
        return cls(client, **kwargs)

    # -- one body ----------------------------------------------------------------
    def count_body(self, body: dict[str, Any]) -> int | None:
        key = body_key(body)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        try:
            n = self._call(body)
        except CountFailed as e:
            with self._lock:
                self.errors[key] = str(e)
            return None
        self.cache.put(key, n)
        return n

    def _call(self, body: dict[str, Any]) -> int:
        import anthropic

        last = ""
        for attempt in range(self.retries + 1):
            with self._lock:
                self.calls += 1
            try:
                return int(self.client.messages.count_tokens(**body).input_tokens)
            except anthropic.RateLimitError as e:
                last = f"429 {e.message}"
                wait = _retry_after(e.response.headers, self.backoff * 2**attempt)
            except anthropic.APIStatusError as e:
                if e.status_code < 500:
                    raise CountFailed(f"{e.status_code} {e.message}") from None
                last = f"{e.status_code} {e.message}"
                wait = self.backoff * 2**attempt
            except anthropic.APIConnectionError as e:
                last = f"connection error: {e}"
                wait = self.backoff * 2**attempt
            if attempt < self.retries:
                time.sleep(min(wait, self.max_wait))
        raise CountFailed(f"gave up after {self.retries + 1} attempts: {last}")

    # -- requests ----------------------------------------------------------------
    def prefetch(
        self,
        requests: Iterable[Request],
        progress: Callable[[int, int], None] | None = None,
        categories: Request | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> None:
        """Count every distinct body of ``requests`` (and the categories of one) in parallel."""
        bodies: dict[str, dict[str, Any]] = {}
        for r in requests:
            b = request_body(r)
            bodies.setdefault(body_key(b), b)
        if categories is not None:
            for b in category_bodies(categories).values():
                bodies.setdefault(body_key(b), b)
        todo = [b for k, b in bodies.items() if self.cache.get(k) is None]
        total, done = len(todo), 0
        try:
            with ThreadPoolExecutor(max_workers=self.workers) as pool:
                futures = [pool.submit(self._maybe_count, b, cancelled) for b in todo]
                for f in futures:
                    f.result()
                    done += 1
                    if progress is not None:
                        progress(done, total)
        finally:
            self.cache.save()

    def _maybe_count(self, body: dict[str, Any], cancelled: Callable[[], bool] | None) -> None:
        if cancelled is not None and cancelled():
            return
        self.count_body(body)

    def prompt(self, req: Request) -> int | None:
        return self.count_body(request_body(req))

    def categories(self, req: Request) -> dict[str, int | None]:
        counts = {k: self.count_body(b) for k, b in category_bodies(req).items()}
        empty = counts.pop("empty")
        if empty is None:
            return dict.fromkeys(CATEGORIES)
        out: dict[str, int | None] = {}
        for c in CATEGORIES:
            v = counts[c]
            # the placeholder message is part of every body but the messages one
            out[c] = None if v is None else max(0, v - (0 if c == "messages" else empty))
        return out

    def error(self, req: Request) -> str | None:
        return self.errors.get(body_key(request_body(req)))


def _retry_after(headers: Mapping[str, str], default: float) -> float:
    try:
        return float(headers.get("retry-after", default))
    except (TypeError, ValueError):
        return default
