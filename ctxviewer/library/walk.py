"""Find the files the library indexes: where each agent keeps its sessions
(``ingest.discover``'s roots) and the folders the user added.

No file is opened here: one ``stat`` per file says whether it changed since its
last read. A Claude Code sub-agent file (``<session>/subagents/agent-*.jsonl``
beside ``<session>.jsonl``) is found as part of its session: ``Found.parent``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ctxviewer.ingest.discover import (
    Root,
    default_roots,
    project_name,
    recordings_folder,
    root_files,
)

MAX_ENTRIES = 2_000_000  # directory entries looked at per scan
FOLDER_DEPTH = 8  # levels below an added folder
SUFFIXES = (".jsonl", ".json", ".jsonl.gz", ".jsonl.xz", ".json.gz", ".ndjson")


@dataclass(frozen=True)
class Found:
    """A file found, with the stat a rescan compares."""

    path: str
    size: int
    mtime_ns: int
    inode: int
    ctime_ns: int  # changes on every write, even one whose size and mtime were put back
    parent: str | None = None  # the session file a sub-agent file belongs to
    project: str | None = None  # the project its folder name encodes (agent folders)


def find_files(folders: Sequence[str], roots: Sequence[Root] | None = None) -> dict[str, Found]:
    """Every session file under the agents' roots, the proxy's recordings folder (with
    the default roots) and ``folders``, by path."""
    budget = [MAX_ENTRIES]
    found: dict[str, Found] = {}
    names: dict[tuple[str, str], str | None] = {}
    for root in default_roots() if roots is None else roots:
        for path in root_files(root, budget):
            key = (str(root.path), path.relative_to(root.path).parts[0])
            if key not in names:
                names[key] = project_name(root, path)
            _add(found, str(path), names[key])
    if roots is None:
        folders = [*folders, str(recordings_folder())]
    for folder in folders:
        for name in _folder_files(Path(folder), budget):
            _add(found, name, None)
    return _with_parents(found)


def _add(found: dict[str, Found], path: str, project: str | None) -> None:
    if path in found:
        return
    try:
        st = os.stat(path)
    except OSError:
        return  # gone since it was listed
    size, mtime = st.st_size, st.st_mtime_ns
    try:  # a database's write-ahead log holds its newest rows (OpenCode): a change there counts
        wal = os.stat(path + "-wal")
        size, mtime = size + wal.st_size, max(mtime, wal.st_mtime_ns)
    except OSError:
        pass
    found[path] = Found(path, size, mtime, st.st_ino, st.st_ctime_ns, None, project)


def _folder_files(base: Path, budget: list[int], depth: int = 0) -> Iterator[str]:
    try:
        with os.scandir(base) as it:
            entries = list(it)
    except OSError:
        return
    for entry in entries:
        if budget[0] <= 0:
            return
        budget[0] -= 1
        try:
            if entry.is_dir(follow_symlinks=False):
                if depth < FOLDER_DEPTH and not entry.name.startswith("."):
                    yield from _folder_files(Path(entry.path), budget, depth + 1)
            elif entry.is_file() and entry.name.endswith(SUFFIXES):
                yield entry.path
        except OSError:
            continue


def _with_parents(found: dict[str, Found]) -> dict[str, Found]:
    """Mark each sub-agent file whose session file was found too."""
    out = dict(found)
    for path, f in found.items():
        parent = sidecar_parent(path)
        if parent is not None and parent in found:
            out[path] = Found(
                f.path, f.size, f.mtime_ns, f.inode, f.ctime_ns, parent, found[parent].project
            )
    return out


def sidecar_parent(path: str) -> str | None:
    """``<dir>/<id>.jsonl`` for ``<dir>/<id>/subagents/agent-*.jsonl``, else None."""
    p = Path(path)
    if p.parent.name != "subagents" or not p.name.startswith("agent-") or p.suffix != ".jsonl":
        return None
    return str(p.parent.parent.with_suffix(".jsonl"))


def groups(found: Iterable[Found]) -> dict[str, list[Found]]:
    """Session file -> [itself, its sub-agent files (sorted)]."""
    out: dict[str, list[Found]] = {}
    subs: dict[str, list[Found]] = {}
    for f in found:
        if f.parent is None:
            out.setdefault(f.path, []).insert(0, f)
        else:
            subs.setdefault(f.parent, []).append(f)
    for parent, files in subs.items():
        if parent in out:
            out[parent].extend(sorted(files, key=lambda f: f.path))
    return out
