"""The rows of the saved captures' tables that are off today, and why.

``KNOWN_OFF[table key][row]`` is the reason; a row ``"skills: *"`` stands for every item of
the category. tests/core/test_conformance.py makes each entry a strict xfail (a fix makes
it pass, which fails the suite until its entry goes) and holds every other row of the table
within tolerance; ``run.py --compare`` prints the reasons beside the rows and in its
summary, and ``--known-off`` the rows off that have no entry.

Most entries are rows a log cannot match: what the agent counted is not in it (a transcript
before Claude Code 2.1.332 records no system prompt, a chat file records no request), or
the agent's number is the fake server's answer to a count call the log does not hold. The
rest say what ctxviewer gets wrong.
"""

from __future__ import annotations

# -- what a log does not hold ---------------------------------------------------------------

CC_NOT_RECORDED = (
    "not in the log: transcripts before Claude Code 2.1.332 record no system prompt, tools "
    "or memory files; ctxviewer infers them as one overhead from the first call "
    "(unrecorded_overhead)"
)
CC_REMAINDER = (
    "the transcript holds no overhead: ctxviewer's Messages are the API total less the "
    "overhead inferred from the first call, so that inference's few percent off (a few "
    "hundred tokens) land in the much smaller Messages row"
)
CC_1M_BETA = (
    "not in the log: the TUI asked for the 1M window with the context-1m beta header; a "
    "transcript records no headers, and claude-opus-4-8 has 200k without it"
)
CC_FREE = "follows the window (the row above)"
CC_DEFERRED = (
    "not in the log: Claude Code counts its deferred tools with count_tokens; a transcript "
    "holds neither those counts nor the deferred tools' schemas (they are sent by name only)"
)
CC_COUNTED_FILES = (
    "not in the log: Claude Code counts each memory file with a count_tokens call of its "
    "own, whose answer adds the message framing (the fake: 4 tokens a message, 8 of 105); "
    "the transcript holds the files' text, not those answers"
)
CC_332_COUNT404 = (
    "not in the log: count_tokens answered 404, so Claude Code 2.1.332 estimated each part "
    "itself (characters / 3, a tool group + 500) and shows Messages as what is left; the "
    "recording holds those failed calls and ctxviewer replays the estimate (that table "
    "matches), the transcript holds none"
)
CC_197_PROBES = (
    "without count_tokens Claude Code 2.1.197 counts with max_tokens: 1 probes, whose usage "
    "the fake answers as the request's JSON length / 4; the overhead the first call's usage "
    "implies is 7.5% above the sum of its categories, and the transcript holds no probe"
)
UNSENT_OUTPUT = (
    "not sent: /context all ran after /context, whose output joined the conversation; the "
    "agent counts it, but no request carried it yet, and ctxviewer shows the last request"
)
QWEN_CHAT = (
    "not in the log: qwen-code's chat file records the conversation, not the request; its "
    "system prompt, tools, memory, skills and startup context are one overhead ctxviewer "
    "infers from the first call (unrecorded_overhead)"
)
QWEN_CHAT_REMAINDER = (
    "the chat holds no overhead: ctxviewer's Messages are the API total less the overhead "
    "inferred from the first call, whose 0.6% off (about 120 tokens) is a third of this "
    "small row"
)
QWEN_015_NO_UNATTRIBUTED = (
    "qwen-code 0.15 has no Unattributed row: what its estimates leave of the API total "
    "counts as Messages, so the overhead the first call's usage implies (ctxviewer's "
    "unrecorded_overhead) is 16% above the sum of its categories, and its Messages that much "
    "larger than ctxviewer's"
)
QWEN_DEFERRED_MCP = (
    "not in the log: qwen-code 0.15 sends a deferred MCP tool by name only; the schema it "
    "counts is not in the recording"
)
GEMINI_CHAT = (
    "not in the log: Gemini CLI's chat file records neither its system prompt nor its tools; "
    "ctxviewer infers both as one overhead from the first usage (the sum row compares)"
)
CODEX_104_ROLLOUT = (
    "not in the log: Codex 0.104's rollout records no tool schemas; ctxviewer infers them "
    "from the first call's usage, which this scenario's fake scripts (USAGE=n) instead of "
    "counting, so the inferred overhead exceeds a later total and is scaled down, the "
    "recorded system prompt with it (the recording's table holds what was sent)"
)

# -- what ctxviewer gets wrong ---------------------------------------------------------------

CC_197_PROBE_TOOLS = (
    "ctxviewer off: without count_tokens 2.1.197 shows Messages as what its probe counts "
    "leave of the total; ctxviewer's reading of the same max_tokens: 1 probes puts 457 more "
    "tokens in System tools (+3.1%, within tolerance), which are 26% of Messages"
)

_CC_197_TRANSCRIPT = {
    "system_prompt": CC_NOT_RECORDED,
    "builtin_tools": CC_NOT_RECORDED,
    "mcp_tools": CC_NOT_RECORDED,
    "memory_files": CC_NOT_RECORDED,
    "mcp_tools: *": CC_NOT_RECORDED,
    "memory_files: *": CC_NOT_RECORDED,
    "messages": CC_REMAINDER,
}
_CC_197_TUI_TRANSCRIPT = {"window": CC_1M_BETA, "free_space": CC_FREE, **_CC_197_TRANSCRIPT}
_CC_332_TRANSCRIPT = {
    "mcp_tools_deferred": CC_DEFERRED,
    "builtin_tools_deferred": CC_DEFERRED,
    "memory_files": CC_COUNTED_FILES,
}
_QWEN_024_CHAT = {
    **dict.fromkeys(
        (
            "system_prompt",
            "builtin_tools",
            "memory_files",
            "skills",
            "startup_context",
            "unattributed",
            "builtin_tools: *",
            "memory_files: *",
            "skills: *",
        ),
        QWEN_CHAT,
    ),
    "messages": QWEN_CHAT_REMAINDER,
}
_QWEN_015_CHAT = {
    **dict.fromkeys(
        (
            "system_prompt",
            "builtin_tools",
            "mcp_tools",
            "memory_files",
            "skills",
            "builtin_tools: *",
            "mcp_tools: *",
            "memory_files: *",
            "skills: *",
        ),
        QWEN_CHAT,
    ),
    "messages": QWEN_015_NO_UNATTRIBUTED,
    "unrecorded_overhead": QWEN_015_NO_UNATTRIBUTED,
}
_GEMINI_CHAT = {"wire: system prompt": GEMINI_CHAT, "wire: tools": GEMINI_CHAT}

KNOWN_OFF: dict[str, dict[str, str]] = {
    "claude-code-2.1.197/count404 /context vs recording": {"messages": CC_197_PROBE_TOOLS},
    "claude-code-2.1.197/count404 /context vs transcript": {
        "system_prompt": CC_NOT_RECORDED,
        "builtin_tools": CC_NOT_RECORDED,
        "memory_files": CC_NOT_RECORDED,
        "memory_files: *": CC_NOT_RECORDED,
        "messages": CC_197_PROBES,
        "unrecorded_overhead": CC_197_PROBES,
    },
    "claude-code-2.1.197/parallel /context vs transcript": _CC_197_TRANSCRIPT,
    "claude-code-2.1.197/print /context vs transcript": _CC_197_TRANSCRIPT,
    "claude-code-2.1.197/print-direct /context vs transcript": _CC_197_TRANSCRIPT,
    "claude-code-2.1.197/tui /context all vs recording": {"messages": UNSENT_OUTPUT},
    "claude-code-2.1.197/tui /context vs transcript": _CC_197_TUI_TRANSCRIPT,
    "claude-code-2.1.197/tui /context all vs transcript": _CC_197_TUI_TRANSCRIPT,
    "claude-code-2.1.197/tui-direct /context vs transcript": _CC_197_TUI_TRANSCRIPT,
    "claude-code-2.1.197/tui-direct /context all vs transcript": _CC_197_TUI_TRANSCRIPT,
    "claude-code-2.1.332/count404 /context vs transcript": {
        **dict.fromkeys(
            (
                "system_prompt",
                "builtin_tools",
                "mcp_tools",
                "memory_files",
                "messages",
                "mcp_tools: mcp__notes-weather__get_weather",
            ),
            CC_332_COUNT404,
        ),
        "mcp_tools_deferred": CC_DEFERRED,
        "builtin_tools_deferred": CC_DEFERRED,
        "mcp_tools: mcp__notes-weather__search_notes": CC_DEFERRED,
        "memory_files: *": CC_332_COUNT404,
    },
    "claude-code-2.1.332/parallel /context vs transcript": {
        **_CC_332_TRANSCRIPT,
        "mcp_tools: *": CC_DEFERRED,
    },
    "claude-code-2.1.332/print /context vs transcript": {
        **_CC_332_TRANSCRIPT,
        "mcp_tools: mcp__notes-weather__search_notes": CC_DEFERRED,
    },
    "claude-code-2.1.332/print-direct /context vs transcript": {
        **_CC_332_TRANSCRIPT,
        "mcp_tools: mcp__notes-weather__search_notes": CC_DEFERRED,
    },
    "claude-code-2.1.332/tui /context all vs recording": {"messages": UNSENT_OUTPUT},
    "claude-code-2.1.332/tui /context vs transcript": {"memory_files": CC_COUNTED_FILES},
    "claude-code-2.1.332/tui /context all vs transcript": {
        "memory_files": CC_COUNTED_FILES,
        "messages": UNSENT_OUTPUT,
    },
    "claude-code-2.1.332/tui-direct /context vs transcript": {"memory_files": CC_COUNTED_FILES},
    "claude-code-2.1.332/tui-direct /context all vs transcript": {
        "memory_files": CC_COUNTED_FILES,
        "messages": UNSENT_OUTPUT,
    },
    "codex-0.104.0/compaction wire vs rollout": {
        "wire: system prompt": CODEX_104_ROLLOUT,
        "wire: tools": CODEX_104_ROLLOUT,
        "wire: system prompt + tools": CODEX_104_ROLLOUT,
    },
    "gemini-cli-0.61.0/direct wire vs chat": _GEMINI_CHAT,
    "gemini-cli-0.61.0/proxy wire vs chat": _GEMINI_CHAT,
    "qwen-code-0.15.10/direct /context -d vs chat": _QWEN_015_CHAT,
    "qwen-code-0.15.10/proxy /context -d vs recording": {
        "mcp_tools": QWEN_DEFERRED_MCP,
        "mcp_tools: notes-weather__search_notes": QWEN_DEFERRED_MCP,
    },
    "qwen-code-0.15.10/proxy /context -d vs chat": _QWEN_015_CHAT,
    "qwen-code-0.24.4/direct /context -d vs chat": _QWEN_024_CHAT,
    "qwen-code-0.24.4/proxy /context -d vs chat": _QWEN_024_CHAT,
}


def covers(pattern: str, row: str) -> bool:
    """Whether an entry names a row: itself, or ``"cat: *"`` any item of ``cat``."""
    if pattern.endswith(": *"):
        return row.startswith(pattern[:-1])
    return row == pattern


def why(table_key: str, row: str) -> str | None:
    """The reason a row is known to be off, or None."""
    return next(
        (
            reason
            for pattern, reason in KNOWN_OFF.get(table_key, {}).items()
            if covers(pattern, row)
        ),
        None,
    )
