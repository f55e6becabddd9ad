"""Split a session into conversations: the main chain and each sub-agent run.

Cache prefixes and carried content only make sense within one conversation.
Sub-agent requests are grouped by their ``agent`` id; without one (older
Claude Code transcripts) by their first message, which is the task prompt
the parent sent, so parallel runs stay apart even when interleaved.
Auxiliary side calls (titles, topic checks) are one conversation each.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxviewer.model import AUXILIARY, MAIN, Message, Request, Session


@dataclass(frozen=True)
class Conversation:
    """The requests of one conversation of a session (main, a sub-agent, a side call)."""

    label: str  # "main", "agent <id>", "sidechain 2", "auxiliary 5"
    role: str
    agent: str | None
    requests: tuple[Request, ...]

    @property
    def indices(self) -> tuple[int, ...]:
        return tuple(r.index for r in self.requests)


def _first_message(r: Request) -> Message | None:
    return r.messages[0] if r.messages else None


def conversations(session: Session) -> list[Conversation]:
    """Main chain first, then sub-agent runs and auxiliary calls in order of first request."""
    main: list[Request] = []
    groups: dict[tuple[str, object], list[Request]] = {}
    for r in session.requests:
        if r.role == MAIN and not r.sidechain:
            main.append(r)
        elif r.role == AUXILIARY:
            groups[("aux", r.index)] = [r]
        else:
            key: tuple[str, object] = (
                ("agent", r.agent) if r.agent else ("first", _first_message(r))
            )
            groups.setdefault(key, []).append(r)
    out = [Conversation("main", MAIN, None, tuple(main))] if main else []
    n = 0
    for key, reqs in sorted(groups.items(), key=lambda kv: kv[1][0].index):
        first = reqs[0]
        if key[0] == "aux":
            label = f"auxiliary {first.index}"
        elif first.agent:
            label = f"agent {first.agent}"
        else:
            n += 1
            label = f"sidechain {n}"
        out.append(Conversation(label, first.role, first.agent, tuple(reqs)))
    return out
