"""Local token estimators, in a registry (docs/estimators.md).

Each estimator counts one text. Counts are cached per estimator by content:
real traces repeat the whole history in every request, so each distinct text
is counted once. ``message_overhead`` is added once per message by the
callers that count messages (only ``shannon`` has one).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the window's toolbar lists the estimators before any session is read
    from ctxviewer.model import Block, Message, Session, ToolDef

_CJK = r"[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]"  # compiled on first use (3 ms)
_CODE = re.compile(r"^```|function |class |const ")
_SPECIAL = re.compile(r"[{}\[\]().,;:!?<>]")


def _non_ascii(text: str) -> int:
    return 0 if text.isascii() else len(text) - len(text.encode("ascii", "ignore"))


def _utf16_len(text: str) -> int:
    """JavaScript's ``string.length``."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def qwen(text: str) -> int:
    """qwen-code: ceil(ascii/4 + non_ascii*1.5), over code points (its ``estimateTokens``)."""
    non_ascii = _non_ascii(text)
    return math.ceil((len(text) - non_ascii) / 4 + non_ascii * 1.5)


def chars4(text: str) -> int:
    """ceil(length / 4), length in UTF-16 units like JavaScript (qwen-code's compaction code)."""
    return math.ceil(_utf16_len(text) / 4)


def shannon(text: str) -> int:
    """Shannon: (runes // 4) * 1.1, plus 5 per message (Go integer math)."""
    return int((len(text) // 4) * 1.1)


def heuristic(text: str) -> int:
    """3.5 chars/token; 2.0 with CJK; 3.0 for code; + 0.1/punct + 0.5/newline.

    Proposed in an analysis of Claude Code's context handling (docs/estimators.md)."""
    if not text.isascii() and re.search(_CJK, text):  # re caches the compiled pattern
        per = 2.0
    elif _CODE.search(text):
        per = 3.0
    else:
        per = 3.5
    tokens = _utf16_len(text) / per
    tokens += len(_SPECIAL.findall(text)) * 0.1
    tokens += text.count("\n") * 0.5
    return math.ceil(tokens)


def _bpe(name: str) -> Callable[[str], int]:
    def count(text: str) -> int:
        from ctxviewer.analysis.tokens.bpe import encoding  # loaded on first use (~0.3 s)

        return len(encoding(name).encode_ordinary(text))

    return count


@dataclass
class Estimator:
    """A named counting rule with a per-content cache."""

    name: str
    label: str
    rule: Callable[[str], int]
    message_overhead: int = 0
    description: str = ""
    _cache: dict[str, int] = field(default_factory=dict, repr=False)
    _messages: dict[Message, int] = field(default_factory=dict, repr=False)
    _prefixes: list[tuple[tuple[Message, ...], int]] = field(default_factory=list, repr=False)

    def count(self, text: str) -> int:
        if not text:
            return 0
        cached = self._cache.get(text)
        if cached is None:
            cached = self._cache[text] = self.rule(text)
        return cached

    def block(self, block: Block) -> int:
        if block.fixed_tokens is not None:
            return block.fixed_tokens
        return self.count(block.text)

    def message(self, message: Message) -> int:
        """All blocks of a message plus the per-message overhead (cached per message)."""
        cached = self._messages.get(message)
        if cached is None:
            cached = sum(self.block(b) for b in message.blocks) + self.message_overhead
            self._messages[message] = cached
        return cached

    def messages(self, messages: Iterable[Message]) -> int:
        """Sum of ``message`` over ``messages``.

        A tuple that extends one counted recently (the next request of a trace
        repeats the history) costs only its new messages: the shared prefix is
        checked with a tuple comparison, which short-circuits on identical
        (interned) messages.
        """
        if not isinstance(messages, tuple):
            return sum(self.message(m) for m in messages)
        start, total = 0, 0
        for prev, prev_total in reversed(self._prefixes):
            n = len(prev)
            if n <= len(messages) and n > start and messages[:n] == prev:
                start, total = n, prev_total
                break
        total += sum(self.message(m) for m in messages[start:])
        self._prefixes.append((messages, total))
        if len(self._prefixes) > 8:
            del self._prefixes[0]
        return total

    def tool(self, tool: ToolDef) -> int:
        return self.count(tool.text)

    def clear_cache(self) -> None:
        self._cache.clear()
        self._messages.clear()
        self._prefixes.clear()

    def fresh(self) -> Estimator:
        """The same rule with empty caches of its own."""
        return replace(self, _cache={}, _messages={}, _prefixes=[])


_REGISTRY: dict[str, Estimator] = {}


def register(estimator: Estimator) -> Estimator:
    _REGISTRY[estimator.name] = estimator
    return estimator


register(
    Estimator(
        "qwen",
        "qwen-code (ASCII/4 + non-ASCII x1.5)",
        qwen,
        description="qwen-code's estimateTokens",
    )
)
register(
    Estimator(
        "chars4", "chars / 4", chars4, description="ceil(length/4), as qwen-code's compaction code"
    )
)
register(
    Estimator(
        "shannon",
        "Shannon (runes/4 + 5/msg) x1.1",
        shannon,
        message_overhead=6,
        description="Shannon's estimator",
    )
)
register(
    Estimator(
        "heuristic",
        "heuristic (3.5 chars/token, CJK, code)",
        heuristic,
        description="content-aware heuristic (characters per token by content)",
    )
)
register(
    Estimator(
        "cl100k", "tiktoken cl100k_base", _bpe("cl100k_base"), description="GPT-4 BPE, offline"
    )
)
register(
    Estimator(
        "o200k", "tiktoken o200k_base", _bpe("o200k_base"), description="GPT-4o/GPT-5 BPE, offline"
    )
)

DEFAULT = "qwen"


def names() -> list[str]:
    """Names of the registered local estimators."""
    return list(_REGISTRY)


def for_session(session: Session, name: str) -> Estimator:
    """Estimator ``name`` with caches that live as long as ``session``: every analysis
    of one session shares its counts, and a closed session takes its text along.
    (The registry's own instances, ``get_estimator``, are for one-off counts.)"""
    store = session.caches.setdefault("estimators", {})
    est: Estimator | None = store.get(name)
    if est is None:
        est = store[name] = get_estimator(name).fresh()
    return est


def get_estimator(name: str) -> Estimator:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown estimator {name!r} (known: {', '.join(_REGISTRY)})") from None
