"""OpenCode 1.1 and earlier: one JSON file per session, message and part under
``$XDG_DATA_HOME/opencode/storage/``:

- ``session/<project>/<ses>.json``, ``message/<ses>/<msg>.json``,
  ``part/<msg>/<prt>.json`` (1.x);
- ``session/info/<ses>.json``, ``session/message/<ses>/<msg>.json``,
  ``session/part/<ses>/<msg>/<prt>.json`` (0.x).

The session file is what is opened; its messages and parts are read from their
folders, and the sessions whose ``parentID`` is this one (its sub-agents) with them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

from ctxviewer.ingest.base import Head, Item, LoadError
from ctxviewer.ingest.opencode import SESSION, opencode_session
from ctxviewer.ingest.opencode.session import SessionBuilder, Stored
from ctxviewer.model import Skipped

MAX_FILES = 200_000  # message and part files read for one session at most


def _json(path: Path) -> Any:
    try:
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None


def _layout(path: Path) -> tuple[Path, Path, bool]:
    """(storage root, session folder, 0.x layout) of a session file."""
    folder = path.parent
    if folder.name == "info" and folder.parent.name == "session":  # 0.x
        return folder.parent, folder, True
    return folder.parent.parent, folder, False


def _messages(
    root: Path, ses: str, old: bool
) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    folder = root / "message" / ses
    messages = [
        m for f in sorted(folder.glob("*.json"))[:MAX_FILES] if isinstance(m := _json(f), dict)
    ]
    parts: dict[str, list[dict[str, Any]]] = {}
    for m in messages:
        mid = str(m.get("id"))
        where = root / "part" / ses / mid if old else root / "part" / mid
        parts[mid] = [
            p for f in sorted(where.glob("*.json"))[:MAX_FILES] if isinstance(p := _json(f), dict)
        ]
    return messages, parts


def read_document(path: str) -> dict[str, Any]:
    p = Path(path)
    info = _json(p)
    if not isinstance(info, dict):
        raise LoadError(f"{path}: not valid JSON")
    root, folder, old = _layout(p)
    sessions = [info]
    for other in sorted(folder.glob("ses_*.json"))[:MAX_FILES]:  # its sub-agents' sessions
        if (
            other != p
            and isinstance(s := _json(other), dict)
            and s.get("parentID") == info.get("id")
        ):
            sessions.append(s)
    out = []
    for s in sessions:
        messages, parts = _messages(root, str(s.get("id")), old)
        out.append({"session": s, "messages": messages, "parts": parts})
    return {"sessions": out}


def sources(path: str) -> tuple[str, ...]:
    """The session file and the folder of its messages (a new message is a new file)."""
    p = Path(path)
    root, _folder, _old = _layout(p)
    info = _json(p)
    ses = info.get("id") if isinstance(info, dict) else None
    folder = root / "message" / str(ses)
    return (path, str(folder)) if ses and os.path.isdir(folder) else (path,)


class SessionFilesParser:
    def feed(self, line: int, record: Any) -> list[Item]:
        if not isinstance(record, dict) or not isinstance(record.get("sessions"), list):
            return [Skipped(line, "not an OpenCode session")]
        stored = [Stored(s["session"], s["messages"], s["parts"]) for s in record["sessions"]]
        return SessionBuilder().requests(stored)

    def finish(self) -> list[Item]:
        return []


class SessionFilesReader:
    name, label = SESSION.name, SESSION.label
    description, document = SESSION.description, SESSION.document
    own_document = True

    def sniff(self, head: Head) -> bool:
        return opencode_session(head)

    def parser(self) -> SessionFilesParser:
        return SessionFilesParser()

    def read_document(self, path: str) -> dict[str, Any]:
        return read_document(path)

    def sources(self, path: str) -> tuple[str, ...]:
        return sources(path)


READER = SessionFilesReader()
