"""Records whose ``parentUuid`` links close a cycle (Claude Code, qwen-code).

A chain walk up such links never reaches a root: a 2-line transcript took 23 s and
1.6 GB, a real 49 KB one ran for more than 10 minutes. The readers cut the link that
closes the cycle, count the record as skipped with the reason, and read the rest.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.insights import insights
from ctxviewer.analysis.report import report_json
from ctxviewer.cli import main
from ctxviewer.ingest import load
from ctxviewer.ingest.chains import CYCLE

SUB_AGENT = (
    "claude-code/marot__spotter__test_fixtures_transcripts_fa812bfe-b295-4cca-9c2f-"
    "fdf01028cb46_subagents_agent-a93ccab.jsonl"
)
QWEN = Path(__file__).resolve().parents[1] / "data" / "qwen_session.jsonl"


def _rec(kind: str, uuid: str, parent: str | None, **extra: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s",
        "timestamp": "2026-01-01T00:00:00Z",
        **extra,
    }


def _user(uuid: str, parent: str | None, text: str) -> dict[str, Any]:
    return _rec("user", uuid, parent, message={"role": "user", "content": text})


def _reply(uuid: str, parent: str, n: int) -> dict[str, Any]:
    return _rec(
        "assistant",
        uuid,
        parent,
        requestId=f"r{n}",
        message={
            "id": f"m{n}",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "hello"}],
            "usage": {"input_tokens": 10 * n, "output_tokens": 2},
        },
    )


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _cycles(path: Path) -> list[int]:
    return [k.line for k in load(str(path)).skipped if k.reason == CYCLE]


def test_a_record_that_is_its_own_parent(tmp_path: Path, capsys: Any) -> None:
    path = _write(tmp_path / "self.jsonl", [_user("u1", "u1", "hi"), _reply("a1", "u1", 1)])
    s = load(str(path))
    assert [k.line for k in s.skipped if k.reason == CYCLE] == [1]
    assert [m.text for m in s.requests[0].messages] == ["hi"]  # read once, from a root
    assert main(["report", str(path)]) == 0
    assert f"note: line 1: {CYCLE}" in capsys.readouterr().out


def test_a_cycle_through_records_named_before_they_came(tmp_path: Path) -> None:
    # u1 -> u3 -> u2 -> u1: u3 closes it (u1 hung off it before it came)
    records = [
        _user("u1", "u3", "one"),
        _user("u2", "u1", "two"),
        _user("u3", "u2", "three"),
        _reply("a1", "u3", 1),
    ]
    s = load(str(_write(tmp_path / "three.jsonl", records)))
    assert [k.line for k in s.skipped if k.reason == CYCLE] == [3]
    assert [m.text for m in s.requests[0].messages] == ["three"]


def test_a_record_seen_again_below_itself(tmp_path: Path) -> None:
    records = [
        _user("u1", None, "one"),
        _user("u2", "u1", "two"),
        _reply("a1", "u2", 1),
        _user("u1", "a1", "one again"),
        _user("u3", "u1", "three"),
        _reply("a2", "u3", 2),
    ]
    s = load(str(_write(tmp_path / "again.jsonl", records)))
    assert [k.line for k in s.skipped if k.reason == CYCLE] == [4]
    assert [m.text for m in s.requests[1].messages] == ["one again", "three"]


def test_preserved_messages_that_name_their_boundary(tmp_path: Path) -> None:
    """A compaction's preserved messages naming the boundary itself, or one message
    twice, would re-link them into a cycle."""
    records = [
        _user("u1", None, "one"),
        _reply("a1", "u1", 1),
        _user("u2", "a1", "two"),
        _rec(
            "system",
            "b1",
            "u2",
            subtype="compact_boundary",
            compactMetadata={
                "trigger": "manual",
                "preTokens": 20,
                "preservedMessages": {"uuids": ["b1", "u2", "a1", "u2"]},
            },
        ),
        _user("s1", "b1", "summary"),
        _reply("a2", "a1", 2),
    ]
    s = load(str(_write(tmp_path / "kept.jsonl", records)))
    assert [m.text for m in s.requests[1].messages] == ["summary", "two", "hello"]


def test_a_real_transcript_pointed_back_into_its_chain(
    corpus: Path, tmp_path: Path, capsys: Any
) -> None:
    """Every 10th record of a real sub-agent transcript hung off a record below it:
    report, insights and the analysis of every request finish, the cuts counted."""
    lines = (corpus / SUB_AGENT).read_text("utf-8").splitlines()
    records = [json.loads(x) for x in lines]
    for i in range(0, len(records) - 1, 10):
        records[i]["parentUuid"] = records[i + 1]["uuid"]  # its child (or a sibling)
    path = _write(tmp_path / "agent-a93ccab.jsonl", records)
    whole, s = load(str(corpus / SUB_AGENT)), load(str(path))
    cut = [k.line for k in s.skipped if k.reason == CYCLE]
    assert cut and len(s.skipped) == len(whole.skipped) + len(cut)
    assert [r.usage for r in s.requests] == [r.usage for r in whole.requests]
    a = Analysis(s)
    report_json(a, None)
    for i in range(len(s.requests)):
        a.breakdown(i)
    insights(s, a.estimator)
    for command in ("report", "insights"):
        assert main([command, str(path), "--json"]) == 0
    capsys.readouterr()


def test_a_qwen_code_record_that_closes_a_cycle(tmp_path: Path) -> None:
    lines = QWEN.read_text("utf-8").splitlines(keepends=True)
    at, first = next((i, json.loads(x)) for i, x in enumerate(lines) if '"uuid"' in x)
    first["parentUuid"] = first["uuid"]
    lines[at] = json.dumps(first) + "\n"
    path = tmp_path / "qwen.jsonl"
    path.write_text("".join(lines))
    assert _cycles(path) == [at + 1]
    assert len(load(str(path)).requests) == len(load(str(QWEN)).requests)
