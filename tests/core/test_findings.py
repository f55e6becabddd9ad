"""Findings on real logs: unused tools and MCP servers checked against the files
(two worked out by hand), the breakdown's tokens x requests, the CLI's contract."""

from __future__ import annotations

import orjson
import pytest

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.findings import SEVERITIES, findings, rank
from ctxviewer.cli import main
from ctxviewer.ingest import load

LEMMY = "claude-trace/badlogic__lemmy__apps_claude-trace_test_test-traffic.jsonl"
CAPTURED = "captured/claude-code-2.1.197-tui.claude-trace.jsonl"
SPOTTER = (
    "claude-code/marot__spotter__test_fixtures_transcripts_"
    "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
)


def _by_code(found, code):
    return [f for f in found if f.code == code]


def test_lemmy_unused_tools_worked_out_by_hand(corpus):
    """Worked out by hand from the file: its 17 requests with tools define 15 built-in
    tools and mcp__ide__{executeCode,getDiagnostics}; the tool_use blocks in all its
    messages call Bash, Edit, LS, TodoWrite and Write, nothing else. So 12 tools are
    unused, and the ide server's two tools both are: one unused-mcp-server finding."""
    found = findings(Analysis(load(corpus / LEMMY)))
    unused = {f.items[0] for f in _by_code(found, "unused-tool")}
    assert unused == {
        "Glob",
        "Grep",
        "MultiEdit",
        "NotebookEdit",
        "NotebookRead",
        "Read",
        "Task",
        "TodoRead",
        "WebFetch",
        "WebSearch",
        "mcp__ide__executeCode",
        "mcp__ide__getDiagnostics",
    }
    servers = _by_code(found, "unused-mcp-server")
    assert [f.items[0] for f in servers] == ["ide"]
    # Read is the one tool the 17th tool list (a sub-agent's) also carries
    read = next(f for f in _by_code(found, "unused-tool") if f.items == ("Read",))
    assert len(read.requests) == 17
    assert read.tokens_carried == 17 * read.tokens_per_request
    assert all(len(f.requests) == 16 for f in _by_code(found, "unused-tool") if f is not read)


def test_lemmy_mcp_carry_is_tokens_times_requests_of_the_breakdown(corpus):
    """Worked out by hand: the ide server is 163 (executeCode) + 88 (getDiagnostics) =
    251 tokens in each of the 16 requests that carry it, 4,016 tokens over the session;
    the same as summing the server's row of every request's breakdown."""
    a = Analysis(load(corpus / LEMMY), counts="wire")
    server = _by_code(findings(a), "mcp-server-cost")[0]
    assert server.items[0] == "ide"
    assert server.tokens_per_request == 163 + 88
    assert len(server.requests) == 16
    assert server.tokens_carried == 16 * 251 == 4016
    rows = []
    for i in server.requests:
        cat = a.breakdown(i).category("mcp_tools")
        rows.append(next(x.tokens for x in cat.items if x.name == "ide"))
    assert sum(rows) == server.tokens_carried
    # carrying it cost money: the cache tiers add up to the tokens carried
    assert server.cost is not None and server.cost.tokens == server.tokens_carried
    assert server.usd is not None and server.usd > 0 and server.saved_usd == server.usd
    assert "/mcp" in server.action


def _raw_unused(path):
    """Tools defined in the trace's request bodies and called by none of its messages."""
    defined, called = set(), set()
    for line in path.read_bytes().splitlines():
        body = orjson.loads(line)["request"].get("body") or {}
        defined |= {t["name"] for t in body.get("tools") or ()}
        for m in body.get("messages", ()):
            if isinstance(m.get("content"), list):
                called |= {b["name"] for b in m["content"] if b.get("type") == "tool_use"}
    return defined - called


def test_captured_claude_code_session(corpus):
    """Claude Code 2.1.197's own requests: Read and notes-weather's get_weather were
    called; every other tool, search_notes included, is unused, so notes-weather is a
    server with an unused tool but no unused-mcp-server finding."""
    path = corpus / CAPTURED
    found = findings(Analysis(load(path)))
    unused = {f.items[0] for f in _by_code(found, "unused-tool")}
    assert unused == _raw_unused(path)
    assert "mcp__notes-weather__search_notes" in unused
    assert "Read" not in unused and "mcp__notes-weather__get_weather" not in unused
    assert not _by_code(found, "unused-mcp-server")
    server = _by_code(found, "mcp-server-cost")[0]
    assert server.items[0] == "notes-weather"
    assert "search_notes" in server.detail


def test_sorted_by_severity_then_tokens_carried(corpus):
    found = findings(Analysis(load(corpus / CAPTURED)))
    keys = [(-rank(f.severity), -(f.tokens_carried or 0)) for f in found]
    assert keys == sorted(keys)
    assert {f.severity for f in found} <= set(SEVERITIES)


def test_transcript_findings_from_insights(corpus):
    """A transcript records no tools: no tool findings, but its redundancy and cache
    breaks come through from the insights, with their requests."""
    found = findings(Analysis(load(corpus / SPOTTER)))
    codes = {f.code for f in found}
    assert not codes & {"unused-tool", "mcp-server-cost", "builtin-tools-cost"}
    assert {"repeated-content", "stale-content"} & codes
    for f in found:
        assert f.requests and f.action and f.title


def test_cli_json_and_fail_on(corpus, capsys):
    path = str(corpus / CAPTURED)
    assert main(["findings", path, "--json"]) == 0
    out = orjson.loads(capsys.readouterr().out)
    assert set(out) == {"findings"}
    first = out["findings"][0]
    for key in (
        "code",
        "severity",
        "title",
        "items",
        "requests",
        "tokens_per_request",
        "tokens_carried",
        "usd",
        "action",
    ):
        assert key in first
    worst = max(rank(f["severity"]) for f in out["findings"])
    assert main(["findings", path, "--fail-on", "warn"]) == (3 if worst >= rank("warn") else 0)
    capsys.readouterr()
    assert main(["findings", path, "--fail-on", "error"]) == (3 if worst >= rank("error") else 0)
    text = capsys.readouterr().out
    assert "unused-tool" in text and "->" in text


@pytest.mark.parametrize(
    "argv", [["findings", "/nonexistent.jsonl"], ["findings", "x", "--fail-on", "info"]]
)
def test_cli_bad_input(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("ctxviewer: ") and err.count("\n") == 1


def test_the_forecast_says_when_the_threshold_is_already_reached() -> None:
    """Requests that grew past the auto threshold without a compaction: the forecast
    says the next request compacts (not 'in 0 requests'), and by how much it is over."""
    from ctxviewer.analysis.agents.controls import controls
    from ctxviewer.analysis.findings.forecast import forecast_finding
    from ctxviewer.analysis.thresholds import thresholds
    from ctxviewer.model import Request, Usage

    sizes = [160_000, 163_000, 166_000, 169_000, 172_000]
    reqs = [
        Request(
            i,
            "claude-sonnet-4-5",
            f"2026-01-01T00:0{i}:00+00:00",
            (),
            (),
            (),
            Usage(input_tokens=n),
            True,
        )
        for i, n in enumerate(sizes)
    ]
    t = thresholds(200_000, "claude-code")
    f = forecast_finding(reqs, t, 200_000, controls("claude-code"))
    assert f is not None and f.severity == "error"
    assert f.title == (
        "Compaction forecast: the last request reached the auto-compaction "
        "threshold, the next one compacts"
    )
    from ctxviewer.fmt import fmt_tokens

    assert t.auto < 172_000
    assert (
        f"{fmt_tokens(172_000 - t.auto)} tokens over the auto-compaction threshold "
        f"({t.auto:,})" in f.detail
    )
    assert f.tokens_per_request == 3_000 and f.focus == 4
