"""The real agents' own /context against ctxviewer, on their captured runs.

tests/data/agents/<agent>-<version>/<scenario>/ holds one run of the real agent (installed
from npm, run against fake servers on loopback, through ``ctxviewer proxy``): ``case.json``,
the agent's own ``/context`` text and, xz-compressed, the recording and the agent's own log.
Each test reads them at run time and holds every row the agent printed (window, thresholds,
used, each category and item) against ``report --json`` of the recording, within 5% or the
rounding the agent printed. The rows known to be off say why, and must be off.
"""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest

from ctxviewer.analysis.agents.context_output import compare, parse
from ctxviewer.analysis.agents.sessions import default_session, split
from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.report import report_json
from ctxviewer.ingest import load
from ctxviewer.model import Session

DATA = Path(__file__).resolve().parents[1] / "data" / "agents"
CASES = sorted(p.parent for p in DATA.glob("*/*/case.json"))

# (case, output, log) -> {row: why it is off}
KNOWN_OFF: dict[tuple[str, str, str], dict[str, str]] = {
    ("claude-code-2.1.332/tui", "/context all", "recording"): {
        "messages": "the first /context's output joined the conversation; no request sent it"},
    ("qwen-code-0.15.10/proxy", "/context -d", "recording"): {
        "mcp_tools": "a deferred MCP tool is sent by name only: its schema is not in the log",
        "mcp_tools: notes-weather__search_notes": "the same deferred MCP tool"},
}


def _case(folder: Path) -> dict[str, object]:
    return json.loads((folder / "case.json").read_text("utf-8"))


def _session(path: Path) -> Session:
    parts = split(load(str(path)))
    return parts[default_session(parts)] if len(parts) > 1 else parts[0]


def _tables() -> list[object]:
    out = []
    for folder in CASES:
        case = _case(folder)
        key = f"{case['agent']}-{case['version']}/{case['scenario']}"
        for output in case["outputs"]:  # type: ignore[attr-defined]
            out.append(pytest.param(folder, output, id=f"{key} {output}"))
    return out


@pytest.mark.parametrize(("folder", "output"), _tables())
def test_the_recording_against_the_agents_own_context(folder: Path, output: str) -> None:
    case = _case(folder)
    key = f"{case['agent']}-{case['version']}/{case['scenario']}"
    theirs = parse((folder / case["outputs"][output]).read_text("utf-8"))  # type: ignore[index]
    log = folder / (case["logs"]["recording"] + ".xz")  # type: ignore[index]
    rows = compare(theirs, report_json(Analysis(_session(log))))
    known = KNOWN_OFF.get((key, output, "recording"), {})
    off = {r["what"]: (r["agent"], r["ours"]) for r in rows if not r["ok"]}
    assert set(off) == set(known), f"{key} {output}: off {off}, known {sorted(known)}"
    names = {r["what"] for r in rows}
    assert {"window", "used"} <= names  # the window and the total are always held
    assert sum(1 for r in rows if r["what"] in theirs.categories) == len(theirs.categories)


def test_every_new_version_is_captured() -> None:
    have = {"{agent}-{version}".format(**_case(f)) for f in CASES}
    assert {"claude-code-2.1.332", "qwen-code-0.24.4", "claude-code-2.1.197",
            "qwen-code-0.15.10"} <= have


def _folder(key: str) -> Path:
    return DATA / key


def test_claude_code_2_1_332_thresholds_are_its_own() -> None:
    """1M for claude-opus-5-5 without the context-1m beta, the buffer row, auto at
    window - buffer: from its /context, print mode and TUI alike."""
    for key, output in (("claude-code-2.1.332/print", "context.txt"),
                        ("claude-code-2.1.332/tui", "context_all.txt")):
        theirs = parse((_folder(key) / output).read_text("utf-8"))
        a = Analysis(_session(_folder(key) / "recording.rec.jsonl.xz"))
        assert not any(r.window_hint for r in a.session.requests)  # no context-1m beta sent
        assert theirs.window is not None and a.window == theirs.window.value
        assert a.window_source == "agent profile"
        buffer = theirs.categories["autocompact_buffer"].value
        assert a.thresholds.auto == a.window - buffer
        assert a.breakdown(a.resolve_index("last")).category("autocompact_buffer").tokens \
            == buffer


def test_claude_code_2_1_332_deferred_tools_are_outside_its_total() -> None:
    theirs = parse((_folder("claude-code-2.1.332/print") / "context.txt").read_text("utf-8"))
    a = Analysis(_session(_folder("claude-code-2.1.332/print") / "recording.rec.jsonl.xz"))
    b = a.breakdown(a.resolve_index("last"))
    outside = {c.name: c for c in b.outside}
    assert set(outside) == {"builtin_tools_deferred", "mcp_tools_deferred"}
    for name, c in outside.items():
        assert theirs.categories[name].matches(c.tokens) and c.basis == "count_tokens"
    assert sum(c.tokens for c in b.categories) == b.window  # the total leaves them out
    assert b.used == b.total


def test_a_claude_code_2_1_332_model_of_200k_shows_no_buffer(tmp_path: Path) -> None:
    """The buffer row is there for a model with a 1M window of its own only."""
    raw = lzma.decompress((_folder("claude-code-2.1.332/print")
                           / "recording.rec.jsonl.xz").read_bytes())
    path = tmp_path / "sonnet45.rec.jsonl"
    path.write_bytes(raw.replace(b'"claude-opus-5-5"', b'"claude-sonnet-4-5"'))
    a = Analysis(_session(path))
    assert (a.window, a.thresholds.auto) == (200_000, 167_000)
    b = a.breakdown(a.resolve_index("last"))
    assert b.category("autocompact_buffer").tokens == 0
    assert b.category("free_space").tokens == b.window - b.used


def test_claude_code_2_1_332_transcripts_hold_its_prompt() -> None:
    """api-request-shape, api-request and the rendered attachments: the transcript's
    requests carry the system prompt, the tools, the output cap and the CLAUDE.md files."""
    for key in ("claude-code-2.1.332/print", "claude-code-2.1.332/tui"):
        folder = _folder(key)
        case = _case(folder)
        s = _session(folder / "transcript.jsonl.xz")
        assert not s.skipped, s.skipped[:3]
        last = s.requests[-1]
        assert last.system and last.tools and last.max_tokens == 128_000
        assert not any(t.text.startswith("x-anthropic-billing-header") for t in last.system)
        a = Analysis(s)
        b = a.breakdown(len(s.requests) - 1)
        assert b.category("unrecorded_overhead") is None
        output = list(case["outputs"].values())[-1]  # type: ignore[attr-defined]
        theirs = parse((folder / output).read_text("utf-8"))  # /context all: with its items
        files = {i.name for i in b.category("memory_files").items}
        assert len(files) == len(theirs.items["memory_files"]) == 2
        for name in ("system_prompt", "builtin_tools", "skills"):  # estimates: within 5%
            assert theirs.categories[name].matches(b.category(name).tokens), name
        assert a.window == theirs.window.value


def test_qwen_code_0_24_4_rows_of_its_own() -> None:
    folder = _folder("qwen-code-0.24.4/proxy")
    theirs = parse((folder / "context_detail.txt").read_text("utf-8"))
    a = Analysis(_session(folder / "recording.rec.jsonl.xz"))
    b = a.breakdown(a.resolve_index("last"))
    assert {"startup_context", "unattributed"} <= {c.name for c in b.categories}
    auto = next(i for i in b.category("memory_files").items if i.name == "auto memory")
    assert theirs.items["memory_files"]["auto memory"].matches(auto.tokens)
    skills = b.category("skills")
    assert {i.name for i in skills.items} >= {k for k, v in theirs.items["skills"].items()
                                             if v.value}
    t = a.thresholds
    for name in ("effective", "warn", "auto", "hard"):
        assert getattr(t, name) == theirs.thresholds[name].value
