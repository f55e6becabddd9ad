"""A fake home with session files laid out the way each agent lays them out (from the
shared corpus, the bundled demo and tests/data), for the library's tests."""

from __future__ import annotations

import lzma
import shutil
from pathlib import Path

import pytest

from ctxviewer.resources import demo_session_path

DATA = Path(__file__).resolve().parents[1] / "data"
SPOTTER = (
    "claude-code/marot__spotter__test_fixtures_transcripts_fa812bfe-b295-4cca-9c2f-fdf01028cb46"
)
SPOTTER_ID = "fa812bfe-b295-4cca-9c2f-fdf01028cb46"
VIBE_CLAUDE = "claude-code/Mai0313__VibeCodingTracker__tests_fixtures_sessions_claude_code.jsonl"
CODEX = (
    "codex/lanegrid__agtrace__samples-tmp_.codex_sessions_2025_12_10_rollout-2025-12-10T04"
    "-55-16-019b04ae-b1c6-7c72-a134-a4c2de66058c.jsonl"
)
GEMINI_DOC = (
    "gemini-cli/lanegrid__agtrace__samples-tmp_.gemini_tmp_9126eddec7f67e038794657b4"
    "d517dd9cb5226468f30b5ee7296c27d65e84fde_chats_session-2025-12-09T19-50-f0a689a6"
    ".json"
)
GEMINI_JSONL = "gemini-cli/Mai0313__VibeCodingTracker__tests_fixtures_sessions_gemini.jsonl"
LEMMY = "claude-trace/badlogic__lemmy__apps_claude-trace_test_test-traffic.jsonl"
HASH = "9126eddec7f67e038794657b4d517dd9cb5226468f30b5ee7296c27d65e84fde"


def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty ``tmp_path/home`` as HOME, no agent's folder variables, and the library
    in ``tmp_path/library``: nothing of the real user's reaches the test."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "QWEN_RUNTIME_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CTXVIEWER_LIBRARY_DIR", str(tmp_path / "library"))
    return home


def put(src: Path, dst: Path) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    return dst


def lay_out(corpus: Path, home: Path) -> dict[str, Path]:
    """One session per agent (and per layout), where the agent writes it."""
    cc = home / ".claude" / "projects" / "-home-u-spotter"
    out = {
        "spotter": put(corpus / f"{SPOTTER}.jsonl", cc / f"{SPOTTER_ID}.jsonl"),
        "spotter_explore": put(
            corpus / f"{SPOTTER}_subagents_agent-a93ccab.jsonl",
            cc / SPOTTER_ID / "subagents" / "agent-a93ccab.jsonl",
        ),
        "spotter_compact": put(
            corpus / f"{SPOTTER}_subagents_agent-acompact-70d8e7.jsonl",
            cc / SPOTTER_ID / "subagents" / "agent-acompact-70d8e7.jsonl",
        ),
        "vibe": put(
            corpus / VIBE_CLAUDE,
            home
            / ".claude"
            / "projects"
            / "-home-wei-repo"
            / "2b1e0c8e-0000-4000-8000-000000000001.jsonl",
        ),
        "codex": put(
            corpus / CODEX,
            home
            / ".codex"
            / "sessions"
            / "2025"
            / "12"
            / "10"
            / "rollout-2025-12-10T04-55-16-019b04ae-b1c6-7c72-a134-a4c2de66058c.jsonl",
        ),
        "gemini": put(
            corpus / GEMINI_DOC,
            home / ".gemini" / "tmp" / HASH / "chats" / "session-2025-12-09T19-50-f0a689a6.json",
        ),
        "gemini_jsonl": put(
            corpus / GEMINI_JSONL,
            home / ".gemini" / "tmp" / "vibe" / "chats" / "session-2026-01-02T10-00-a.jsonl",
        ),
        "qwen": put(
            DATA / "qwen_session.jsonl",
            home
            / ".qwen"
            / "projects"
            / "-home-dev-app"
            / "chats"
            / "3f6b1c2e-8d4a-4f0e-9b7a-1c2d3e4f5a6b.jsonl",
        ),
    }
    return out


def recordings(corpus: Path | None, folder: Path) -> dict[str, Path]:
    """A folder of recordings (added to the library by the user): the demo, compressed
    as shipped and plain, and a claude-trace log."""
    out = {"demo_xz": put(demo_session_path(), folder / "demo-session.jsonl.xz")}
    plain = folder / "2025" / "demo-plain.jsonl"
    plain.parent.mkdir(parents=True)
    plain.write_bytes(lzma.decompress(demo_session_path().read_bytes()))
    out["demo"] = plain
    if corpus is not None:
        out["lemmy"] = put(corpus / LEMMY, folder / "lemmy.jsonl")
    return out
