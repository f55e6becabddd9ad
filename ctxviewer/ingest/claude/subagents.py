"""Sub-agent transcripts joined to their Claude Code session.

Claude Code keeps each sub-agent run (the Task / Agent tool) in a file of its
own beside the session, ``<project>/<session-id>/subagents/agent-<id>.jsonl``,
and its compaction call in ``agent-acompact-<id>.jsonl``. Opening the session
reads them too: their calls join the session as sub-agent requests, in time
order, each with its agent id. A call the main transcript already holds (from
its ``progress`` records) is not counted twice.

Claude Code before 2.1.126 gave a sub-agent the deferred tools (and, with
them, the skill listing) only from its second call on: its changelog's "Fixed
deferred tools ... not being available to ... subagents on their first turn".
The sub-agent's transcript records neither; the session's records both, as
``skill_listing`` and ``deferred_tools_delta`` attachments. So a sub-agent of
such a version, read with its session (which is read for them once, whatever
the number of sub-agents) or alone beside it, gets them on its second call as
``Request.unrecorded``, rendered as the session recorded them
(``recorded_announcements``) before the sub-agent started, when they include
deferred tools. On six real 2.1.114 sub-agents the second call grew by
2,616-2,705 tokens more than its recorded text, and the session's two
attachments come to 1,645 (qwen's estimate) times Opus 4.7's ratio of 1.56
measured on the same files, 2,566.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache, partial
from pathlib import Path

import orjson

from ctxviewer.ingest.base import as_dict, request_with
from ctxviewer.ingest.claude.attachments import DEFERRED_HEAD, attachment_message
from ctxviewer.model import SUBAGENT, Message, Request, Session, Skipped

COMPACTION_PREFIX = "acompact"
COMPACTION_NOTE = (
    "Claude Code's compaction call: its prompt is the conversation it summarized "
    "(the transcript records only its last messages) and the request to summarize"
)


def sidecar_files(path: str) -> list[Path]:
    """The sub-agent files Claude Code wrote beside the session ``path``."""
    folder = Path(path).with_suffix("") / "subagents"
    try:
        return sorted(folder.glob("agent-*.jsonl")) if folder.is_dir() else []
    except OSError:
        return []


def session_of(file: Path) -> Path | None:
    """The session file a sub-agent file belongs beside (``sidecar_files`` the other way),
    or None when ``file`` is not named as one; the session file may not exist."""
    if file.parent.name != "subagents" or not (
        file.name.startswith("agent-") and file.suffix == ".jsonl"
    ):
        return None
    return file.parent.parent.with_name(file.parent.parent.name + ".jsonl")


def agent_of(file: Path) -> str:
    """'agent-a93ccab.jsonl' -> 'a93ccab'."""
    return file.stem.removeprefix("agent-")


def is_compaction(agent: str | None) -> bool:
    return agent is not None and agent.startswith(COMPACTION_PREFIX)


# The first version that gives a sub-agent its deferred tools on its first call.
ANNOUNCED_FROM_FIRST_CALL = (2, 1, 126)
ANNOUNCED = ("skill_listing", "deferred_tools_delta")
_ANNOUNCED_BYTES = tuple(f'"{t}"'.encode() for t in ANNOUNCED)
_VERSION = re.compile(r"claude-code/(\d+)\.(\d+)\.(\d+)")
UNRECORDED_NOTE = (
    "Claude Code before 2.1.126 sent a sub-agent the skill listing and the deferred "
    "tools from its second call on: the sub-agent's transcript does not hold them, "
    "its session's does (counted as they were recorded there)"
)


def recorded_announcements(session_file: Path) -> tuple[tuple[str, Message], ...]:
    """The skill listings and deferred tools ``session_file`` recorded, each with its
    time (ISO 8601, '' when the record has none) and rendered as Claude Code sent it.
    Only the attachment lines are parsed; a file that cannot be read gives none."""
    out: list[tuple[str, Message]] = []
    try:
        with open(session_file, "rb") as f:
            for raw in f:
                if b'"attachment"' not in raw or not any(t in raw for t in _ANNOUNCED_BYTES):
                    continue
                try:
                    record = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    continue
                if not isinstance(record, dict) or record.get("type") != "attachment":
                    continue
                if as_dict(record.get("attachment")).get("type") not in ANNOUNCED:
                    continue
                message, _ = attachment_message(record)
                if message is not None:
                    when = record.get("timestamp")
                    out.append((when if isinstance(when, str) else "", message))
    except OSError:
        return ()
    return tuple(out)


def _before(said: tuple[tuple[str, Message], ...], before: str | None) -> tuple[Message, ...]:
    return tuple(m for when, m in said if before is None or not when or when <= before)


def _announced_late(client: str | None) -> bool:
    """True for a Claude Code version that announced deferred tools on the second call."""
    found = _VERSION.search(client or "")
    return found is not None and tuple(map(int, found.groups())) < ANNOUNCED_FROM_FIRST_CALL


def announce(
    sub: Session,
    session_file: Path,
    recorded: Callable[[], tuple[tuple[str, Message], ...]] | None = None,
) -> Session:
    """``sub`` (one sub-agent's calls) with the announcements of its session on its
    second call (see the module doc); ``sub`` itself when the version announced them on
    the first call, the session recorded no deferred tools before the sub-agent started
    (the behaviour was seen with them), or the sub-agent made one call. ``recorded``:
    the session's ``recorded_announcements``, when the caller keeps them (one read of
    the session for all its sub-agents)."""
    calls = sub.requests
    if len(calls) < 2 or not _announced_late(calls[0].client):
        return sub
    said = recorded() if recorded is not None else recorded_announcements(session_file)
    sent = _before(said, calls[0].timestamp)
    if not any(DEFERRED_HEAD in b.text for m in sent for b in m.blocks):
        return sub
    second = calls[1]
    calls[1] = request_with(second, unrecorded=sent, notes=(*second.notes, UNRECORDED_NOTE))
    return sub


def join(session: Session, load: Callable[[Path], Session]) -> Session:
    """``session`` with the calls of its sub-agent files, in time order. A sub-agent
    file read alone gets its session's announcements (``announce``)."""
    path = Path(session.path or "")
    parent = session_of(path)
    if parent is not None:
        return announce(session, parent) if parent.is_file() else session
    files = sidecar_files(session.path or "")
    if not files:
        return session
    known: set[tuple[str, str] | None] = {r.key for r in session.requests if r.key is not None}
    added: list[Request] = []
    # the session's announcements, read once for all its sub-agents, if one needs them
    recorded = cache(partial(recorded_announcements, path))
    for file in files:
        try:
            sub = load(file)
        except Exception as e:  # noqa: BLE001 - a broken sidecar must not lose the session
            session.skipped.append(Skipped(0, f"{file.name}: {type(e).__name__}: {e}"[:200]))
            continue
        agent = agent_of(file)
        notes = (COMPACTION_NOTE,) if is_compaction(agent) else ()
        if not is_compaction(agent):
            sub = announce(sub, path, recorded)
        for r in sub.requests:
            if r.key is not None and r.key in known:
                continue
            known.add(r.key)
            added.append(
                request_with(
                    r, role=SUBAGENT, sidechain=True, agent=r.agent or agent, notes=notes + r.notes
                )
            )
        session.skipped.extend(Skipped(s.line, f"{file.name}: {s.reason}") for s in sub.skipped)
    if added:
        merged = sorted([*session.requests, *added], key=_when)
        session.requests[:] = [
            r if r.index == i else request_with(r, index=i) for i, r in enumerate(merged)
        ]
    return session


def _when(r: Request) -> str:
    return r.timestamp or ""
