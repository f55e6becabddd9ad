"""Sub-agent transcripts joined to their Claude Code session.

Claude Code keeps each sub-agent run (the Task / Agent tool) in a file of its
own beside the session, ``<project>/<session-id>/subagents/agent-<id>.jsonl``,
and its compaction call in ``agent-acompact-<id>.jsonl``. Opening the session
reads them too: their calls join the session as sub-agent requests, in time
order, each with its agent id. A call the main transcript already holds (from
its ``progress`` records) is not counted twice.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ctxviewer.ingest.base import request_with
from ctxviewer.model import SUBAGENT, Request, Session, Skipped

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


def join(session: Session, load: Callable[[Path], Session]) -> Session:
    """``session`` with the calls of its sub-agent files, in time order."""
    files = sidecar_files(session.path or "")
    if not files:
        return session
    known: set[tuple[str, str] | None] = {r.key for r in session.requests if r.key is not None}
    added: list[Request] = []
    for file in files:
        try:
            sub = load(file)
        except Exception as e:  # noqa: BLE001 - a broken sidecar must not lose the session
            session.skipped.append(Skipped(0, f"{file.name}: {type(e).__name__}: {e}"[:200]))
            continue
        agent = agent_of(file)
        notes = (COMPACTION_NOTE,) if is_compaction(agent) else ()
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
