"""Cline and Roo Code task folders, in the shapes of real published tasks rebuilt small
(no third-party file is copied): Cline's api_conversation_history.json with
metrics.tokens, written on one line as Cline does; ui_messages.json with its
api_req_started counts and conversationHistoryDeletedRange; Roo Code's condensing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxviewer.analysis.agents.identify import identify
from ctxviewer.cli import main
from ctxviewer.ingest import load
from ctxviewer.ingest.follow.follower import Follower
from ctxviewer.model import COMPACT_BOUNDARY


def _user(text: str, ts: int) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "ts": ts}


def _assistant(text: str, ts: int, prompt: int | None = None, cached: int = 0) -> dict[str, Any]:
    m: dict[str, Any] = {"role": "assistant", "content": [{"type": "text", "text": text}], "ts": ts}
    if prompt is not None:
        m["modelInfo"] = {"modelId": "claude_4_5_opus", "providerId": "openai", "mode": "act"}
        m["metrics"] = {"tokens": {"prompt": prompt, "completion": 40, "cached": cached}}
    return m


def _write(folder: Path, name: str, value: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(value, separators=(",", ":")))  # one line, as Cline writes
    return path


def _big_history(n: int) -> list[dict[str, Any]]:
    """A history over the 256 KB head (a real one is 1.4 MB on one line)."""
    msgs: list[dict[str, Any]] = [_user("<task>\nbuild it\n</task>\n" + "x" * 20000, 1000)]
    for i in range(n):
        msgs.append(
            _assistant(
                f"step {i}", 2000 + i * 10, prompt=10000 + 100 * i, cached=0 if i % 3 else 5000
            )
        )
        msgs.append(_user(f"[tool] Result: {'y' * 2000}", 2005 + i * 10))
    msgs.append(_assistant("no metrics here", 9999))
    return msgs


def test_one_request_per_assistant_message_with_tokens(tmp_path: Path) -> None:
    history = _big_history(150)
    path = _write(tmp_path / "tasks" / "1777", "api_conversation_history.json", history)
    assert path.stat().st_size > 256 * 1024 and b"\n" not in path.read_bytes()
    session = load(str(path))
    assert session.format == "cline-task"
    with_tokens = [m for m in history if m["role"] == "assistant" and "metrics" in m]
    requests = [r for r in session.requests if r.usage is not None]
    assert len(requests) == len(with_tokens) == 150
    own = sum(m["metrics"]["tokens"]["prompt"] for m in with_tokens)
    assert sum(r.usage.prompt_tokens for r in requests) == own
    assert requests[0].usage.cache_read_input_tokens == 5000  # cached is part of prompt
    assert requests[0].usage.input_tokens == 5000
    assert len(session.requests[3].messages) == 7  # the history before the 4th reply
    assert identify(session).profile.id == "cline"


def test_ui_messages_give_the_counts_and_the_truncation(tmp_path: Path) -> None:
    folder = tmp_path / "tasks" / "42"
    api = [_user("<task>\nhi\n</task>", 1)]
    for i in range(6):
        api += [_assistant(f"a{i}", 10 + i), _user(f"r{i}", 11 + i)]
    _write(folder, "api_conversation_history.json", api)
    ui: list[dict[str, Any]] = [
        {"ts": 0, "type": "say", "say": "task", "text": "hi", "conversationHistoryIndex": -1}
    ]
    for i in range(6):
        info = {
            "request": f"r{i}",
            "tokensIn": 10,
            "tokensOut": 50,
            "cacheWrites": 1000,
            "cacheReads": 20000 + i,
            "cost": 0.1,
        }
        ui.append(
            {
                "ts": 100 + i,
                "type": "say",
                "say": "api_req_started",
                "text": json.dumps(info),
                "conversationHistoryIndex": 2 * i - 1,
                "modelInfo": {"providerId": "anthropic", "modelId": "claude-opus-4-6"},
            }
        )
        later = {
            "ts": 101 + i,
            "type": "say",
            "say": "text",
            "text": "…",
            "conversationHistoryIndex": 2 * i - 1,
        }
        if i >= 4:  # Cline truncated before the fifth request: messages 2-5 hidden
            later["conversationHistoryDeletedRange"] = [2, 5]
        ui.append(later)
    _write(folder, "ui_messages.json", ui)
    session = load(str(folder / "ui_messages.json"))  # either file opens the task
    assert [r.usage.prompt_tokens for r in session.requests] == [21010 + i for i in range(6)]
    assert session.requests[0].model == "claude-opus-4-6"
    assert len(session.requests[3].messages) == 7
    assert len(session.requests[4].messages) == 9 - 4  # 2-5 hidden
    events = [e for r in session.requests for e in r.events if e.kind == COMPACT_BOUNDARY]
    assert len(events) == 1 and "truncation" in events[0].detail
    assert session.requests[4].events == tuple(events)


def test_roo_code_condensing_is_a_compaction(tmp_path: Path) -> None:
    folder = tmp_path / "tasks" / "roo"
    api = [
        dict(_user("<task>do</task>", 1), condenseParent="c1"),
        dict(_assistant("a", 2), condenseParent="c1"),
        dict(_user("r", 3), condenseParent="c1"),
        {
            "role": "user",
            "content": [{"type": "text", "text": "## Summary"}],
            "ts": 4,
            "isSummary": True,
            "condenseId": "c1",
        },
        _assistant("b", 5),
    ]
    _write(folder, "api_conversation_history.json", api)
    ui = [
        {
            "ts": 1,
            "type": "say",
            "say": "api_req_started",
            "text": json.dumps(
                {
                    "tokensIn": 30000,
                    "tokensOut": 5,
                    "cacheWrites": 0,
                    "cacheReads": 25000,
                    "apiProtocol": "anthropic",
                }
            ),
        },
        {
            "ts": 4,
            "type": "say",
            "say": "condense_context",
            "contextCondense": {
                "cost": 0.1,
                "prevContextTokens": 30000,
                "newContextTokens": 900,
                "summary": "…",
            },
        },
        {
            "ts": 4,
            "type": "say",
            "say": "api_req_started",
            "text": json.dumps(
                {
                    "tokensIn": 1000,
                    "tokensOut": 5,
                    "cacheWrites": 0,
                    "cacheReads": 0,
                    "apiProtocol": "anthropic",
                }
            ),
        },
    ]
    _write(folder, "ui_messages.json", ui)
    session = load(str(folder / "api_conversation_history.json"))
    assert identify(session).profile.id == "roo-code"
    first, second = session.requests
    assert first.usage.prompt_tokens == 30000  # Roo's tokensIn already holds the cache reads
    assert [m.text for m in second.messages] == ["## Summary"]
    (event,) = second.events
    assert (event.kind, event.pre_tokens, event.post_tokens) == (COMPACT_BOUNDARY, 30000, 900)


def test_only_ui_messages_still_read(tmp_path: Path) -> None:
    ui = [
        {
            "ts": 5,
            "type": "say",
            "say": "api_req_started",
            "text": json.dumps(
                {
                    "request": "<task>x</task>",
                    "tokensIn": 11495,
                    "tokensOut": 16,
                    "cacheWrites": 0,
                    "cacheReads": 512,
                    "cost": 0,
                }
            ),
        },
        {
            "ts": 6,
            "type": "say",
            "say": "api_req_started",
            "text": json.dumps({"request": "[attempt]", "tokensIn": 0, "tokensOut": 0, "cost": 0}),
        },
    ]
    path = _write(tmp_path / "t", "ui_messages.json", ui)
    session = load(str(path))
    assert [r.usage.prompt_tokens for r in session.requests] == [12007]  # a failed one: none
    assert session.requests[0].messages[0].text == "<task>x</task>"


def test_bad_files_are_one_line_or_counted(tmp_path: Path, capsys: Any) -> None:
    folder = tmp_path / "tasks" / "bad"
    api = _write(
        folder,
        "api_conversation_history.json",
        [_user("<task>x</task>", 1), _assistant("a", 2, prompt=100), 7],
    )
    (folder / "ui_messages.json").write_text("[{broken")
    session = load(str(api))
    assert len(session.requests) == 1
    assert sorted(s.reason[:30] for s in session.skipped) == [
        "message 2 of the history is no",
        "ui_messages.json beside it is ",
    ]
    api.write_text('[{"role":"user","content":"<task>')  # cut while written
    assert main(["report", str(api)]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1


def test_follow_notices_the_sibling_file(tmp_path: Path) -> None:
    folder = tmp_path / "tasks" / "live"
    api = _write(
        folder, "api_conversation_history.json", [_user("<task>x</task>", 1), _assistant("a", 2)]
    )
    follower = Follower(api)
    assert follower.poll().session.requests[0].usage is None
    _write(
        folder,
        "ui_messages.json",
        [
            {
                "ts": 1,
                "type": "say",
                "say": "api_req_started",
                "conversationHistoryIndex": -1,
                "text": json.dumps(
                    {"tokensIn": 7, "tokensOut": 1, "cacheWrites": 0, "cacheReads": 0}
                ),
            }
        ],
    )
    update = follower.poll()
    assert update.session.requests[0].usage.prompt_tokens == 7
