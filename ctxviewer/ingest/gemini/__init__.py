"""Gemini CLI: chat files (the JSON document and the JSONL layout)."""
