"""Finding agent session files on this machine (ctxviewer.ingest.discover, ``sessions``)."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest
from library_tree import fake_home

from ctxviewer.cli import main
from ctxviewer.ingest.discover import Root, decode_project_dir, discover_sessions, probe_file

DATA = Path(__file__).resolve().parents[1] / "data"
NOW = 1_760_000_000.0
HASH = "9126eddec7f67e038794657b4d517dd9cb5226468f30b5ee7296c27d65e84fde"
CLAUDE_LINE = (
    json.dumps(
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "sessionId": "s-1",
            "cwd": "/work/app",
            "timestamp": "2025-08-02T12:00:00Z",
            "message": {"role": "user", "content": "hi"},
        }
    )
    + "\n"
)


def claude_dir(cwd: str, allowed: str = r"[^A-Za-z0-9-]") -> str:
    return re.sub(allowed, "-", cwd)


def put(path: Path, content: str | bytes, age: float) -> Path:
    """Write ``path`` with an mtime ``age`` seconds before NOW."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        content = content.encode()
    path.write_bytes(content)
    os.utime(path, (NOW - age, NOW - age))
    return path


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty home of this test's own, as the library's tests make it."""
    return fake_home(tmp_path, monkeypatch)


@pytest.fixture
def tree(home: Path) -> dict[str, Path]:
    """One or more session files per agent, with known ages (seconds before NOW)."""
    project = home / "work" / "my-app.v2"
    project.mkdir(parents=True)
    cc = home / ".claude" / "projects" / claude_dir(str(project))
    qwen_name = re.sub(r"[^A-Za-z0-9]", "-", str(project))
    return {
        "claude": put(cc / "s-1.jsonl", CLAUDE_LINE, age=30),
        "subagent": put(cc / "s-1" / "subagents" / "agent-a1.jsonl", CLAUDE_LINE, age=90),
        "codex": put(
            home
            / ".codex"
            / "sessions"
            / "2025"
            / "12"
            / "10"
            / "rollout-2025-12-10T04-55-16-abc.jsonl",
            (DATA / "codex_tools.jsonl").read_bytes(),
            age=600,
        ),
        "gemini": put(
            home / ".gemini" / "tmp" / HASH / "chats" / "session-2025-12-09T19-50-a.json",
            (DATA / "gemini_session.json").read_bytes(),
            age=1_200,
        ),
        "gemini_named": put(
            home / ".gemini" / "tmp" / "my-app" / "chats" / "session-b.jsonl",
            (DATA / "gemini_updates.jsonl").read_bytes(),
            age=1_800,
        ),
        "qwen": put(
            home / ".qwen" / "projects" / qwen_name / "chats" / "q-1.jsonl",
            (DATA / "qwen_session.jsonl").read_bytes(),
            age=100,
        ),
        "qwen_junk": put(
            home / ".qwen" / "tmp" / HASH / "chats" / "session-x.json",
            "this is not a session\n",
            age=3_000,
        ),
        "empty": put(cc / "empty.jsonl", b"", age=4_000),
        "binary": put(cc / "blob.jsonl", b"\x00\x01\x02" * 100, age=5_000),
        # not session files: never listed
        "notes": put(cc / "notes.txt", "x", age=1),
        "runtime": put(
            home / ".qwen" / "projects" / qwen_name / "chats" / "q-1.runtime.json", "{}", age=1
        ),
        "history": put(home / ".codex" / "history.jsonl", "{}\n", age=1),
    }


def test_lists_every_agent_newest_first(tree: dict[str, Path], home: Path) -> None:
    found = discover_sessions(now=NOW)
    order = [
        "claude",
        "subagent",
        "qwen",
        "codex",
        "gemini",
        "gemini_named",
        "qwen_junk",
        "empty",
        "binary",
    ]
    assert [s.path for s in found] == [str(tree[k]) for k in order]
    by = {s.path: s for s in found}
    agent = {k: by[str(tree[k])].agent for k in order}
    assert agent == {
        "claude": "claude-code",
        "subagent": "claude-code",
        "qwen": "qwen-code",
        "codex": "codex",
        "gemini": "gemini-cli",
        "gemini_named": "gemini-cli",
        "qwen_junk": "qwen-code",
        "empty": "claude-code",
        "binary": "claude-code",
    }
    assert [s.active for s in found] == [True, True, True, False, False, False, False, False, False]
    assert [s.subagent for s in found] == [False, True] + [False] * 7
    assert found[0].size == len(CLAUDE_LINE) and found[0].mtime == pytest.approx(NOW - 30)


def test_projects_are_decoded_from_folder_names(tree: dict[str, Path], home: Path) -> None:
    by = {s.path: s for s in discover_sessions(now=NOW)}
    project = str(home / "work" / "my-app.v2")
    assert by[str(tree["claude"])].project == project  # '.' and '-' told apart by the disk
    assert by[str(tree["qwen"])].project == project
    assert by[str(tree["gemini"])].project is None  # a hash of the cwd
    assert by[str(tree["gemini_named"])].project == "my-app"
    assert by[str(tree["codex"])].project is None
    assert by[str(tree["codex"])].label == "/work/demo"  # the cwd the rollout records


def test_readers_are_checked_lazily_and_never_raise(tree: dict[str, Path]) -> None:
    found = {s.path: s for s in discover_sessions(now=NOW)}
    assert all(s._probe is None for s in found.values())  # listing reads no contents
    readers = {
        k: found[str(tree[k])].reader
        for k in ("claude", "subagent", "codex", "gemini", "gemini_named", "qwen")
    }
    assert readers == {
        "claude": "claude-code",
        "subagent": "claude-code",
        "codex": "codex",
        "gemini": "gemini-cli",
        "gemini_named": "gemini-cli-jsonl",
        "qwen": "qwen-code",
    }
    for key, why in (("qwen_junk", "unknown format"), ("empty", "empty"), ("binary", "binary")):
        info = found[str(tree[key])]
        assert not info.openable and why in info.error
    gone = found[str(tree["claude"])]
    gone._probe = None
    tree["claude"].unlink()  # vanished after listing
    assert not gone.openable and "no such file" in gone.error.lower()


def test_unreadable_file_is_not_openable(tree: dict[str, Path]) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads files whatever their mode")
    tree["claude"].chmod(0)
    info = next(s for s in discover_sessions(now=NOW) if s.path == str(tree["claude"]))
    assert not info.openable and "cannot read" in info.error


def test_env_overrides_limit_and_now(
    tree: dict[str, Path], home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "profile"
    extra = put(other / "projects" / "-srv-api" / "s-9.jsonl", CLAUDE_LINE, age=5)
    codex_home = tmp_path / "codex-home"
    rollout = put(
        codex_home / "sessions" / "2026" / "01" / "02" / "rollout-x.jsonl",
        (DATA / "codex_tools.jsonl").read_bytes(),
        age=10,
    )
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(other))
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    found = discover_sessions(now=NOW)
    assert [s.path for s in found[:3]] == [str(extra), str(rollout), str(tree["claude"])]
    assert found[0].project == "/srv/api"  # does not exist here: '-' read as '/'
    assert str(tree["codex"]) in {s.path for s in found}  # ~/.codex is still looked at
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))  # the same folder twice
    paths = [s.path for s in discover_sessions(now=NOW)]
    assert len(paths) == len(set(paths))
    assert len(discover_sessions(now=NOW, limit=2)) == 2
    later = discover_sessions(now=NOW + 3_600)
    assert not any(s.active for s in later)
    assert all(s.active for s in discover_sessions(now=NOW, active_minutes=10_000))


def test_explicit_roots_and_missing_folders(tmp_path: Path) -> None:
    put(tmp_path / "logs" / "a" / "x.jsonl", CLAUDE_LINE, age=1)
    roots = [
        Root("claude-code", tmp_path / "logs", ("*/*.jsonl",)),
        Root("codex", tmp_path / "nowhere", ("*/*.jsonl",)),
    ]
    found = discover_sessions(now=NOW, roots=roots)
    assert [(s.agent, s.project, s.reader) for s in found] == [("claude-code", None, "claude-code")]
    assert discover_sessions(now=NOW, roots=[]) == []


def test_decode_project_dir(tmp_path: Path) -> None:
    real = tmp_path / "a-b" / ".hidden dir" / "c_d"
    real.mkdir(parents=True)
    assert decode_project_dir(claude_dir(str(real))) == str(real)
    assert decode_project_dir(re.sub(r"[^A-Za-z0-9]", "-", str(real)), r"[^A-Za-z0-9]") == str(real)
    assert decode_project_dir("-no-such-place") == "/no/such/place"
    assert decode_project_dir("C--Users-me") == "C--Users-me"


def test_probe_reads_only_a_head(tmp_path: Path) -> None:
    big = tmp_path / "big.jsonl"
    big.write_bytes(CLAUDE_LINE.encode() * 20_000)  # ~3 MB
    start = time.perf_counter()
    assert probe_file(str(big)).reader == "claude-code"
    assert time.perf_counter() - start < 1.0
    assert probe_file(str(big)).cwd == "/work/app"


# -- ctxviewer sessions ----------------------------------------------------------------


def test_sessions_command_text_and_json(
    tree: dict[str, Path], home: Path, capsys: pytest.CaptureFixture
) -> None:
    for key in ("claude", "subagent", "qwen"):  # make some of them active for real
        os.utime(tree[key], None)
    assert main(["sessions"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 9
    assert all(line.startswith("* ") for line in lines[:3])
    assert not any(line.startswith("*") for line in lines[3:])
    assert "~/.claude/projects/" in lines[0] and "claude-code" in lines[0]
    assert "(sub-agent)" in lines[1]
    assert any("cannot open" in line and "binary" in line for line in lines)
    assert main(["sessions", "--active", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 3 and all(r["active"] and r["openable"] for r in rows)
    assert {r["agent"] for r in rows} == {"claude-code", "qwen-code"}
    assert {"path", "project", "cwd", "size", "mtime", "reader", "error"} <= rows[0].keys()
    assert main(["sessions", "--limit", "-1"]) == 2


def test_sessions_command_with_nothing_found(home: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["sessions"]) == 0
    assert "no session files found" in capsys.readouterr().out


def test_decode_project_dir_backs_up_from_dead_ends(tmp_path: Path) -> None:
    (tmp_path / "a-b").mkdir()  # the longest match, but a dead end
    real = tmp_path / "a" / "b-c"
    real.mkdir(parents=True)
    assert decode_project_dir(claude_dir(str(real))) == str(real)


def test_cline_roo_opencode_and_aider_are_found_where_they_write(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each agent's default place: Cline in VS Code's global storage (Linux), Roo Code in
    Cursor's (macOS), Cline in %APPDATA% (Windows), OpenCode's database with its WAL, and
    an Aider chat history in a project under the home."""
    import lzma

    agents = DATA / "agents"
    monkeypatch.setenv("APPDATA", str(home / "win-appdata"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    task = json.dumps(
        [
            {"role": "user", "content": "<task>x</task>", "ts": 1},
            {
                "role": "assistant",
                "content": "a",
                "ts": 2,
                "metrics": {"tokens": {"prompt": 9, "completion": 1, "cached": 0}},
            },
        ]
    )
    storage = "User/globalStorage"
    files = {
        "cline": put(
            home
            / ".config"
            / "Code"
            / storage
            / "saoudrizwan.claude-dev"
            / "tasks"
            / "17"
            / "api_conversation_history.json",
            task,
            age=10,
        ),
        "roo-code": put(
            home
            / "Library"
            / "Application Support"
            / "Cursor"
            / storage
            / "rooveterinaryinc.roo-cline"
            / "tasks"
            / "18"
            / "api_conversation_history.json",
            task,
            age=20,
        ),
        "cline-win": put(
            home
            / "win-appdata"
            / "Code"
            / storage
            / "saoudrizwan.claude-dev"
            / "tasks"
            / "19"
            / "api_conversation_history.json",
            task,
            age=30,
        ),
        "opencode": put(
            home / ".local" / "share" / "opencode" / "opencode.db",
            lzma.decompress(
                (agents / "opencode-1.18.33" / "three-turns" / "opencode.db.xz").read_bytes()
            ),
            age=40,
        ),
        "aider": put(
            home / "src" / "app" / ".aider.chat.history.md",
            lzma.decompress(
                (agents / "aider-0.86.2" / "two-turns" / "aider.chat.history.md.xz").read_bytes()
            ),
            age=50,
        ),
    }
    put(
        files["opencode"].with_name("opencode.db-wal"),
        lzma.decompress(
            (agents / "opencode-1.18.33" / "three-turns" / "opencode.db-wal.xz").read_bytes()
        ),
        age=40,
    )
    found = {s.path: s for s in discover_sessions(now=NOW)}
    for name, path in files.items():
        info = found[str(path)]
        assert info.agent == name.removesuffix("-win"), name
        assert info.openable, (name, info.error)
    assert found[str(files["opencode"])].reader == "opencode-db"
    assert found[str(files["aider"])].reader == "aider-chat"
    assert found[str(files["roo-code"])].reader == "cline-task"
