"""Codex CLI: rollout files and the Responses API items they hold."""
