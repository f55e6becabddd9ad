"""``ingest.session_files.expand``: files as given, folders walked for session-log names,
a sub-agent file left to its session when the session is read too."""

from __future__ import annotations

import os
from pathlib import Path

from ctxviewer.ingest.session_files import expand


def _touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}\n")
    return path


def test_a_folder(tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-work-app"
    session = _touch(project / "s-1.jsonl")
    joined = _touch(project / "s-1" / "subagents" / "agent-a1.jsonl")
    orphan = _touch(project / "s-2" / "subagents" / "agent-b2.jsonl")  # no s-2.jsonl
    gz = _touch(project / "old.JSONL.gz")
    doc = _touch(tmp_path / "gemini" / "chats" / "session-1.json")
    _touch(project / "notes.md")
    _touch(project / "s-1" / "tool-results" / "x.txt")
    os.mkfifo(project / "fifo.jsonl")
    found = expand([str(tmp_path)])
    assert set(found.files) == {str(session), str(orphan), str(gz), str(doc)}
    assert found.joined == (str(joined),)
    assert found.ignored == 2
    assert found.problems == ((str(project / "fifo.jsonl"), "a pipe, not a file"),)


def test_files_as_given(tmp_path: Path, monkeypatch) -> None:
    sub = _touch(tmp_path / "s-1" / "subagents" / "agent-a1.jsonl")
    text = _touch(tmp_path / "log.txt")
    monkeypatch.chdir(tmp_path)
    # alone, a sub-agent file is a session of its own; any name is taken when given
    found = expand(["s-1/subagents/agent-a1.jsonl", "log.txt", "log.txt", "missing.jsonl"])
    assert found.files == (str(sub), str(text))
    assert found.problems == (("missing.jsonl", "no such file or folder"),)
    session = _touch(tmp_path / "s-1.jsonl")
    found = expand([str(sub), str(session)])
    assert found.files == (str(session),) and found.joined == (str(sub),)
