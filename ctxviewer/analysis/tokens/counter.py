"""What counts a prompt: the protocol every counter meets, local or remote.

A local estimator (``compare.table.LocalCounter``) and the API's ``count_tokens``
(``tokens.anthropic.AnthropicCounter``) count a whole request and each of its
categories the same way, so ``compare`` scores them side by side.
"""

from __future__ import annotations

from typing import Protocol

from ctxviewer.model import Request

CATEGORIES = ("system_prompt", "builtin_tools", "mcp_tools", "skills", "memory_files", "messages")


class PromptCounter(Protocol):
    """Counts a whole request and its categories (local estimators, the API)."""

    @property
    def name(self) -> str: ...

    def prompt(self, req: Request) -> int | None: ...

    def categories(self, req: Request) -> dict[str, int | None]: ...
