"""Which agent wrote a log, and which version: from the format, the client the
requests name (User-Agent, transcript version), the system prompt and the tool
names, in that order of trust."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from ctxviewer.analysis.agents.table import Era, Profile, Version, parse_version, profile
from ctxviewer.model import AUXILIARY, MAIN, Request, Session

# Formats whose reader says which agent wrote them.
_FORMATS = {
    "claude-code": "claude-code",
    "codex": "codex",
    "gemini-cli": "gemini-cli",
    "gemini-cli-jsonl": "gemini-cli",
    "qwen-code": "qwen-code",
    "opencode-db": "opencode",
    "opencode-session": "opencode",
    "aider-chat": "aider",
    "aider-llm-history": "aider",
}
# Client names (User-Agent product token, or "<agent>/<version>" set by a transcript reader).
_CLIENTS = (
    (re.compile(r"^(claude-cli|claude-code)/", re.I), "claude-code"),
    (re.compile(r"^(qwencode|qwen-code)/", re.I), "qwen-code"),
    # codex_cli_rs, codex_vscode, codex_exec, codex-tui, codex (a rollout's "codex/<version>")
    (re.compile(r"^codex(?:[_-][a-z_]+)?/", re.I), "codex"),
    # GeminiCLI, GeminiCLI-tui (GeminiCLI-<client name>), gemini-cli
    (re.compile(r"^(geminicli(?:-[\w-]+)?|gemini-cli)/", re.I), "gemini-cli"),
    (re.compile(r"^cline/", re.I), "cline"),  # Cline and Roo Code task readers
    (re.compile(r"^roo-code/", re.I), "roo-code"),
)
# The API an unknown client speaks -> the generic profile of that API
_GENERIC = {"anthropic": "anthropic-client", "gemini": "gemini-client"}
# What an agent's own system prompt or tools give away when the client is not named.
_PROMPTS = (
    ("cc_entrypoint=", "claude-code"),
    ("You are Claude Code", "claude-code"),
    ("Claude Agent SDK", "claude-code"),
    ("You are Qwen Code", "qwen-code"),
    ("You are Codex", "codex"),
    ("You are Gemini CLI", "gemini-cli"),
)
_TOOLS = (
    (frozenset({"Bash", "Read", "Edit"}), "claude-code"),
    (frozenset({"run_shell_command", "read_file", "todo_write"}), "qwen-code"),
    (frozenset({"run_shell_command", "read_file", "write_todos"}), "gemini-cli"),
    (frozenset({"shell", "apply_patch", "update_plan"}), "codex"),
)
_ENTRYPOINT = re.compile(r"\((?:external|internal)?,?\s*([\w-]+)\)")


@dataclass(frozen=True)
class Identity:
    """The agent of a session (or of one request)."""

    profile: Profile
    version: Version | None
    era: Era
    evidence: str  # how it was recognised, for people
    entrypoint: str | None = None  # Claude Code: "cli" (interactive) or "sdk-cli" (print mode)

    @property
    def label(self) -> str:
        v = ".".join(map(str, self.version)) if self.version else None
        return f"{self.profile.label} {v}" if v else self.profile.label

    @property
    def rules_note(self) -> str | None:
        """Where the version is newer than the rules ctxviewer knows, one line saying so
        (and whose rules stand in); None otherwise."""
        return self.profile.newer_than_rules(self.version)

    @property
    def interactive(self) -> bool | None:
        return None if self.entrypoint is None else self.entrypoint == "cli"


def format_agent(fmt: str) -> str | None:
    """The profile of the agent whose own log ``fmt`` is (None for API traces)."""
    return _FORMATS.get(fmt)


@lru_cache(maxsize=256)  # a session has a handful of distinct clients, seen per request
def _from_client(client: str | None) -> str | None:
    return next((pid for pattern, pid in _CLIENTS if client and pattern.match(client)), None)


def _from_content(req: Request) -> tuple[str | None, str]:
    text = "\n".join(b.text[:4000] for b in req.system)
    if not text and req.messages and req.messages[0].role in ("system", "developer"):
        text = req.messages[0].text[:4000]
    for needle, pid in _PROMPTS:
        if needle in text:
            return pid, f"system prompt ({needle!r})"
    names = {t.name for t in req.tools}
    for needed, pid in _TOOLS:
        if needed <= names:
            return pid, f"tool names ({', '.join(sorted(needed))})"
    return None, ""


def request_agent(req: Request) -> tuple[str, str]:
    """(profile id, evidence) of one full-body request."""
    pid = _from_client(req.client)
    if pid:
        return pid, f"client {req.client!r}"
    pid, why = _from_content(req)
    if pid:
        return pid, why
    generic = _GENERIC.get(req.api, "openai-client")
    return generic, f"{req.api} API, no known agent"


def _version(requests: Iterable[Request]) -> Version | None:
    clients = {r.client for r in requests}
    versions = [v for c in clients if (v := parse_version(_client_version(c)))]
    return max(versions) if versions else None


def _client_version(client: str | None) -> str | None:
    if not client or "/" not in client:
        return None
    words = client.split("/", 1)[1].split()  # "claude-code/" (no version) has none
    return words[0] if words else None


def _entrypoint(requests: Iterable[Request]) -> str | None:
    for r in requests:
        if r.client and (m := _ENTRYPOINT.search(r.client)):
            return m.group(1).lower()
        for b in r.system[:1]:  # "x-anthropic-billing-header: cc_version=…; cc_entrypoint=cli;"
            if (at := b.text.find("cc_entrypoint=")) != -1:
                return b.text[at + 14 :].split(";", 1)[0].strip().lower()
    return None


def identify(session: Session, requests: list[Request] | None = None) -> Identity:
    """The agent that wrote ``session`` (or the given subset of its requests)."""
    reqs = session.requests if requests is None else requests
    main = [r for r in reqs if r.role != AUXILIARY] or reqs
    pid = _FORMATS.get(session.format)
    evidence = f"{session.format} log"
    if pid is None:
        votes: Counter[str] = Counter()
        why: dict[str, str] = {}
        for r in main[:64]:
            rid, reason = request_agent(r)
            votes[rid] += 3 if r.role == MAIN else 1
            why.setdefault(rid, reason)
        pid = votes.most_common(1)[0][0] if votes else "anthropic-client"
        evidence = why.get(pid, "no requests")
    prof = profile(pid)
    by_format = pid == _FORMATS.get(session.format)
    mine = [r for r in main if by_format or _from_client(r.client) in (pid, None)]
    version = _version(r for r in mine if by_format or _from_client(r.client) == pid)
    date = next((r.timestamp for r in reqs if r.timestamp), None)
    return Identity(prof, version, prof.era(version, date), evidence, _entrypoint(mine[:8]))
