"""Live compaction on what the real agents sent: their rules survive the rewrite.

The recordings in tests/data/live_compact were made through ``ctxviewer proxy``
from the real Claude Code 2.1.332 (``-p --continue``), qwen-code 0.24.4
(``-c``) and Codex CLI 0.171.0 (``exec``, then ``exec resume --last``), six
turns each, each run against a fake model on loopback in a sandbox project whose
CLAUDE.md / QWEN.md / AGENTS.md hold ``RULE-…`` lines. Each test replays the
agent's model calls, byte for byte with its own headers, through a proxy with
``--compact-at`` in front of an upstream that enforces the APIs' rules, and
reads what reached the upstream.
"""

from __future__ import annotations

import lzma
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from strict_upstream import StrictUpstream

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.report import report_json
from ctxviewer.analysis.timeline_view.view import from_analysis
from ctxviewer.ingest.loader import load
from ctxviewer.model import PROXY_UNDO
from ctxviewer.proxy.rewrite import Rewriter
from ctxviewer.proxy.thread import ProxyThread

CAPTURES = Path(__file__).resolve().parents[1] / "data" / "live_compact"
SENT_HEADERS = (
    "user-agent",
    "x-claude-code-session-id",
    "session_id",
    "anthropic-version",
    "anthropic-beta",
    "content-type",
)

# What the agent injected that a compaction must keep, as the agent sent it.
CLAUDE_CODE = {
    "project CLAUDE.md": "RULE-PROJ-1",
    "the user's CLAUDE.md": "RULE-USER-1",
    "the environment": "Primary working directory: /work/rc/proj",
    "the skill listing": "The following skills are available for use with the Skill tool",
    "the deferred tools": "deferred tools are now available via ToolSearch",
}
QWEN_CODE = {
    "project QWEN.md": "RULE-QWEN-PROJ-1",
    "the user's QWEN.md": "RULE-QWEN-USER-1",
    "the environment": "I'm currently working in the directory",
    "the skill listing": "<available_skills>",
    "the deferred tools": "reachable through `tool_search`",
}
CODEX = {
    "AGENTS.md": "RULE-CODEX-2",
    "the environment": "<environment_context>",
    "the base instructions": "You are Codex",
    "the tool schemas": '"additional_tools"',
    "the skill listing": "<skills_instructions>",
}


def agent_calls(name: str) -> Iterator[tuple[str, dict[str, str], dict[str, Any]]]:
    """The recording's model calls in order: path, the agent's own headers, body."""
    with lzma.open(CAPTURES / name) as f:
        for line in f:
            rec = orjson.loads(line)
            body = rec.get("request", {}).get("body")
            if (
                rec.get("type") != "exchange"
                or not isinstance(body, dict)
                or rec["path"].endswith("count_tokens")
            ):
                continue
            headers = {k: v for k, v in rec["request"]["headers"].items() if k in SENT_HEADERS}
            yield rec["path"], headers, body


def replay(proxy: ProxyThread, name: str) -> list[dict[str, Any]]:
    """Send the agent's calls through ``proxy`` as it sent them; the bodies sent."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    sent = []
    for path, headers, body in agent_calls(name):
        request = urllib.request.Request(
            proxy.url + path,
            data=orjson.dumps(body),
            method="POST",
            headers={**headers, "x-api-key": "sk-ant-test", "authorization": "Bearer sk-test"},
        )
        with opener.open(request, timeout=30) as answer:
            assert answer.status == 200
            answer.read()
        sent.append(body)
    return sent


@pytest.fixture
def compacting_proxy(
    strict: StrictUpstream, tmp_path: Path
) -> Iterator[Callable[[int], ProxyThread]]:
    started: list[ProxyThread] = []

    def make(compact_at: int) -> ProxyThread:
        proxy = ProxyThread(
            port=0,
            out=tmp_path / "rec.jsonl",
            upstream=strict.url,
            openai_upstream=strict.url,
            timeout=10.0,
            rewriter=Rewriter(compact_at=compact_at),
        )
        proxy.start()
        started.append(proxy)
        return proxy

    yield make
    for proxy in started:
        proxy.stop()


@pytest.mark.parametrize(
    ("capture", "api", "compact_at", "kept"),
    [
        ("claude-code-2.1.332.rec.jsonl.xz", "anthropic", 15_000, CLAUDE_CODE),
        ("qwen-code-0.24.4.rec.jsonl.xz", "chat", 24_000, QWEN_CODE),
        ("codex-0.171.0.rec.jsonl.xz", "responses", 17_000, CODEX),
    ],
    ids=["claude-code", "qwen-code", "codex"],
)
def test_a_live_compaction_keeps_what_the_agent_injected(
    compacting_proxy: Callable[[int], ProxyThread],
    strict: StrictUpstream,
    capture: str,
    api: str,
    compact_at: int,
    kept: dict[str, str],
) -> None:
    proxy = compacting_proxy(compact_at)
    sent = replay(proxy, capture)
    seen = strict.bodies(api)
    assert len(seen) == len(sent)
    rewritten = [(s, u) for s, u in zip(sent, seen, strict=True) if s != u]
    assert rewritten, "the rewrite never fired"
    for original, upstream in rewritten:
        text = orjson.dumps(upstream).decode()
        assert len(text) < len(orjson.dumps(original))
        missing = [
            what
            for what, marker in kept.items()
            if marker in orjson.dumps(original).decode() and marker not in text
        ]
        assert missing == [], f"lost in the rewrite: {', '.join(missing)}"
        assert "Summary of the earlier conversation" in text
    # every rule the agent sent is in what the model saw, each request after the rewrite
    first = orjson.dumps(rewritten[0][0]).decode()
    assert all(marker in first for marker in kept.values())
    assert [s for _a, _r, s in strict.received] == [200] * len(strict.received)


def test_the_summary_follows_the_agents_first_message_blocks(
    compacting_proxy: Callable[[int], ProxyThread], strict: StrictUpstream
) -> None:
    """Claude Code: the first user message's <system-reminder> blocks stay first and in
    order, the summary comes after them (never where a rule stood), and the
    environment's system message stays in its place."""
    proxy = compacting_proxy(15_000)
    sent = replay(proxy, "claude-code-2.1.332.rec.jsonl.xz")
    seen = strict.bodies("anthropic")
    original, upstream = next((s, u) for s, u in zip(sent, seen, strict=True) if s != u)
    reminders = [
        b
        for b in original["messages"][0]["content"]
        if b.get("text", "").startswith("<system-reminder>")
    ]
    first = upstream["messages"][0]["content"]
    assert first[: len(reminders)] == reminders
    assert "Summary of the earlier conversation" in first[len(reminders)]["text"]
    assert upstream["messages"][1] == original["messages"][1]
    assert upstream["messages"][1]["role"] == "system"


def test_the_recording_shows_the_rewrite_and_its_undo(
    strict: StrictUpstream, tmp_path: Path
) -> None:
    """A live compaction is a compaction in every view (trigger ``proxy``: the report's
    observed compactions, the timeline's marks and title, the request list), and so
    is its undo."""
    rewriter = Rewriter(compact_at=15_000)
    proxy = ProxyThread(
        port=0,
        out=tmp_path / "rec.jsonl",
        upstream=strict.url,
        openai_upstream=strict.url,
        timeout=10.0,
        rewriter=rewriter,
    )
    proxy.start()
    try:
        calls = list(agent_calls("claude-code-2.1.332.rec.jsonl.xz"))
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        for i, (path, headers, body) in enumerate(calls):
            if i == len(calls) - 1:  # the user undoes it before the last turn
                (conv,) = rewriter.conversations()
                rewriter.undo(conv["conversation"])
            request = urllib.request.Request(
                proxy.url + path, data=orjson.dumps(body), method="POST", headers=headers
            )
            with opener.open(request, timeout=30) as answer:
                answer.read()
    finally:
        proxy.stop()
    a = Analysis(load(str(proxy.out)))
    rewritten = [
        r.index
        for r in a.session.requests
        if any(n.startswith("rewritten by the proxy") for n in r.notes)
    ]
    assert rewritten and rewritten[-1] == len(calls) - 2
    assert a.compactions.observed == (rewritten[0],)
    assert a.compactions.triggers == ("proxy",)
    [event] = [e for e in a.session.requests[rewritten[0]].events if e.trigger == "proxy"]
    assert event.post_tokens is not None and event.pre_tokens is not None
    assert event.post_tokens < event.pre_tokens
    assert [e.kind for e in a.session.requests[-1].events] == [PROXY_UNDO]
    view = from_analysis(a)
    labels = [m.label() for m in view.marks]
    assert labels[0].startswith(
        f"compaction (proxy)\n{event.pre_tokens:,} \u2192 {event.post_tokens:,}"
    )
    assert any(label.startswith("live compaction undone") for label in labels)
    assert "(1 happened)" in view.whatif.title
    assert "proxy" in orjson.dumps(report_json(a)["compactions"]).decode()


def test_a_live_plan_judges_its_target_on_the_api_count() -> None:
    """Trim's budget is 37.5% of the window; on Claude Code's real request, whose system
    prompt and tools alone weigh more than that of a 15,000-token window, the plan says
    by how much it misses, in the API's tokens (the conversation's tokens per byte)."""
    from ctxviewer.analysis.thresholds import thresholds
    from ctxviewer.analysis.tokens.estimators import get_estimator
    from ctxviewer.proxy.rewrite_plan import plan

    *_, (_path, headers, body) = agent_calls("claude-code-2.1.332.rec.jsonl.xz")
    tpb = 12_651 / len(orjson.dumps(body))  # as the fake upstream counted a request
    p = plan(
        "anthropic",
        body,
        "c",
        "trim",
        get_estimator("qwen"),
        thresholds(15_000, "shannon"),
        tokens_per_byte=tpb,
        injected=("<system-reminder>",),
    )
    [note] = [n for n in p.notes if n.startswith("misses its target")]
    assert "against 5,625" in note
    assert p.tokens_after > 5_625


@pytest.mark.parametrize(
    ("capture", "api", "violations"),
    [
        ("claude-code-2.1.332.rec.jsonl.xz", "anthropic", "anthropic_violations"),
        ("codex-0.171.0.rec.jsonl.xz", "openai-responses", "responses_violations"),
    ],
    ids=["claude-code", "codex"],
)
def test_trim_and_slim_work_on_the_agents_real_shapes(
    capture: str, api: str, violations: str
) -> None:
    """Claude Code's environment message inside ``messages`` (and Codex's leading
    developer items) no longer stop a rewrite: trim cuts the real request, slim shortens
    a long tool result the model has answered and leaves the last one whole."""
    import strict_upstream

    from ctxviewer.analysis.thresholds import thresholds
    from ctxviewer.analysis.tokens.estimators import get_estimator
    from ctxviewer.proxy import rewrite_shapes as shapes
    from ctxviewer.proxy.rewrite_plan import plan

    check = getattr(strict_upstream, violations)
    *_, (_path, _headers, body) = agent_calls(capture)
    est, t = get_estimator("qwen"), thresholds(8_000, "shannon")
    injected = ("<system-reminder>", "# AGENTS.md instructions", "<environment_context>")
    trimmed = plan(api, body, "c", "trim", est, t, injected=injected)
    assert check(body) == [] and check(trimmed.body) == []
    assert len(orjson.dumps(trimmed.body)) < len(orjson.dumps(body))
    # a long result (a 400-line file read) answered by the model, then a new one
    raw = shapes.items(api, body)
    assert raw is not None
    long = "\n".join(f"{i:4}  line {i} of a long file" for i in range(400))
    if api == "anthropic":
        call = {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_a", "name": "Read", "input": {"file_path": "x"}}
            ],
        }
        result = {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_a", "content": long}],
        }
        answer = {"role": "assistant", "content": [{"type": "text", "text": "Read it."}]}
        call2 = {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_b", "name": "Read", "input": {"file_path": "y"}}
            ],
        }
        last = {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_b", "content": long}],
        }
        grown = [*raw, call, result, answer, {"role": "user", "content": "And y?"}, call2, last]
    else:
        call = {"type": "function_call", "call_id": "c_a", "name": "shell", "arguments": "{}"}
        result = {"type": "function_call_output", "call_id": "c_a", "output": long}
        answer = {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Read it."}],
        }
        call2 = {"type": "function_call", "call_id": "c_b", "name": "shell", "arguments": "{}"}
        last = {"type": "function_call_output", "call_id": "c_b", "output": long}
        grown = [*raw, call, result, answer, call2, last]
    body = {**body, shapes.items_key(api): grown}
    slimmed = plan(api, body, "c", "slim", est, t, injected=injected)
    assert check(slimmed.body) == []
    answered, unread = ("toolu_a", "toolu_b") if api == "anthropic" else ("c_a", "c_b")
    assert answered in slimmed.rule.slim_ids and unread not in slimmed.rule.slim_ids
    text = orjson.dumps(slimmed.body[shapes.items_key(api)][-1]).decode()
    assert "omitted" not in text and "line 399 of a long file" in text
