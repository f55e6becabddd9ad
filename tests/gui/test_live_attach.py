"""File > Attach…: the agents' session files, newest first; attaching opens and follows."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from live_helpers import lines_of, panel_of, requests_in, shown

from ctxviewer.gui.live.attach_dialog import (
    ACTIVE_MARK,
    COL_ACTIVE,
    COL_AGENT,
    COL_WHEN,
    ago,
    human_size,
)

CODEX = "codex/Mai0313__VibeCodingTracker__tests_fixtures_sessions_codex.jsonl"
GEMINI = (
    "gemini-cli/lanegrid__agtrace__samples-tmp_.gemini_tmp_9126eddec7f67e038794657b4d517dd9"
    "cb5226468f30b5ee7296c27d65e84fde_chats_session-2025-12-09T19-50-f0a689a6.json"
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "QWEN_RUNTIME_DIR"):
        monkeypatch.delenv(name, raising=False)
    return h


def _put(path: Path, data: bytes, age: float) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    t = time.time() - age
    os.utime(path, (t, t))
    return str(path)


def _wait_listed(qtbot, dialog) -> None:
    qtbot.waitUntil(
        lambda: (
            dialog.stack.currentWidget() is not dialog.empty or "Looked in" in dialog.empty.text()
        ),
        timeout=5000,
    )


def test_attach_lists_agents_newest_first_and_follows(
    qtbot, window, home: Path, corpus: Path, transcript_path: str
) -> None:
    lines = lines_of(transcript_path)
    claude = _put(home / ".claude/projects/-work-demo/abc.jsonl", b"".join(lines[:200]), 30)
    sub = _put(
        home / ".claude/projects/-work-demo/abc/subagents/agent-1.jsonl", b"".join(lines[:40]), 600
    )
    codex = _put(
        home / ".codex/sessions/2025/12/10/rollout-2025-12-10-x.jsonl",
        (corpus / CODEX).read_bytes(),
        3600,
    )
    gemini = _put(
        home / ".gemini/tmp/myproj/chats/session-2025-12-09.json",
        (corpus / GEMINI).read_bytes(),
        7200,
    )
    qwen = _put(
        home / ".qwen/projects/-work-q/chats/broken.jsonl",
        b"this is not a session log\n" * 3,
        3 * 86400,
    )

    panel = panel_of(window)
    dialog = panel.show_attach_dialog()
    qtbot.addWidget(dialog)
    _wait_listed(qtbot, dialog)
    assert dialog.visible_paths() == [claude, sub, codex, gemini, qwen]
    items = dialog.items()
    assert [it.text(COL_ACTIVE) for it in items] == [ACTIVE_MARK, "", "", "", ""]
    assert [it.text(COL_AGENT) for it in items] == [
        "Claude Code",
        "Claude Code · sub-agent",
        "Codex",
        "Gemini CLI",
        "qwen-code",
    ]
    assert [it.text(COL_WHEN) for it in items] == [
        "just now",
        "10 min ago",
        "1 h ago",
        "2 h ago",
        "3 days ago",
    ]
    assert "Cannot be opened" in items[4].toolTip(COL_AGENT)
    assert "Cannot be opened" not in items[0].toolTip(COL_AGENT)

    # greyed out entries cannot be attached; the filter narrows the list
    dialog.tree.setCurrentItem(items[4])
    assert not dialog.attach_button.isEnabled()
    dialog.filter.setText("codex")
    assert dialog.visible_paths() == [codex]
    dialog.filter.setText("")

    # attach the newest: it opens and is followed live
    dialog.tree.setCurrentItem(items[0])
    assert dialog.attach_button.isEnabled()
    dialog.attach_button.click()
    assert not dialog.isVisible()
    qtbot.waitUntil(
        lambda: window.state.session is not None and window.state.session.path == claude,
        timeout=5000,
    )
    assert panel.follower.is_following() and panel.follower.path == claude
    with open(claude, "ab") as f:
        f.write(b"".join(lines[200:400]))
    n = requests_in(claude)
    qtbot.waitUntil(lambda: shown(window) == n, timeout=3000)


def test_open_from_attach_dialog_does_not_follow(qtbot, window, home: Path, trace_path) -> None:
    path = _put(home / ".claude/projects/-p/s.jsonl", Path(trace_path).read_bytes(), 10)
    panel = panel_of(window)
    dialog = panel.show_attach_dialog()
    qtbot.addWidget(dialog)
    _wait_listed(qtbot, dialog)
    with qtbot.waitSignal(window.state.session_loaded, timeout=10000):
        dialog.open_button.click()
    assert window.state.session.path == path
    assert not panel.follower.is_following()


def test_attach_empty_state_says_where_it_looked(qtbot, window, home: Path) -> None:
    panel = panel_of(window)
    dialog = panel.show_attach_dialog()
    qtbot.addWidget(dialog)
    _wait_listed(qtbot, dialog)
    text = dialog.empty.text()
    assert "No agent session files found" in text
    for where in (".claude/projects", ".codex/sessions", ".gemini/tmp", ".qwen/projects"):
        assert str(home / where) in text
    assert not dialog.attach_button.isEnabled()


def test_relative_times_and_sizes() -> None:
    assert ago(1000, 1010) == "just now"
    assert ago(0, 150) == "2 min ago"
    assert ago(0, 86400 * 1.5) == "1 day ago"
    assert human_size(512) == "512 B"
    assert human_size(3 * 1024 * 1024) == "3.0 MB"
