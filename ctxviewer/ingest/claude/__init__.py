"""Claude Code: session transcripts, their attachments, sub-agent progress and sub-agent files."""
