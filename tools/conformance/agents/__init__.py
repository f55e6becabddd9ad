"""The agents the conformance suite runs, by name: each installs from npm at a named version
and drives its scenarios (see ``base.Agent``)."""

from __future__ import annotations

from conformance.agents.base import Agent
from conformance.agents.claude_code import ClaudeCode
from conformance.agents.codex import Codex
from conformance.agents.gemini_cli import GeminiCli
from conformance.agents.qwen_code import QwenCode

AGENTS: dict[str, Agent] = {a.name: a for a in (ClaudeCode(), QwenCode(), Codex(), GeminiCli())}
