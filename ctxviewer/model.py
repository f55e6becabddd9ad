"""The core model: what one API request put into the model's context window.

Frozen dataclasses only; no I/O, no Qt. Readers in ``ctxviewer.ingest`` build
these, pure functions in ``ctxviewer.analysis`` derive everything else.

Text that estimators count lives in ``Block.text`` and ``ToolDef.text``.
Structured content (tool schemas, tool calls, JSON tool results) is stored as
compact JSON serialized the way JavaScript's ``JSON.stringify`` does it, since
that is what qwen-code and Claude Code measure (see ``jsonish.js_dumps``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

# Block kinds
TEXT = "text"
THINKING = "thinking"
TOOL_USE = "tool_use"
TOOL_RESULT = "tool_result"
IMAGE = "image"
DOCUMENT = "document"
OTHER = "other"
BLOCK_KINDS = (TEXT, THINKING, TOOL_USE, TOOL_RESULT, IMAGE, DOCUMENT, OTHER)

# Content tags
MEMORY = "memory"  # CLAUDE.md / QWEN.md / AGENTS.md ... (name = path)
SKILL_BODY = "skill_body"  # a skill's SKILL.md loaded on demand
SKILL_LISTING = "skill_listing"  # the always-sent list of skills
COMPACTION_SUMMARY = "compaction_summary"
SYSTEM_REMINDER = "system_reminder"
TAGS = (MEMORY, SKILL_BODY, SKILL_LISTING, COMPACTION_SUMMARY, SYSTEM_REMINDER)

# Tool kinds
BUILTIN = "builtin"
MCP = "mcp"
SKILL = "skill"

# Request roles
MAIN = "main"
SUBAGENT = "subagent"  # a sidechain / sub-agent's own conversation
AUXILIARY = "auxiliary"  # side calls of the agent (titles, topic checks, quota probes)

# Event kinds
COMPACT_BOUNDARY = "compact_boundary"
COMPACT_SUMMARY = "compact_summary"
CONTEXT_OVERFLOW = "context_overflow"
API_ERROR = "api_error"
PROXY_UNDO = "proxy_undo"  # ctxviewer's proxy stopped rewriting: the whole history again


@dataclass(frozen=True, slots=True)
class Block:
    """One piece of content: a text, a tool call or result, an image...

    ``text`` is what estimators count; ``fixed_tokens`` replaces it for
    content that is not text (images). ``tag`` marks content that the
    breakdown files under another category (memory) or that the UI labels.
    """

    kind: str
    text: str
    tag: str | None = None
    name: str | None = None  # tool name, memory file path, skill name
    ref: str | None = None  # tool_use id (tool_use) or tool_use_id (tool_result)
    fixed_tokens: int | None = None
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a request: a role and its blocks."""

    role: str  # "user" | "assistant" | "system" | "tool" | "developer"
    blocks: tuple[Block, ...]
    id: str | None = None
    timestamp: str | None = None
    # the hash, computed once: requests repeat the same messages, and sets and dicts of
    # them (redundancy, attribution) would hash every block's text again each time
    _hash: int | None = field(default=None, init=False, repr=False, compare=False)

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash((self.role, self.blocks, self.id, self.timestamp))
            object.__setattr__(self, "_hash", h)
        return h

    @property
    def text(self) -> str:
        return "\n".join(b.text for b in self.blocks)

    @property
    def tags(self) -> frozenset[str]:
        return frozenset(b.tag for b in self.blocks if b.tag)


@dataclass(frozen=True, slots=True)
class ToolDef:
    """A tool declaration as sent to the model."""

    name: str
    kind: str  # BUILTIN | MCP | SKILL
    text: str  # compact JSON of the declaration
    server: str | None = None  # MCP server name
    description: str = ""


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts the API reported for one call.

    OpenAI's ``prompt_tokens`` includes cached tokens; readers store the
    uncached part in ``input_tokens`` and the cached part in
    ``cache_read_input_tokens`` so that ``prompt_tokens`` means the same
    thing for every API.
    """

    input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_1h_tokens: int = 0  # part of cache_creation_input_tokens
    reasoning_tokens: int = 0  # part of output_tokens

    @property
    def prompt_tokens(self) -> int:
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.output_tokens


@dataclass(frozen=True, slots=True)
class Overflow:
    """The numbers a context-overflow error states, where it states them: the prompt
    as the API counted it, the output cap the request asked for, and the limit."""

    input_tokens: int | None = None
    max_tokens: int | None = None
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened between or at requests."""

    kind: str  # COMPACT_BOUNDARY | COMPACT_SUMMARY | CONTEXT_OVERFLOW | API_ERROR | PROXY_UNDO
    timestamp: str | None = None
    pre_tokens: int | None = None
    post_tokens: int | None = None
    trigger: str | None = None  # "auto" | "manual" | "proxy" (a live compaction)
    detail: str = ""
    overflow: Overflow | None = None  # a context overflow's numbers


@dataclass(frozen=True, slots=True)
class Request:
    """One model API call: a snapshot of the context window.

    ``complete`` is True when the full request body was recorded (proxy,
    claude-trace); False for transcripts, where the system prompt and tool
    declarations were never written and ``system``/``tools`` are empty.
    """

    index: int
    model: str | None
    timestamp: str | None  # ISO 8601, UTC
    system: tuple[Block, ...]
    tools: tuple[ToolDef, ...]
    messages: tuple[Message, ...]
    usage: Usage | None
    complete: bool
    sidechain: bool = False
    role: str = MAIN
    agent: str | None = None  # sub-agent id
    api: str = "anthropic"  # anthropic | openai-chat | openai-responses | codex | gemini
    events: tuple[Event, ...] = ()
    response: Message | None = None
    message_id: str | None = None
    request_id: str | None = None
    window_hint: int | None = None  # the window the source says the agent used
    # Who sent it, as the source names it: a User-Agent ("claude-cli/2.1.197
    # (external, sdk-cli)", "QwenCode/0.15.10 (linux; x64)") or "<agent>/<version>"
    # from a transcript ("claude-code/2.1.39", "codex/0.66.0").
    client: str | None = None
    conversation: str | None = None  # the agent's own session id, where the source has one
    max_tokens: int | None = None  # the output cap the request asked for
    status: int | None = None
    line: int | None = None  # 1-based line in the source file
    # What the source knows about the prompt when it does not record it
    # (Codex, Gemini): e.g. {"instructions": 1234} estimated elsewhere.
    notes: tuple[str, ...] = ()
    # Messages the agent sent with this call that its log leaves out, known from another
    # file of the same session: Claude Code before 2.1.126 gave a sub-agent the skill
    # listing and the deferred tools on its second call; its transcript does not hold
    # them, the main session's does (``ingest.claude.subagents``). Not in ``messages``:
    # the analysis names them as a cause of that call's growth.
    unrecorded: tuple[Message, ...] = ()
    # a request made up by ctxviewer (a simulated compaction applied as a branch): its
    # usage is a local estimate, never an API count
    simulated: bool = False

    @property
    def api_prompt_tokens(self) -> int | None:
        return self.usage.prompt_tokens if self.usage is not None else None

    @property
    def failure(self) -> str | None:
        """Why the call got no answer (an HTTP error, an unreachable upstream), or None.

        A failed call has no usage: the model never read its prompt, so it is
        no point of the context's curve.
        """
        if self.usage is not None:
            return None
        return next(
            (e.detail or e.kind for e in self.events if e.kind in (API_ERROR, CONTEXT_OVERFLOW)),
            None,
        )

    @property
    def key(self) -> tuple[str, str] | None:
        """Identity of the API call, for deduplicating streamed records."""
        if self.message_id is None and self.request_id is None:
            return None
        return (self.message_id or "", self.request_id or "")


@dataclass(frozen=True, slots=True)
class TokenCount:
    """A token-counting call the agent made (``/v1/messages/count_tokens``).

    Claude Code's ``/context`` counts each category with one such call; their
    answers are the agent's own numbers. ``tokens`` is None when the call
    failed (the agent then falls back to ``max_tokens: 1`` probes)."""

    line: int
    timestamp: str | None
    model: str | None
    texts: tuple[str, ...]  # the text of each message / system block counted
    tools: tuple[ToolDef, ...]
    tokens: int | None
    conversation: str | None = None


@dataclass(frozen=True, slots=True)
class Skipped:
    """A line of the input that was not read, and why."""

    line: int
    reason: str


@dataclass
class Session:
    """A loaded session: its requests, events, skipped lines and notes."""

    path: str | None
    format: str
    requests: list[Request] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)  # events after the last request
    title: str | None = None
    session_id: str | None = None
    token_counts: list[TokenCount] = field(default_factory=list)
    cwd: str | None = None  # the agent's working directory, where the log records it
    # What analyses derive once per session and may reuse (the estimators' counts by
    # content, ``analysis.tokens.estimators.for_session``): dropped with the session.
    caches: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def model(self) -> str | None:
        """The model of most main-role requests (falls back to any request)."""
        main = [r.model for r in self.requests if r.model and r.role == MAIN]
        pool = main or [r.model for r in self.requests if r.model]
        return Counter(pool).most_common(1)[0][0] if pool else None

    @property
    def complete(self) -> bool:
        return bool(self.requests) and all(r.complete for r in self.requests)

    @property
    def window_hint(self) -> int | None:
        hints = [r.window_hint for r in self.requests if r.window_hint]
        return max(hints) if hints else None

    def resolve_index(self, which: int | str | None) -> int:
        """A request index from user input: ``None``/``'last'`` is the last main
        request, negative numbers count from the end. Raises ``IndexError`` or
        ``ValueError`` with a message for people."""
        reqs = self.requests
        if not reqs:
            raise IndexError("the session has no requests")
        if which is None or which == "last":
            last = self.last_main_index()
            return last if last is not None else len(reqs) - 1
        try:
            i = int(which)
        except ValueError:
            raise ValueError(f"not a request index: {which!r}") from None
        if i < 0:
            i += len(reqs)
        if not 0 <= i < len(reqs):
            raise IndexError(f"request {which} out of range (0..{len(reqs) - 1})")
        return i

    def last_main_index(self) -> int | None:
        for r in reversed(self.requests):
            if r.role == MAIN:
                return r.index
        return self.requests[-1].index if self.requests else None
