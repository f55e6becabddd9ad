"""Claude Code transcripts: what attachments put before the model, sub-agents
joined to their session (their own files and the main file's progress records)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.insights.cost import session_cost
from ctxviewer.analysis.insights.subagents import subagent_runs
from ctxviewer.cli import main
from ctxviewer.ingest import load

SPOTTER_ID = "fa812bfe-b295-4cca-9c2f-fdf01028cb46"
SPOTTER = f"claude-code/marot__spotter__test_fixtures_transcripts_{SPOTTER_ID}"
SID = "0c0ffee0-0000-4000-8000-000000000001"


def _record(kind: str, uuid: str, parent: str | None, **fields) -> dict:
    return {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": SID,
        "version": "2.1.197",
        "timestamp": f"2026-11-20T10:00:{len(uuid):02d}.000Z",
        "isSidechain": False,
        **fields,
    }


def _transcript(tmp_path: Path) -> Path:
    listing = "- notes: Take notes.\n- review: Review the diff.\n  It reads every file first."
    records = [
        _record("user", "u1", None, message={"role": "user", "content": "Hello there"}),
        _record(
            "attachment",
            "a1",
            "u1",
            attachment={"type": "skill_listing", "content": listing, "isInitial": True},
        ),
        _record(
            "attachment",
            "a2",
            "a1",
            attachment={
                "type": "nested_memory",
                "content": {"path": "/p/sub/CLAUDE.md", "content": "# Rules\n- be brief\n" * 20},
            },
        ),
        _record(
            "attachment",
            "a3",
            "a2",
            attachment={
                "type": "hook_additional_context",
                "hookName": "UserPromptSubmit",
                "content": ["HOOK CONTEXT " * 50],
            },
        ),
        _record("attachment", "a4", "a3", attachment={"type": "hook_non_blocking_error"}),
        _record("attachment", "a5", "a4", attachment={"type": "brand_new_kind", "x": "y"}),
        _record(
            "assistant",
            "m1",
            "a5",
            requestId="req_1",
            message={
                "id": "msg_1",
                "role": "assistant",
                "model": "claude-opus-4-6",
                "content": [{"type": "text", "text": "Hi."}],
                "usage": {"input_tokens": 12_000, "output_tokens": 5},
            },
        ),
    ]
    path = tmp_path / f"{SID}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_attachments_count_where_they_belong(tmp_path):
    s = load(str(_transcript(tmp_path)))
    assert [sk.reason for sk in s.skipped] == ["attachment 'brand_new_kind': not counted"]
    texts = [b.text for m in s.requests[0].messages for b in m.blocks]
    assert any("HOOK CONTEXT" in t for t in texts)
    for counts in ("agent", "wire"):
        a = Analysis(s, counts=counts)
        b = a.breakdown(0)
        cats = {c.name: c for c in b.categories}
        assert {x.name for x in cats["skills"].items if x.kind == "skill"} == {"notes", "review"}
        assert cats["skills"].tokens > 0
        memory = cats["memory_files"]
        assert [x.name for x in memory.items] == ["/p/sub/CLAUDE.md"]
        assert memory.tokens == a.estimator.count("# Rules\n- be brief\n" * 20)
    # Claude Code's own listing estimate: the whole entry of "review", both lines
    agent = {x.name: x.tokens for x in Analysis(s).breakdown(0).category("skills").items}
    assert agent["review"] > agent["notes"]


def _spotter_layout(corpus: Path, tmp_path: Path) -> Path:
    """The spotter session laid out as Claude Code writes it: its sub-agents in a folder."""
    main_file = tmp_path / f"{SPOTTER_ID}.jsonl"
    shutil.copy(corpus / f"{SPOTTER}.jsonl", main_file)
    folder = tmp_path / SPOTTER_ID / "subagents"
    folder.mkdir(parents=True)
    for agent in ("a93ccab", "acompact-70d8e7"):
        shutil.copy(
            corpus / f"{SPOTTER}_subagents_agent-{agent}.jsonl", folder / f"agent-{agent}.jsonl"
        )
    return main_file


def test_subagents_join_their_session(corpus, tmp_path):
    s = load(str(_spotter_layout(corpus, tmp_path)))
    timestamps = [r.timestamp for r in s.requests]
    assert timestamps == sorted(timestamps) and [r.index for r in s.requests] == list(
        range(len(s.requests))
    )
    keys = [r.key for r in s.requests]
    assert len(keys) == len(set(keys))  # a call in both a file and progress records: once
    runs = {r.agent: r for r in subagent_runs(s, session_cost(s))}
    assert set(runs) == {"a93ccab", "aa84377", "acompact-70d8e7"}
    assert len(runs["a93ccab"].requests) == 11  # its file has one call more than progress
    assert len(runs["aa84377"].requests) == 8  # only in the main file's progress records
    for agent in ("a93ccab", "aa84377"):
        assert runs[agent].link == "exact" and runs[agent].cost_usd > 0
        assert runs[agent].description.startswith("Explore")
    compaction = runs["acompact-70d8e7"]
    assert compaction.link == "compaction" and compaction.peak_context == 169_290
    # the compaction call shares the main agent's system prompt + tools; the rest of its
    # prompt is the conversation it summarized, not "system prompt + tools"
    a = Analysis(s)
    b = a.breakdown(compaction.requests[0])
    main_b = a.breakdown(a.resolve_index("last"))
    assert (
        b.category("unrecorded_overhead").tokens
        == main_b.category("unrecorded_overhead").tokens
        < 40_000
    )
    assert any("compaction call" in n for n in b.source_notes)


def test_insights_json_lists_the_runs(corpus, tmp_path, capsys):
    assert main(["insights", str(_spotter_layout(corpus, tmp_path)), "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)["subagents"]
    assert {r["agent"] for r in runs} == {"a93ccab", "aa84377", "acompact-70d8e7"}
    assert all(r["cost_usd"] for r in runs)


def test_every_prompt_splits_into_exact_estimated_and_unattributed(corpus, capsys):
    """Over the real Claude Code transcripts, unattributed growth stays within 10% of the
    prompt on at least 90% of the requests, and the three parts sum to the API's count."""
    from ctxviewer.analysis.attribution import THINKING_CAUSE, attribute
    from ctxviewer.analysis.tokens.estimators import get_estimator

    shares = []
    for path in sorted((corpus / "claude-code").glob("*.jsonl")):
        s = load(str(path))
        for a, r in zip(attribute(s, get_estimator("qwen")), s.requests, strict=True):
            if r.usage is None or not r.usage.prompt_tokens:
                continue
            assert a.exact + a.estimated + a.unattributed == r.usage.prompt_tokens
            assert min(a.exact, a.estimated, a.unattributed) >= 0
            shares.append(a.unattributed / r.usage.prompt_tokens)
    assert len(shares) > 500
    assert sum(x <= 0.10 for x in shares) >= 0.9 * len(shares)
    # request 20: a thinking block's hidden length, in a chain that began before it
    assert main(["report", str(corpus / f"{SPOTTER}.jsonl"), "--json", "--request", "20"]) == 0
    out = json.loads(capsys.readouterr().out)
    last = out["requests"][out["breakdown"]["request"]]
    assert {k: last[k] for k in ("attributed_exact", "estimated", "unattributed")} == out[
        "breakdown"
    ]["attribution"]
    assert last["attributed_exact"] > 0 and last["estimated"] > 0
    messages = next(c for c in out["breakdown"]["categories"] if c["name"] == "messages")
    assert any(x["name"] == THINKING_CAUSE for x in messages["items"])  # evidence: thinking


def test_what_a_real_compaction_kept_and_dropped(corpus, capsys):
    from ctxviewer.analysis.insights.compaction_outcome import compaction_outcomes
    from ctxviewer.analysis.tokens.estimators import get_estimator

    lemmy = corpus / "claude-trace" / "badlogic__lemmy__apps_claude-trace_test_test-traffic.jsonl"
    [c] = compaction_outcomes(load(str(lemmy)), get_estimator("qwen"))
    assert (c.before_tokens, c.after_tokens) == (25_106, 21_803)  # the API's, exact
    kinds = {(p.kind, p.what) for p in c.parts}
    assert ("summary", "summary") in kinds and ("reattached", "file read again") in kinds
    assert any(k == "kept" and w.startswith("memory file") for k, w in kinds)
    assert c.tokens("dropped") > c.tokens("kept") > 0 and c.summary.startswith("This session")
    [spotter] = compaction_outcomes(load(str(corpus / f"{SPOTTER}.jsonl")), get_estimator("qwen"))
    assert spotter.before_tokens == 166_874 and spotter.tokens("dropped") > 100_000
    assert main(["insights", str(lemmy), "--json"]) == 0
    [out] = json.loads(capsys.readouterr().out)["compactions"]
    assert out["after"] == c.after and out["tokens"]["summary"] == c.tokens("summary")


def test_overhead_read_from_disk_when_the_project_is_here(tmp_path, monkeypatch):
    """The transcript's project exists: its memory files, skills and MCP servers are
    items of the inferred system prompt + tools, never more than it."""
    home, project = tmp_path / "home", tmp_path / "work" / "proj"
    (home / ".claude").mkdir(parents=True)
    (project / ".claude" / "skills" / "notes").mkdir(parents=True)
    (home / ".claude" / "CLAUDE.md").write_text("# Mine\n- short answers\n")
    (project / "CLAUDE.md").write_text("# Project\n" + "- rule\n" * 30)
    (project / ".claude" / "skills" / "notes" / "SKILL.md").write_text(
        "---\nname: notes\ndescription: Take notes.\n---\nBody.\n"
    )
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"weather": {}}}))
    monkeypatch.setenv("HOME", str(home))
    records = [
        _record("user", "u1", None, cwd=str(project), message={"role": "user", "content": "Hello"}),
        _record(
            "assistant",
            "m1",
            "u1",
            requestId="r1",
            cwd=str(project),
            message={
                "id": "m1",
                "role": "assistant",
                "model": "claude-opus-4-6",
                "content": [{"type": "text", "text": "Hi."}],
                "usage": {"input_tokens": 9_000, "output_tokens": 2},
            },
        ),
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    s = load(str(path))
    assert s.cwd == str(project)
    cat = Analysis(s).breakdown(0).category("unrecorded_overhead")
    names = [x.name for x in cat.items]
    assert f"memory: {home}/.claude/CLAUDE.md (read from disk now)" in names
    assert f"memory: {project}/CLAUDE.md (read from disk now)" in names
    assert "skill: notes (read from disk now)" in names
    assert "mcp server: weather (read from disk now)" in names
    assert sum(x.tokens for x in cat.items) <= cat.tokens and "read from disk now" in cat.note
    shutil.rmtree(project)  # gone from this machine: nothing is read
    assert not Analysis(load(str(path))).breakdown(0).category("unrecorded_overhead").items
