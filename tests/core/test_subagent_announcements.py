"""What Claude Code sent a sub-agent that its transcript leaves out, read from its session.

Claude Code before 2.1.126 gave a sub-agent the deferred tools (and the skill
listing) from its second call on. The real 2.1.114 Opus 4.7 sub-agent of the
corpus grows by about 2,600 tokens more than its recorded text at that call; its
session (not in the corpus) recorded the two announcements as attachments. The
session here is written in their exact record shape, with listing text of the
same size.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.attribution import (
    UNATTRIBUTED,
    UNRECORDED_CAUSE,
    attribute,
    ratios,
    steps,
)
from ctxviewer.analysis.compare.scoring import compare
from ctxviewer.analysis.tokens.estimators import get_estimator
from ctxviewer.ingest import load
from ctxviewer.ingest.claude.subagents import UNRECORDED_NOTE, recorded_announcements

SESSION = "ef958aa1-0e93-49f0-bb71-150f63befcd1"
AGENT = "a52886dc180afb356"
SUBAGENT = (
    "handgemacht-ai__claude-code-log__test_test_data_real_projects_-experiments-worktrees_"
    f"{SESSION}_subagents_agent-{AGENT}.jsonl"
)
TOOLS = ["AskUserQuestion", "CronCreate", "EnterPlanMode", "LSP", "Monitor", "NotebookEdit"]
TOOLS += ["SendMessage", "TaskOutput", "TaskStop", "WebFetch", "WebSearch", "TeamCreate"]


def _listing() -> str:
    return "\n".join(
        f"- skill-{i}: Use this skill when the user asks to review, configure or explain "
        f"part {i} of the project; it reads the settings and reports what changed."
        for i in range(36)
    )


def _attachment(uuid: str, when: str, attachment: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "attachment",
        "uuid": uuid,
        "parentUuid": "u1",
        "isSidechain": False,
        "sessionId": SESSION,
        "version": "2.1.114",
        "timestamp": when,
        "attachment": attachment,
    }


def _project(
    tmp_path: Path, corpus: Path, *, session: bool = True, version: str = "2.1.114"
) -> Path:
    """A project folder as Claude Code writes it: the session and, beside it, the corpus
    sub-agent in ``<session>/subagents/``. Returns the sub-agent file."""
    sub = tmp_path / SESSION / "subagents" / f"agent-{AGENT}.jsonl"
    sub.parent.mkdir(parents=True)
    text = (corpus / "claude-code" / SUBAGENT).read_text(encoding="utf-8")
    sub.write_text(text.replace('"version":"2.1.114"', f'"version":"{version}"'), "utf-8")
    if session:
        first = json.loads(text.splitlines()[0])["timestamp"]
        records = [
            {
                "type": "user",
                "uuid": "u1",
                "parentUuid": None,
                "isSidechain": False,
                "sessionId": SESSION,
                "version": "2.1.114",
                "timestamp": "2026-04-18T13:00:00.000Z",
                "message": {"role": "user", "content": "Spawn the teammates."},
            },
            _attachment(
                "d1",
                "2026-04-18T13:00:00.100Z",
                {"type": "deferred_tools_delta", "addedNames": TOOLS, "removedNames": []},
            ),
            _attachment(
                "s1",
                "2026-04-18T13:00:00.200Z",
                {"type": "skill_listing", "content": _listing(), "skillCount": 36},
            ),
            # recorded after the sub-agent started: not what it was sent
            _attachment(
                "s2", "2099-01-01T00:00:00.000Z", {"type": "skill_listing", "content": "- late: x"}
            ),
        ]
        assert records[0]["timestamp"] < first < records[-1]["timestamp"]
        (tmp_path / f"{SESSION}.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in records), "utf-8"
        )
    return sub


def _unattributed_row(folder: Path) -> int:
    """The unattributed row of the sub-agent's second request, read from ``folder``."""
    s = load(str(folder / SESSION / "subagents" / f"agent-{AGENT}.jsonl"))
    b = Analysis(s).breakdown(1)
    return sum(i.tokens for c in b.categories for i in c.items if i.name == UNATTRIBUTED)


def test_a_subagent_alone_has_nothing_more(tmp_path: Path, corpus: Path) -> None:
    """Without its session beside it, the second call's jump stays unattributed."""
    s = load(str(_project(tmp_path, corpus, session=False)))
    assert all(not r.unrecorded for r in s.requests)
    a = attribute(s, get_estimator("qwen"))
    assert UNRECORDED_CAUSE not in a[1].causes and a[1].unattributed > 2_000


def test_the_session_names_what_the_second_call_was_sent(tmp_path: Path, corpus: Path) -> None:
    alone = attribute(
        load(str(_project(tmp_path / "a", corpus, session=False))), get_estimator("qwen")
    )
    s = load(str(_project(tmp_path / "b", corpus)))
    first, second = s.requests[0], s.requests[1]
    assert not first.unrecorded and UNRECORDED_NOTE in second.notes
    # the two announcements recorded before the sub-agent started, as Claude Code sent them
    texts = [b.text for m in second.unrecorded for b in m.blocks]
    assert any("The following deferred tools are now available via ToolSearch" in t for t in texts)
    assert any("skill-35:" in t for t in texts) and not any("- late:" in t for t in texts)
    assert all(not r.unrecorded for r in s.requests[2:])

    est = get_estimator("qwen")
    found = steps(s, est)
    step = found[1]
    assert step.unrecorded == est.messages(second.unrecorded) > 1_000
    assert not step.clean and step.sample() is None  # not a tokenizer's sample
    ratio = ratios(found, s).get(second.model, 1.0)
    a = attribute(s, est)
    named = a[1].causes[UNRECORDED_CAUSE]
    # never more than its calibrated estimate, and it takes what the file alone left over
    assert 0 < named <= round(step.unrecorded * ratio)
    assert a[1].unattributed < alone[1].unattributed - 1_000
    # carried along the conversation, and a row under Messages
    assert a[-1].causes[UNRECORDED_CAUSE] == named
    b = Analysis(s).breakdown(1)
    items = {i.name: i for c in b.categories if c.name == "messages" for i in c.items}
    rows = {name: i.tokens for name, i in items.items()}
    assert rows[UNRECORDED_CAUSE] == named
    # selected, the row shows the text that was sent, as the session recorded it
    ref = items[UNRECORDED_CAUSE].ref
    assert isinstance(ref, str) and "skill-35:" in ref and "WebSearch" in ref
    assert rows.get(UNATTRIBUTED, 0) < _unattributed_row(tmp_path / "a") - 1_000
    # compare does not score the estimators on a step holding text the log lacks
    assert 1 not in {r.index for r in compare(s).rows}


def test_the_session_read_with_its_subagents_gives_them_too(tmp_path: Path, corpus: Path) -> None:
    _project(tmp_path, corpus)
    s = load(str(tmp_path / f"{SESSION}.jsonl"))
    mine = [r for r in s.requests if r.agent == AGENT]
    assert len(mine) > 2 and not mine[0].unrecorded and mine[1].unrecorded
    assert UNRECORDED_CAUSE in attribute(s, get_estimator("qwen"))[mine[1].index].causes


@pytest.mark.parametrize("version", ["2.1.126", "2.1.332"])
def test_a_version_that_announces_on_the_first_call_gets_nothing(
    tmp_path: Path, corpus: Path, version: str
) -> None:
    s = load(str(_project(tmp_path, corpus, version=version)))
    assert all(not r.unrecorded for r in s.requests)


def test_an_unreadable_or_foreign_session_gives_nothing(tmp_path: Path) -> None:
    assert recorded_announcements(tmp_path / "missing.jsonl") == ()
    junk = tmp_path / "junk.jsonl"
    junk.write_bytes(b'{"type":"attachment", "skill_listing" broken\n\xff\xfe\n[1,2]\n')
    assert recorded_announcements(junk) == ()


def test_a_session_with_no_deferred_tools_announces_nothing(tmp_path: Path, corpus: Path) -> None:
    """The second-call announcement was seen with deferred tools: a session that
    recorded only a skill listing gives its sub-agents nothing."""
    sub = _project(tmp_path, corpus)
    session = tmp_path / f"{SESSION}.jsonl"
    lines = session.read_text("utf-8").splitlines(keepends=True)
    session.write_text("".join(x for x in lines if "deferred_tools_delta" not in x), "utf-8")
    assert all(not r.unrecorded for r in load(str(sub)).requests)


def _opens(path: Path) -> list[str]:
    """Each time this process opens ``path`` from now on (an audit hook: Python's own
    record of ``open`` calls)."""
    seen: list[str] = []
    target = str(path)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "open" and args and str(args[0]) == target:
            seen.append(event)

    sys.addaudithook(hook)
    return seen


def test_the_session_is_read_once_for_all_its_subagents(tmp_path: Path, corpus: Path) -> None:
    """Joined, a session's sub-agents share one read of its announcements: three
    sub-agents open the session file as often as one does."""
    opened = []
    for n in (1, 3):
        folder = tmp_path / str(n)
        sub = _project(folder, corpus)
        text = sub.read_text("utf-8")
        for k in range(1, n):  # more sub-agents of the same shape, as other calls
            copy = text.replace('"id":"msg_', f'"id":"msg_{k}').replace(
                '"requestId":"req_', f'"requestId":"req_{k}'
            )
            (sub.parent / f"agent-{AGENT[:-1]}{k}.jsonl").write_text(copy, "utf-8")
        session = folder / f"{SESSION}.jsonl"
        seen = _opens(session)
        s = load(str(session))
        opened.append(len(seen))
        assert sum(1 for r in s.requests if r.unrecorded) == n
    assert opened[0] == opened[1]
