"""Session files named on a command line: files as given, folders walked.

``expand(paths)`` turns files and folders into the session files to read:
- a file is taken as given, whatever its name (formats are detected by content);
- a folder is walked (links to folders are not followed), and of its files those
  named as session logs are taken: ``*.jsonl``, ``*.json``, ``*.ndjson``, each
  optionally compressed (``.gz``, ``.xz``); other files are counted, not read;
- a Claude Code sub-agent file (``<session>/subagents/agent-*.jsonl``) whose session
  file is taken too is left out: loading the session joins it
  (``claude_subagents``), as opening the session in the window does.

Paths that cannot be read (missing, a pipe or a device, in ``/proc``, a folder that
cannot be listed) are returned with the reason, never raised.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ctxviewer.ingest.claude.subagents import session_of
from ctxviewer.special_files import kind, pseudo_root

SESSION_NAME = re.compile(r"\.(jsonl|json|ndjson)(\.(gz|xz))?$", re.IGNORECASE)


@dataclass(frozen=True)
class Expanded:
    """What a list of paths holds: the session files to read, and what was left out."""

    files: tuple[str, ...]  # absolute paths, in the order given (a folder's sorted), once each
    problems: tuple[tuple[str, str], ...]  # (path, why it cannot be read)
    joined: tuple[str, ...]  # sub-agent files read with their session
    ignored: int  # files in folders not named as session logs


def expand(paths: Sequence[str]) -> Expanded:
    files: dict[str, None] = {}
    problems: list[tuple[str, str]] = []
    ignored = 0
    for given in paths:
        path = os.path.abspath(os.path.expanduser(given))
        why = _refusal(given, path)
        if why is not None:
            problems.append((given, why))
        elif os.path.isdir(path):
            found, bad, skipped = _walk(path)
            files.update(dict.fromkeys(found))
            problems.extend(bad)
            ignored += skipped
        else:
            files[path] = None
    joined = tuple(f for f in files if (s := session_of(Path(f))) is not None and str(s) in files)
    kept = tuple(f for f in files if f not in set(joined))
    return Expanded(kept, tuple(problems), joined, ignored)


def _refusal(given: str, path: str) -> str | None:
    root = pseudo_root(path)
    if root is not None:
        return f"in {root}, the system's own files, not session logs"
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "no such file or folder"
    except OSError as e:
        return f"cannot read it: {e.strerror or e}"
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return f"{kind(mode)}, not a file"
    return None


def _walk(folder: str) -> tuple[list[str], list[tuple[str, str]], int]:
    found: list[str] = []
    problems: list[tuple[str, str]] = []
    ignored = 0

    def unreadable(e: OSError) -> None:
        problems.append((e.filename or folder, f"cannot list it: {e.strerror or e}"))

    for here, dirs, names in os.walk(folder, onerror=unreadable):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(here, name)
            if not SESSION_NAME.search(name):
                ignored += 1
            elif (why := _refusal(path, path)) is None:
                found.append(path)
            else:  # a link to nowhere, a pipe named *.jsonl
                problems.append((path, why))
    return found, problems, ignored
