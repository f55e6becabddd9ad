"""One recording, several sessions: split a log by agent and by conversation.

A proxy recording can hold any traffic that went through it: a Claude Code
session and a qwen-code one, or two Claude Code sessions. Requests are grouped
by the agent that sent them (its profile) and, where the agent names its own
session (Claude Code's ``X-Claude-Code-Session-Id``, a transcript's session
id), by that id. count_tokens calls go with their session. A log with one
group is returned as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ctxviewer.analysis.agents.identify import format_agent, identify, request_agent
from ctxviewer.analysis.agents.table import profile
from ctxviewer.model import MAIN, Request, Session

# formats that can hold several sessions (a proxy, an OpenTelemetry Collector)
FULL_BODY_FORMATS = ("recording", "claude-trace", "otel")
# agents' stores of several sessions: OpenCode's database, Aider's chat history (one
# session per run)
STORE_FORMATS = ("opencode-db", "aider-chat", "aider-llm-history")


@dataclass(frozen=True)
class SessionInfo:
    """A line of ``report --sessions``."""

    number: int
    agent: str
    conversation: str | None
    requests: int
    main: int
    first: str | None
    last: str | None
    peak: int | None

    def as_dict(self) -> dict[str, object]:
        return {
            "session": self.number,
            "agent": self.agent,
            "conversation": self.conversation,
            "requests": self.requests,
            "main_requests": self.main,
            "first": self.first,
            "last": self.last,
            "peak_prompt_tokens": self.peak,
        }


def _key(
    req: Request, fallback: dict[str, str | None], agent: str | None = None
) -> tuple[str, str | None]:
    agent = agent or request_agent(req)[0]
    conv = req.conversation
    if conv is None:  # a request without an id joins its agent's current conversation
        conv = fallback.get(agent)
    else:
        fallback[agent] = conv
    return agent, conv


def split(session: Session) -> list[Session]:
    """``session`` as one session per agent and conversation (itself when there is one)."""
    if session.format not in FULL_BODY_FORMATS + STORE_FORMATS or not session.requests:
        return [session]
    fallback: dict[str, str | None] = {}
    groups: dict[tuple[str, str | None], list[Request]] = {}
    own = format_agent(session.format)  # an agent's own store: all its requests are its
    for r in session.requests:
        groups.setdefault(_key(r, fallback, own), []).append(r)
    if len(groups) < 2:
        return [session]
    ordered = sorted(groups.items(), key=lambda kv: kv[1][0].index)
    out: list[Session] = []
    for (agent, conv), reqs in ordered:
        part = Session(
            session.path,
            session.format,
            [replace(r, index=i) for i, r in enumerate(reqs)],
            skipped=list(session.skipped) if not out else [],
            title=f"{profile(agent).label}" + (f" {conv[:8]}" if conv else ""),
            session_id=conv,
        )
        lines = (reqs[0].line or 0, reqs[-1].line or 0)
        part.token_counts = [
            c
            for c in session.token_counts
            if (
                c.conversation == conv
                if c.conversation and conv
                else lines[0] <= c.line <= lines[1] + 50
            )
        ]
        out.append(part)
    out[-1].events.extend(session.events)
    return out


def default_session(parts: list[Session]) -> int:
    """Which of ``parts`` to show by default: the one that made the last main request."""

    def last_main(s: Session) -> int:
        return max((r.line or 0 for r in s.requests if r.role == MAIN), default=-1)

    return max(range(len(parts)), key=lambda i: last_main(parts[i]))


def describe(parts: list[Session]) -> list[SessionInfo]:
    out = []
    for i, s in enumerate(parts):
        main = [r for r in s.requests if r.role == MAIN]
        prompts = [r.api_prompt_tokens for r in s.requests if r.api_prompt_tokens is not None]
        if s.requests:
            agent = format_agent(s.format) or request_agent(main[0] if main else s.requests[0])[0]
            label = profile(agent).label
        else:  # a transcript with no request yet (a summary line only): its format says
            label = identify(s).profile.label
        first = s.requests[0].timestamp if s.requests else None
        last = s.requests[-1].timestamp if s.requests else None
        out.append(
            SessionInfo(
                i,
                label,
                s.session_id,
                len(s.requests),
                len(main),
                first,
                last,
                max(prompts) if prompts else None,
            )
        )
    return out
