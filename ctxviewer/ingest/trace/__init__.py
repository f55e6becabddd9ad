"""API traces: ctxviewer's own recordings and claude-trace files, one exchange (request + response) a line."""
