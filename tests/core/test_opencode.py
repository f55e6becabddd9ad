"""OpenCode sessions: the real CLI's own captures (npm opencode-ai 1.18.33 with its SQLite
database and write-ahead log, 1.1.65 with its JSON files), made against the loopback
OpenAI fake with a custom provider (tests/data/agents/README.md)."""

from __future__ import annotations

import hashlib
import json
import lzma
import shutil
import sqlite3
import tarfile
from pathlib import Path
from typing import Any

import pytest

from ctxviewer.analysis.agents.identify import identify
from ctxviewer.analysis.agents.sessions import split
from ctxviewer.cli import main
from ctxviewer.ingest import load
from ctxviewer.ingest.follow.follower import Follower
from ctxviewer.ingest.opencode.session import PRUNED, SessionBuilder, Stored

DATA = Path(__file__).resolve().parents[1] / "data" / "agents"
V118 = DATA / "opencode-1.18.33" / "three-turns"
V11 = DATA / "opencode-1.1.65" / "three-turns"


def _unxz(src: Path, dst: Path) -> Path:
    dst.write_bytes(lzma.decompress(src.read_bytes()))
    return dst


def _server_prompts(recording: Path) -> list[int]:
    """The fake's prompt_tokens of each main call (the calls that offered tools)."""
    out = []
    for line in lzma.decompress(recording.read_bytes()).splitlines():
        r = json.loads(line)
        if r.get("path", "").endswith("/chat/completions") and r["body"].get("tools"):
            usage = [c["usage"] for c in r["response"]["chunks"] if c.get("usage")]
            out.append(usage[-1]["prompt_tokens"])
    return out


@pytest.fixture()
def database(tmp_path: Path) -> Path:
    db = _unxz(V118 / "opencode.db.xz", tmp_path / "opencode.db")
    _unxz(V118 / "opencode.db-wal.xz", tmp_path / "opencode.db-wal")
    return db


@pytest.fixture()
def storage(tmp_path: Path) -> Path:
    with tarfile.open(V11 / "storage.tar.xz") as tar:
        tar.extractall(tmp_path, filter="data")
    return next((tmp_path / "storage" / "session").glob("*/ses_*.json"))


def _digest(folder: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.iterdir())
        if p.is_file()
    }


def test_118_database_with_its_wal_reads_every_call(database: Path) -> None:
    """The .db alone holds 5 of the 7 messages; with its WAL all four calls read, each
    with the usage the server counted (input equals the fake's prompt_tokens)."""
    with sqlite3.connect(f"file:{database}?immutable=1", uri=True) as db:  # the .db alone
        assert db.execute("SELECT count(*) FROM message").fetchone() == (5,)
    before = _digest(database.parent)
    session = load(str(database))
    assert _digest(database.parent) == before  # nothing written beside the agent's files
    assert not list(database.parent.glob("*-shm"))
    assert session.format == "opencode-db"
    prompts = [r.usage.prompt_tokens for r in session.requests if r.usage]
    assert prompts == _server_prompts(V118 / "openai_requests.jsonl.xz") == [7727, 7873, 7931, 7960]
    assert [r.usage.output_tokens for r in session.requests if r.usage] == [33, 25, 11, 11]
    last = session.requests[-1]
    assert (
        last.messages[-1].text == '"One more: is it Python 3 only?"'
    )  # the last turn, from the WAL
    assert [m.role for m in session.requests[1].messages] == ["user", "assistant", "tool"]
    ident = identify(session)
    assert ident.profile.label == "OpenCode" and ident.label == "OpenCode 1.18.33"
    # the session's own sums add calls: 31,491 input tokens is no context size
    assert sum(prompts) == 31491


def test_118_database_follows_a_wal_that_grows(database: Path) -> None:
    """Live follow reads again when only the write-ahead log changed: the .db alone
    gives three calls; the WAL appearing beside it (the .db untouched) brings the
    fourth."""
    wal = database.with_name("opencode.db-wal")
    held = wal.read_bytes()
    wal.unlink()
    follower = Follower(database)
    first = follower.poll()
    assert first.session is not None and len(first.session.requests) == 3
    assert follower.poll().new == []  # nothing changed: nothing read
    wal.write_bytes(held)
    grown = follower.poll()
    assert grown.session is not None and len(grown.session.requests) == 4
    assert grown.new == [3]


def test_11_json_files_read_with_their_messages_and_parts(storage: Path) -> None:
    session = load(str(storage))
    assert session.format == "opencode-session"
    prompts = [r.usage.prompt_tokens for r in session.requests if r.usage]
    assert prompts == _server_prompts(V11 / "openai_requests.jsonl.xz")
    assert len(prompts) == 4
    assert identify(session).label == "OpenCode 1.1.65"
    assert session.requests[-1].messages[-1].text.startswith('"One more')


def test_report_lists_the_database_sessions(database: Path, capsys: Any) -> None:
    assert main(["report", "--json", str(database)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["agent"]["id"] == "opencode" and out["agent"]["version"] == "1.18.33"
    assert [r["api_prompt_tokens"] for r in out["requests"]] == [7727, 7873, 7931, 7960]


def _step(tokens: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"type": "step-start"},
        {"type": "text", "text": "ok"},
        {"type": "step-finish", "tokens": tokens},
    ]


def test_a_compaction_restarts_the_history_and_pruned_outputs_show_cleared() -> None:
    """Shapes of OpenCode's compaction (a summary message) and pruning (a tool part's
    state.time.compacted), built small: the call after the summary sends only the
    compaction request and the summary; a pruned output is OpenCode's placeholder."""
    tok = {"input": 100, "output": 5, "reasoning": 2, "cache": {"read": 50, "write": 10}}
    tool = {
        "type": "tool",
        "tool": "read",
        "callID": "c1",
        "state": {
            "status": "completed",
            "input": {"filePath": "a"},
            "output": "A" * 400,
            "time": {"start": 1, "end": 2, "compacted": 2500},
        },
    }
    messages = [
        {"id": "msg_1", "role": "user", "time": {"created": 1000}},
        {"id": "msg_2", "role": "assistant", "time": {"created": 1100}},
        {"id": "msg_3", "role": "assistant", "time": {"created": 2000}},
        {"id": "msg_4", "role": "user", "time": {"created": 3000}},
        {"id": "msg_5", "role": "assistant", "time": {"created": 3100}, "summary": True},
        {"id": "msg_6", "role": "assistant", "time": {"created": 4000}},
    ]
    parts = {
        "msg_1": [{"type": "text", "text": "read a"}],
        "msg_2": [{"type": "step-start"}, tool, {"type": "step-finish", "tokens": tok}],
        "msg_3": _step(tok),
        "msg_4": [{"type": "compaction", "auto": True}],
        "msg_5": _step(tok),
        "msg_6": _step(tok),
    }
    items = SessionBuilder().requests(
        [Stored({"id": "ses_1", "version": "1.18.33"}, messages, parts)]
    )
    reqs = [i for i in items if hasattr(i, "usage")]
    assert [r.usage.prompt_tokens for r in reqs] == [160] * 4  # 100 + 50 read + 10 write
    assert reqs[0].usage.reasoning_tokens == 2 and reqs[0].usage.output_tokens == 7
    assert reqs[1].messages[-1].text == "A" * 400  # not pruned yet at 2000
    assert reqs[2].messages[2].text == PRUNED  # pruned at 2500, before the call at 3000
    assert [m.role for m in reqs[3].messages] == ["user", "assistant"]  # after the summary
    events = [i for i in items if getattr(i, "kind", None) == "compact_boundary"]
    assert len(events) == 1 and events[0].pre_tokens == 160


def test_a_damaged_database_is_one_line(tmp_path: Path, capsys: Any) -> None:
    bad = tmp_path / "opencode.db"
    shutil.copyfile(_unxz(V118 / "opencode.db.xz", tmp_path / "x.db"), bad)
    data = bytearray(bad.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # the schema page overwritten
    bad.write_bytes(bytes(data))
    assert main(["report", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(bad) in err


def test_sessions_split_by_conversation_with_subagents_kept(database: Path) -> None:
    parts = split(load(str(database)))
    assert len(parts) == 1 and parts[0].requests[0].conversation is not None


def test_a_compressed_database_reads_with_its_compressed_wal(database: Path) -> None:
    """opencode.db.xz beside opencode.db-wal.xz (a shared capture) reads as the database
    with its WAL; it was refused as 'not an OpenCode database' (the copy taken to read
    was still compressed)."""
    plain = load(str(database))
    packed = load(str(V118 / "opencode.db.xz"))
    assert (
        [r.usage.prompt_tokens for r in packed.requests if r.usage]
        == [r.usage.prompt_tokens for r in plain.requests if r.usage]
        == [7727, 7873, 7931, 7960]
    )
