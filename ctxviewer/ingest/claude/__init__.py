"""Claude Code: session transcripts, their attachments, sub-agent progress and
sub-agent files. The test that recognises a transcript; the reader is
``claude.transcript``, and a session brings its sub-agent files along
(``claude.subagents.join``)."""

from __future__ import annotations

from ctxviewer.ingest.base import Format, Head

_CLAUDE_TYPES = ("user", "assistant", "system", "progress", "file-history-snapshot", "summary")


def claude_code(head: Head) -> bool:
    for r in head.records:
        if "sessionId" in r and r.get("type") in _CLAUDE_TYPES:
            return True
        if r.get("type") == "summary" and "leafUuid" in r:
            return True
        if r.get("type") == "file-history-snapshot" and "messageId" in r:
            return True
    return False


FORMAT = Format(
    "claude-code",
    "Claude Code transcript",
    "~/.claude/projects/**/*.jsonl session transcripts",
    False,
    claude_code,
    "ctxviewer.ingest.claude.transcript",
    companions="ctxviewer.ingest.claude.subagents:join",
)
