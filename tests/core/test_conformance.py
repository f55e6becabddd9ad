"""The agents' own numbers against ctxviewer's, on real runs of the agents.

tests/data/agents/<agent>-<version>/<scenario>/ holds what ``tools/conformance/run.py --save``
captured from the real agent (installed from npm, run against fake servers on loopback):
its own ``/context``, ``/status`` or ``-o json`` output, its own log (transcript, rollout or
chat file), through ``ctxviewer proxy`` the recording, and the requests as sent. Each table
of ``tools/conformance/compare.py`` (the one ``run.py --compare`` prints) is one test: the
window, the thresholds, the use and every category and item the agent printed, each within
5% or the rounding the agent printed; for Codex and Gemini CLI also the system prompt and
tools as sent.

A row off today has its reason in ``tools/conformance/known_off.py``: most are rows the log
cannot match (what the agent counted is not in it). Each is a strict xfail of its own; a fix
makes it pass, which strict makes a failure until its entry goes. Every other row must be
within tolerance.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from conformance import cases, compare
from conformance.known_off import KNOWN_OFF, covers

from ctxviewer.analysis.agents.context_output import parse
from ctxviewer.ingest import load

DATA = ROOT / "tests" / "data" / "agents"
CAPTURED = cases.find(DATA)
TABLES = {
    f"{c.key} {output} vs {log}": (c, output, log)
    for c in CAPTURED
    for output, log in compare.specs(c)
}


def _table(key: str) -> compare.Table:
    return compare.table(*TABLES[key])


@pytest.mark.parametrize("key", list(TABLES))
def test_ctxviewer_matches_the_agent(key: str) -> None:
    """Every row within tolerance but those known to be off, and those still off."""
    table = _table(key)
    assert table.rows, f"{key}: nothing to compare ({table.note})"
    assert not table.unexplained, compare.render(table)
    assert not table.stale, f"{key}: within tolerance now, drop from known_off.py: {table.stale}"


def test_every_known_row_names_a_table() -> None:
    assert set(KNOWN_OFF) <= set(TABLES), sorted(set(KNOWN_OFF) - set(TABLES))


def _known() -> list[object]:
    return [
        pytest.param(
            key,
            pattern,
            id=f"{key}: {pattern}",
            marks=pytest.mark.xfail(strict=True, reason=reason),
        )
        for key, rows in KNOWN_OFF.items()
        for pattern, reason in rows.items()
    ]


@pytest.mark.parametrize(("key", "pattern"), _known())
def test_a_row_known_to_be_off(key: str, pattern: str) -> None:
    """Off today for the reason it gives; a fix makes this pass (strict: then drop it)."""
    rows = [r for r in _table(key).rows if covers(pattern, r.what)]
    assert rows and all(r.ok for r in rows), [(r.what, r.agent, r.ours) for r in rows]


def test_every_agent_version_is_captured() -> None:
    have = {f"{c.agent}-{c.version}" for c in CAPTURED}
    assert have >= {
        "claude-code-2.1.197",
        "claude-code-2.1.332",
        "qwen-code-0.15.10",
        "qwen-code-0.24.4",
        "codex-0.171.0",
        "gemini-cli-0.61.0",
    }


@pytest.mark.parametrize("case", CAPTURED, ids=lambda c: c.key)
def test_every_step_of_the_run_worked(case: cases.Case) -> None:
    """The agent did each turn and printed its numbers: the capture is a whole conversation."""
    assert case.steps and not case.failed_steps
    for name in (*case.outputs.values(), *case.logs.values()):
        assert case.file(name).stat().st_size > 0, name


SECRETS = re.compile(
    r"sk-ant-(?!dummy)[\w-]{20,}|sk-(?:proj-)?[A-Za-z0-9]{32,}|AIza[\w-]{35}"
    r"|Bearer (?!<redacted)[\w.-]{20,}|ghp_\w{30,}"
)


def test_no_secret_in_the_captures() -> None:
    """The fakes take dummy keys and every recorder redacts its headers: nothing that looks
    like a real key may be in the test data."""
    checked = 0
    for case in CAPTURED:
        for name in {*case.outputs.values(), *case.logs.values(), case.wire or "case.json"}:
            text = case.text(name)
            assert not SECRETS.search(text), f"{case.key}/{name}: {SECRETS.search(text)}"
            checked += 1
    assert checked >= len(CAPTURED) * 2


def test_every_file_is_part_of_one_case_and_small() -> None:
    """One layout: each folder a case, each file named by its case.json (the logs
    xz-compressed), no log twice, nothing big; README.md says where they come from."""
    named: set[Path] = set()
    seen: dict[str, str] = {}
    for case in CAPTURED:
        files = {case.file(n) for n in (*case.outputs.values(), *case.logs.values())}
        files |= {case.file(case.wire)} if case.wire else set()
        named |= files | {case.folder / "case.json"}
        for name in {*case.logs.values(), *([case.wire] if case.wire else [])}:
            assert case.file(name).suffix == ".xz", f"{case.key}/{name}"
            digest = hashlib.sha256(case.text(name).encode()).hexdigest()
            assert seen.setdefault(digest, f"{case.key}/{name}") == f"{case.key}/{name}"
        assert sum(p.stat().st_size for p in files) < 128 * 1024, case.key
    on_disk = {p for p in DATA.rglob("*") if p.is_file()} - {DATA / "README.md"}
    assert on_disk == named, sorted(str(p.relative_to(DATA)) for p in on_disk ^ named)
    assert max(p.stat().st_size for p in on_disk) < 64 * 1024


# -- how the comparison measures ----------------------------------------------------------


def _exchanges(case: cases.Case) -> list[dict[str, object]]:
    lines = [json.loads(x) for x in case.text(case.wire or "").splitlines()]
    return [
        r["request"]["body"] if r.get("type") == "exchange" else r["body"]
        for r in lines
        if r.get("type") == "exchange" or "body" in r
    ]


def test_the_wire_table_is_of_the_last_turn_not_the_title_call() -> None:
    """Codex's TUI names its chat's title last, with fewer tools: the table holds the
    request ctxviewer's breakdown is of, the TUI turn before it."""
    case = _case("codex-0.171.0/proxy")
    bodies = _exchanges(case)
    assert len(bodies) == 5 and compare.last_turn_body(case) == bodies[3] != bodies[4]
    for key in ("codex-0.171.0/proxy wire vs recording", "codex-0.171.0/direct wire vs rollout"):
        assert _table(key).ok, compare.render(_table(key))


def test_what_was_sent_is_measured_as_sent() -> None:
    """The agents send compact JSON: the fakes' logs say how many bytes each body was."""
    checked = 0
    for key in ("codex-0.171.0/direct", "gemini-cli-0.61.0/direct"):
        for line in _case(key).text("fake.jsonl").splitlines():
            rec = json.loads(line)
            assert len(compare.sent_json(rec["body"]).encode()) == rec["body_bytes"]
            checked += 1
    assert checked >= 8


def test_an_overhead_not_recorded_is_held_against_the_sum_it_stands_for() -> None:
    """qwen-code's chat file records no request: ctxviewer's one "not recorded" row is held
    against the agent's system prompt, tools, memory, skills, startup context and
    Unattributed together; those rows have nothing of ours beside them."""
    table = _table("qwen-code-0.24.4/direct /context -d vs chat")
    rows = {r.what: r for r in table.rows}
    theirs = parse(_case("qwen-code-0.24.4/direct").text("context_detail.txt"))
    parts = (
        "system_prompt",
        "builtin_tools",
        "memory_files",
        "skills",
        "startup_context",
        "unattributed",
    )
    assert rows["unrecorded_overhead"].agent == sum(theirs.categories[k].value for k in parts)
    assert rows["unrecorded_overhead"].ok
    assert all(rows[k].ours is None for k in parts if k not in ("memory_files", "skills"))


# -- the parser on each agent's real output ------------------------------------------------


def _case(key: str) -> cases.Case:
    return next(c for c in CAPTURED if c.key == key)


def test_parser_reads_claude_code_2_1_332() -> None:
    """Deferred tool rows (print mode) and the TUI's auto-compact window and loaded MCP tool."""
    printed = parse(_case("claude-code-2.1.332/print").text("context.txt"))
    assert {"mcp_tools_deferred", "builtin_tools_deferred", "autocompact_buffer"} <= set(
        printed.categories
    )
    assert printed.window is not None and printed.window.value == 1_000_000
    tui = _case("claude-code-2.1.332/tui")
    full = parse(tui.text("context_all.txt"))
    assert full.thresholds["auto_window"].value == 1_000_000
    assert list(full.items["mcp_tools"]) == ["mcp__notes-weather__get_weather"]  # "Loaded"
    assert {"~/.claude/CLAUDE.md", "CLAUDE.md"} <= set(full.items["memory_files"])


def test_parser_reads_qwen_code_0_24_4_thresholds_and_new_rows() -> None:
    ctx = parse(_case("qwen-code-0.24.4/proxy").text("context_detail.txt"))
    assert set(ctx.thresholds) == {"effective", "warn", "auto", "hard"}
    assert ctx.thresholds["effective"].value == ctx.window.value - 20_000  # "window − 20,000"
    assert {"startup_context", "unattributed"} <= set(ctx.categories)


def test_parser_reads_codex_status() -> None:
    ctx = parse(_case("codex-0.171.0/proxy").text("status.txt"))
    assert ctx.agent == "codex" and ctx.command == "/status"
    assert ctx.window is not None and ctx.used is not None
    assert ctx.used.value < ctx.window.value and not ctx.categories


# -- Claude Code's parallel tool calls ----------------------------------------------------


def _tool_blocks(path: Path) -> set[tuple[str, str]]:
    return {
        (b.kind, b.ref)
        for r in load(str(path)).requests
        for m in r.messages
        for b in m.blocks
        if b.kind in ("tool_use", "tool_result") and b.ref
    }


@pytest.mark.parametrize("key", ["claude-code-2.1.197/parallel", "claude-code-2.1.332/parallel"])
def test_parallel_tool_calls_survive_the_transcript(key: str) -> None:
    """One reply with three Read calls: the transcript read back holds the calls and results
    the recording shows were sent. Claude Code writes one record per call and hangs each
    result on its call's record; the chain goes on from the last result only."""
    case = _case(key)
    sent = _tool_blocks(case.file(case.logs["recording"]))
    assert len(sent) >= 6  # three calls, three results
    read = _tool_blocks(case.file(case.logs["transcript"]))
    assert read == sent, f"lost: {sorted(sent - read)}; not sent: {sorted(read - sent)}"
