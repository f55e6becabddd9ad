"""Agent profiles: identity, window, policy and the agent's own counting rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_logs import (
    CAPTURED,
    CAPTURED_CONTEXT,
    CC_SESSION,
    captured_records,
    count_call,
    qwen_session,
    with_headers,
    write_jsonl,
)

from ctxviewer.analysis.agents.context_output import parse as parse_context
from ctxviewer.analysis.agents.policy import rule_thresholds
from ctxviewer.analysis.agents.table import parse_version, profile, profiles
from ctxviewer.analysis.analysis import Analysis, env_pct_override
from ctxviewer.cli import main
from ctxviewer.ingest import load

SPOTTER = "claude-code/marot__spotter__test_fixtures_transcripts_fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
LEMMY = "claude-trace/badlogic__lemmy__apps_claude-trace_test_test-traffic.jsonl"
CODEX_066 = (
    "codex/lanegrid__agtrace__samples-tmp_.codex_sessions_2025_12_10_rollout-2025-12-10"
    "T04-55-16-019b04ae-b1c6-7c72-a134-a4c2de66058c.jsonl"
)


# -- the table ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "window", [1_000, 10_000, 32_000, 131_072, 200_000, 258_400, 1_000_000, 2_097_152]
)
def test_every_era_gives_ordered_thresholds(window):
    for prof in profiles().values():
        for era in prof.eras:
            for model in (None, "claude-opus-4-8", "gpt-5-codex", "qwen3-coder-plus"):
                t = rule_thresholds(
                    era.policy,
                    window,
                    model=model,
                    max_output=64_000,
                    raw_window=era.window_for(model),
                )
                assert 0 <= t.warn <= t.auto <= t.hard <= window, (prof.id, era.since)
                assert t.policy == "agent" and era.policy.label.startswith(t.label)


def test_claude_code_formula():
    rule = profile("claude-code").era((2, 1, 197)).policy
    t = rule_thresholds(rule, 200_000, max_output=64_000)
    assert (t.warn, t.auto, t.hard, t.effective) == (147_000, 167_000, 177_000, 180_000)
    t = rule_thresholds(rule, 200_000, max_output=8_000)  # reserves only the smaller cap
    assert (t.auto, t.hard) == (179_000, 189_000)
    assert rule_thresholds(rule, 1_000_000, max_output=64_000).auto == 967_000
    # CLAUDE_AUTOCOMPACT_PCT_OVERRIDE only lowers auto: 50% of the usable 180,000
    assert rule_thresholds(rule, 200_000, max_output=64_000, pct_override=50).auto == 90_000
    assert rule_thresholds(rule, 200_000, max_output=64_000, pct_override=99).auto == 167_000
    assert env_pct_override({"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "60"}) == 60.0
    assert env_pct_override({"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "x"}) is None


def test_claude_code_2_0_reserves_the_whole_max_output():
    """Before 2.1.21 the max output was not capped at 20k: a 2.0.76 transcript (no max
    output recorded: 32,000) compacted at 155,979 on claude-sonnet-4-5, under 167,000."""
    cc = profile("claude-code")
    rule = cc.era((2, 0, 76)).policy
    assert rule_thresholds(rule, 200_000, model="claude-sonnet-4-5").auto == 155_000
    assert rule_thresholds(rule, 200_000, max_output=64_000).auto == 123_000
    assert rule_thresholds(cc.era((2, 1, 21)).policy, 200_000, max_output=64_000).auto == 167_000
    assert rule_thresholds(cc.era((1, 0, 6)).policy, 200_000).auto == 167_000  # as it was
    new = cc.era((2, 1, 332))
    assert new.window_for("claude-opus-5-5") == 1_000_000
    assert new.window_for("claude-sonnet-4-5-20250929") == 200_000
    assert cc.era((2, 1, 197)).window_for("claude-opus-4-8") == 200_000


def test_qwen_code_by_version():
    qwen = profile("qwen-code")
    old = qwen.era((0, 15, 10))
    assert old.window_for("qwen3-coder-plus") == 131_072
    t = rule_thresholds(old.policy, 131_072)
    assert t.auto == 91_750 and t.buffer == 39_322  # its /context: buffer 39.3k (30%)
    ladder = qwen.era((0, 17, 0))
    assert ladder.window_for("qwen3-coder-plus") == 1_000_000
    t = rule_thresholds(ladder.policy, 200_000)  # the reference row of docs/estimators.md
    assert (t.warn, t.auto, t.hard, t.effective) == (147_000, 167_000, 177_000, 180_000)
    t = rule_thresholds(qwen.era((0, 24, 4)).policy, 200_000)
    assert t.auto == 167_000  # min(85% = 170,000, 200,000 - 20,000 - 13,000)
    assert qwen.era(None) is qwen.eras[-1]


def test_codex_and_gemini_rules():
    codex = profile("codex")
    t = rule_thresholds(
        codex.era((0, 66, 0)).policy, 258_400, model="gpt-5.1-codex-max", raw_window=272_000
    )
    assert t.auto == 244_800  # 90% of the model's 272,000
    assert rule_thresholds(codex.era((0, 39, 0)).policy, 272_000).auto == 272_000  # none
    gemini = profile("gemini-cli")
    assert gemini.era(None, "2025-12-09T19:50:00Z").policy.constant("pct") == 0.5
    assert gemini.era(None, "2025-08-01T00:00:00Z").policy.constant("pct") == 0.7
    assert gemini.era((0, 12, 0)).policy.constant("pct") == 0.2
    assert parse_version("claude-cli/2.1.197 (external, cli)") == (2, 1, 197)


# -- identity and window ----------------------------------------------------------------


def test_corpus_logs_are_their_agents(corpus):
    cases = {
        LEMMY: ("claude-code", (1, 0, 6), 200_000, "agent profile"),
        SPOTTER: ("claude-code", (2, 1, 39), 200_000, "agent profile"),
        CODEX_066: ("codex", (0, 66, 0), 258_400, "log"),
    }
    for name, (pid, version, window, source) in cases.items():
        a = Analysis(load(str(corpus / name)))
        assert (a.identity.profile.id, a.identity.version) == (pid, version), name
        assert (a.window, a.window_source) == (window, source), name
    a = Analysis(load(str(corpus / CODEX_066)))
    assert a.thresholds.auto == 244_800
    opencode = Analysis(load(str(next((corpus / "openai").glob("*.jsonl")))))
    assert opencode.identity.profile.id in ("anthropic-client", "openai-client")
    assert opencode.identity.version is None  # opencode's version is not an agent profile's


def test_claude_code_window_follows_its_mode(corpus, tmp_path):
    """The TUI uses 1M with the context-1m beta; print mode sends it and works with 200k."""
    tui = Analysis(load(str(corpus / CAPTURED)))
    assert tui.identity.interactive is True
    assert (tui.window, tui.window_source) == (1_000_000, "agent profile")
    printed = with_headers(
        captured_records(corpus), **{"User-Agent": "claude-cli/2.1.197 (external, sdk-cli)"}
    )
    a = Analysis(load(str(write_jsonl(tmp_path / "print.jsonl", printed))))
    assert a.identity.interactive is False and a.window == 200_000
    assert a.thresholds.auto == 167_000
    b = a.breakdown(a.resolve_index("last"))
    window = next(d for d in b.differences if d.what == "window")
    assert (window.agent, window.wire) == (200_000, 1_000_000)
    assert (
        Analysis(load(str(tmp_path / "print.jsonl")), window_override=500_000).window_source
        == "user"
    )


# -- the agent's own counts ----------------------------------------------------------------


def _with_counts(corpus: Path, tmp_path: Path, answers: dict[str, int | None]) -> Path:
    """The captured TUI trace, followed by the count_tokens calls Claude Code's
    /context makes: one per memory file and one per tool group."""
    records = with_headers(captured_records(corpus), **{"X-Claude-Code-Session-Id": CC_SESSION})
    headers = dict(records[-1]["request"]["headers"])
    last = records[-1]["request"]["body"]
    tools = last["tools"]
    mcp = [t for t in tools if t["name"].startswith("mcp__")]
    builtin = [t for t in tools if not t["name"].startswith("mcp__")]
    reminder = last["messages"][0]["content"][0]["text"]
    user_md = reminder[reminder.index("# User-level memory") :]
    user_md = user_md[: user_md.index("\n\nContents of")]
    ts = "2026-11-20T12:00:0{}.000Z"
    calls = [
        count_call(headers, ts.format(1), answers["memory"], text=user_md),
        count_call(headers, ts.format(2), answers["mcp"], tools=mcp),
        count_call(
            headers,
            ts.format(3),
            answers["skill"],
            tools=[t for t in tools if t["name"] == "Skill"],
        ),
        count_call(headers, ts.format(4), answers["builtin"], tools=builtin),
    ]
    return write_jsonl(tmp_path / "with-counts.jsonl", records + calls)


def test_claude_code_count_tokens_answers_are_its_numbers(corpus, tmp_path):
    path = _with_counts(
        corpus, tmp_path, {"memory": 41, "mcp": 700, "skill": 1_000, "builtin": 20_500}
    )
    s = load(str(path))
    assert len(s.token_counts) == 4 and len(s.requests) == 5  # counts are not requests
    a = Analysis(s)
    b = a.breakdown(a.resolve_index("last"))
    cats = {c.name: c for c in b.categories}
    assert cats["mcp_tools"].tokens == 200 and cats["mcp_tools"].basis == "count_tokens"
    assert sum(t.tokens for t in cats["mcp_tools"].items[0].items) == 200
    assert cats["builtin_tools"].tokens == (20_500 - 500) - (1_000 - 500)
    memory = {m.name: m.tokens for m in cats["memory_files"].items}
    assert memory["/srv/agentdemo1/home/.claude/CLAUDE.md"] == 41
    wire = Analysis(load(str(path)), counts="wire")
    assert wire.breakdown(4).category("mcp_tools").basis == "estimate"


def test_failed_count_tokens_calls_are_not_numbers(corpus, tmp_path):
    path = _with_counts(
        corpus, tmp_path, {"memory": None, "mcp": None, "skill": None, "builtin": None}
    )
    a = Analysis(load(str(path)))
    b = a.breakdown(a.resolve_index("last"))
    assert all(c.basis != "count_tokens" for c in b.categories)


def test_report_against_the_agents_own_context(corpus, capsys):
    path, context = corpus / CAPTURED, corpus / CAPTURED_CONTEXT
    assert main(["report", str(path), "--against", str(context)]) == 0
    out = capsys.readouterr().out
    assert "Against claude-code's own /context" in out
    assert main(["report", str(path), "--against", str(context), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["against"]["rows"]
    by = {r["what"]: r for r in rows}
    assert by["window"]["ok"] and by["skills"]["ok"] and by["free_space"]["ok"]
    assert all(r["ok"] for r in rows if r["what"].startswith("skills: "))
    assert main(["report", str(path), "--against", str(path)]) == 2  # not a /context output


def test_context_output_parser_keeps_printed_precision(corpus):
    ctx = parse_context((corpus / CAPTURED_CONTEXT).read_text("utf-8"))
    assert ctx.agent == "claude-code" and ctx.window.value == 1_000_000
    assert ctx.categories["system_prompt"].matches(1_649)
    assert not ctx.categories["system_prompt"].matches(1_800)
    assert ctx.items["memory_files"]["~/.claude/CLAUDE.md"].value == 37


# -- qwen-code ----------------------------------------------------------------------------


def test_qwen_code_counting_rules(tmp_path):
    s = load(str(write_jsonl(tmp_path / "qwen.jsonl", qwen_session(3))))
    a = Analysis(s)
    assert a.identity.label == "qwen-code 0.15.10"
    assert (a.window, a.thresholds.auto) == (131_072, 91_750)
    roles = [r.role for r in s.requests]
    assert roles == ["main", "main", "main", "subagent"]  # the memory-extraction agent
    b = a.breakdown(a.resolve_index("last"))
    assert b.request == 2 and b.counts == "agent"
    cats = {c.name: c for c in b.categories}
    wire_a = Analysis(s, counts="wire")
    wire = {c.name: c for c in wire_a.breakdown(2).categories}
    # memory without its marker lines
    est = a.estimator
    assert cats["memory_files"].tokens == est.count("# Project rules\n- Use four spaces.\n")
    assert wire["memory_files"].tokens > cats["memory_files"].tokens
    # the core prompt: no deferred-tools list, no auto memory
    assert wire["system_prompt"].tokens - cats["system_prompt"].tokens > 300
    # deferred tools counted though only their names are sent
    names = {t.name: t for t in cats["builtin_tools"].items}
    assert names["ask_user_question"].tokens == 751 and names["ask_user_question"].kind == "unsent"
    assert "ask_user_question" not in {t.name for t in wire["builtin_tools"].items}
    assert cats["mcp_tools"].items[0].name == "notes"
    assert {d.what for d in b.differences} >= {
        "memory files",
        "deferred-tools list",
        "auto-memory section",
        "tool ask_user_question",
    }
    assert cats["autocompact_buffer"].tokens == 39_322
    skills = {x.name: x for x in cats["skills"].items}
    assert skills["notes"].tokens > est.count("notes: Take notes.")  # its whole <skill> entry


# -- auxiliary traffic and sessions ---------------------------------------------------------


def test_probes_are_never_the_last_main_request(corpus, tmp_path):
    records = with_headers(captured_records(corpus), **{"X-Claude-Code-Session-Id": CC_SESSION})
    headers = dict(records[-1]["request"]["headers"])
    probes = []
    for i in range(3):
        probe = count_call(headers, f"2026-11-20T12:00:0{i}.000Z", 600)
        probe["request"]["url"] = "http://127.0.0.1:18080/v1/messages?beta=true"
        probe["request"]["body"]["max_tokens"] = 1
        probe["response"]["body"] = {
            "id": f"msg_probe{i}",
            "type": "message",
            "role": "assistant",
            "content": [],
            "usage": {"input_tokens": 600, "output_tokens": 1},
        }
        probes.append(probe)
    s = load(str(write_jsonl(tmp_path / "probes.jsonl", records + probes)))
    assert [r.role for r in s.requests[-3:]] == ["auxiliary"] * 3
    assert s.resolve_index("last") == 4


def test_a_recording_of_two_agents_is_two_sessions(corpus, tmp_path, capsys):
    cc = with_headers(captured_records(corpus), **{"X-Claude-Code-Session-Id": CC_SESSION})
    path = write_jsonl(tmp_path / "both.jsonl", cc + qwen_session(2))
    assert main(["report", str(path), "--sessions", "--json"]) == 0
    sessions = json.loads(capsys.readouterr().out)["sessions"]
    assert [(x["agent"], x["conversation"], x["requests"]) for x in sessions] == [
        ("Claude Code", CC_SESSION, 5),
        ("qwen-code", None, 3),
    ]
    assert main(["report", str(path), "--session", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["agent"]["id"] == "claude-code" and out["window"] == 1_000_000
    assert "subagent" not in {r["role"] for r in out["requests"]}  # not qwen's side agents
    assert main(["report", str(path), "--json"]) == 0  # the one with the last main request
    captured = capsys.readouterr()
    assert json.loads(captured.out)["agent"]["id"] == "qwen-code"
    assert "holds 2 sessions" in captured.err
    assert main(["report", str(path), "--session", "5"]) == 2


# -- compactions -----------------------------------------------------------------------------


def test_predicted_compactions_match_the_observed_ones(corpus, capsys):
    assert main(["report", str(corpus / SPOTTER), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    c = out["compactions"]
    boundary = [r["index"] for r in out["requests"] if "compact_boundary" in r["events"]]
    assert c["observed"] == boundary and len(boundary) == 1 and c["triggers"] == ["auto"]
    assert c["predicted"] == boundary and c["explained"] == [True]
    # a compaction far below the threshold was the user's: nothing predicts it
    a = Analysis(load(str(corpus / LEMMY)))
    assert a.compactions.observed == (57,) and a.compactions.predicted == ()
    assert Analysis(
        load(str(corpus / SPOTTER)), policy="qwen-legacy"
    ).compactions.predicted != tuple(boundary)


def test_a_logged_auto_compaction_outranks_the_profile(corpus, tmp_path):
    """The spotter transcript said to be 2.0.76: that profile's 155,000 would have fired
    several requests before the compaction the log records (preTokens 167,117 after a
    request of 166,899): the log's threshold wins, and the report says so."""
    text = (corpus / SPOTTER).read_text("utf-8").replace('"version":"2.1.39"', '"version":"2.0.76"')
    path = tmp_path / "spotter-2.0.76.jsonl"
    path.write_text(text, "utf-8")
    a = Analysis(load(str(path)))
    assert a.identity.version == (2, 0, 76)
    assert a.fired is not None and (a.fired.above, a.fired.at) == (166_899, 167_117)
    assert a.thresholds.auto == 167_117 and a.policy_source == "log"
    assert "155,000 would not have fired" in a.threshold_evidence
    assert a.compactions.predicted == a.compactions.observed == (144,)
    kept = Analysis(load(str(corpus / SPOTTER)))  # 2.1.39: its profile fits the log
    assert kept.thresholds.auto == 167_000 and kept.policy_source == "agent profile"
    assert not kept.threshold_evidence
    assert main(["report", str(path)]) == 0


def test_live_follow_classifies_as_a_full_load(corpus, tmp_path):
    """Followed in pieces, every request has the role a full load of the same bytes gives
    (qwen-code's memory-extraction agent is a sub-agent at once, not "main" until the end)."""
    import random

    from ctxviewer.ingest.follow.follower import Follower

    cc = with_headers(captured_records(corpus), **{"X-Claude-Code-Session-Id": CC_SESSION})
    data = write_jsonl(tmp_path / "all.jsonl", qwen_session(3) + cc).read_bytes()
    path, prefix = tmp_path / "live.jsonl", tmp_path / "prefix.jsonl"
    path.write_bytes(b"")
    follower = Follower(path)
    rnd, pos, checked = random.Random(3), 0, 0
    while pos < len(data):
        step = rnd.randint(200, 40_000)
        with open(path, "ab") as f:
            f.write(data[pos : pos + step])
        pos += step
        follower.poll()
        cut = data[:pos].rfind(b"\n") + 1
        if cut == 0:
            continue
        prefix.write_bytes(data[:cut])
        ref = load(str(prefix))
        assert [(r.role, r.agent) for r in follower.session.requests] == [
            (r.role, r.agent) for r in ref.requests
        ]
        checked += 1
    assert checked > 3
    assert [r.role for r in follower.session.requests[:4]] == ["main"] * 3 + ["subagent"]


def test_tail_names_the_agent_once_its_requests_arrive(tmp_path, capsys):
    from agent_logs import as_recording

    from ctxviewer.commands.tail import TailPrinter
    from ctxviewer.ingest.follow.follower import Follower

    lines = [json.dumps(r) + "\n" for r in as_recording(qwen_session(2))]
    path = tmp_path / "rec.jsonl"
    path.write_text(lines[0])  # the proxy started: its meta line, no exchange yet
    follower, printer = Follower(path), TailPrinter("qwen", "agent", None, False)
    printer.show(follower.poll())
    with open(path, "a") as f:
        f.writelines(lines[1:])
    printer.show(follower.poll())
    out = capsys.readouterr().out.splitlines()
    assert "0 requests" in out[0] and "Anthropic" not in out[0]
    assert out[1].startswith("-- qwen-code 0.15.10") and "window 131,072 (agent profile)" in out[1]
    assert " sub agent-" in out[-1]  # qwen-code's memory-extraction agent
    assert len(out) == 2 + 3


def test_the_parsed_profile_table_is_the_toml_of_today(tmp_path):
    """profiles.json (what commands read) is tools/agent_tables.py's output for today's
    profiles.toml: after editing the TOML, run ``python tools/agent_tables.py``."""
    import subprocess
    import sys
    import tomllib

    import orjson

    from ctxviewer.analysis.agents.table import PROFILES_JSON, PROFILES_TOML, read_profiles_toml

    out = tmp_path / "profiles.json"
    tool = Path(__file__).resolve().parents[2] / "tools" / "agent_tables.py"
    subprocess.run(
        [sys.executable, str(tool), "--out", str(out)], check=True, capture_output=True, timeout=60
    )
    assert out.read_bytes() == PROFILES_JSON.read_bytes(), (
        "profiles.json is stale: run python tools/agent_tables.py"
    )
    toml = tomllib.loads(PROFILES_TOML.read_text("utf-8"))
    assert orjson.loads(PROFILES_JSON.read_bytes())["data"] == toml == read_profiles_toml()
