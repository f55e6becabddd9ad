"""Context window size of a model.

Order of precedence: a user override, then what the source says the agent
used (Codex's ``model_context_window``, Claude Code's 1M beta header), then
the ``[1m]`` suffix rule, then this table, then a default.
"""

from __future__ import annotations

DEFAULT_WINDOW = 200_000

# (prefix of the lower-cased model name, window). First match wins, so more
# specific prefixes come first.
KNOWN_WINDOWS: tuple[tuple[str, int], ...] = (
    ("claude-", 200_000),
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192),
    ("gpt-3.5", 16_385),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("codex-", 400_000),
    ("gemini-", 1_048_576),
    ("qwen3-coder", 262_144),
    ("qwen3", 131_072),
    ("qwen", 131_072),
    ("deepseek", 128_000),
    ("glm-", 131_072),
    ("kimi-k2", 262_144),
)


def _strip_provider(model: str) -> str:
    """'anthropic/claude-x' or 'openrouter/openai/gpt-4o' -> the last part."""
    return model.rsplit("/", 1)[-1]


def _lookup(model: str | None, hint: int | None, override: int | None) -> tuple[int, str]:
    if override:
        return int(override), "override"
    if hint:
        return int(hint), "recorded"
    if not model:
        return DEFAULT_WINDOW, "default"
    name = _strip_provider(model.strip().lower())
    if "[1m]" in name:
        return 1_000_000, "[1m] suffix"
    for prefix, window in KNOWN_WINDOWS:
        if name.startswith(prefix) or f"-{prefix}" in name:
            return window, "model table"
    return DEFAULT_WINDOW, "default"


def context_window(model: str | None, hint: int | None = None, override: int | None = None) -> int:
    """The window the agent works with for ``model``."""
    return _lookup(model, hint, override)[0]


def window_source(model: str | None, hint: int | None = None, override: int | None = None) -> str:
    """Where ``context_window`` took its number from, for the UI."""
    return _lookup(model, hint, override)[1]


# How each agent's own percentages relate to ctxviewer's (always % of the full
# window), so sessions of different agents compare on one scale.
BASELINES = {
    "codex": "Codex's own '% left' counts against ~95% of the window minus a 12,000-token "
    "baseline; ctxviewer shows % of the full window, like for every agent",
    "gemini": "Gemini CLI records tokens per message, not a percentage; ctxviewer shows % of "
    "the model's full window, like for every agent",
}


def baseline_note(api: str, client: str | None = None) -> str | None:
    """One line on how the agent's own numbers relate to ctxviewer's, where they differ.

    ``api`` is the request's shape; a client that names another agent speaking
    that shape (qwen-code writes Gemini-shaped transcripts) gets no note.
    """
    if client and not client.lower().startswith(api):
        return None
    return BASELINES.get(api)
