"""Request rewriting through the proxy, with the real anthropic and openai SDKs as clients
and an upstream that enforces the APIs' rules (tests/proxy/strict_upstream.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import orjson
import pytest
from proxy_fakes import read_lines
from strict_upstream import (
    StrictUpstream,
    anthropic_violations,
    chat_violations,
    responses_violations,
)

from ctxviewer.proxy import ProxyThread
from ctxviewer.proxy.rewrite import Rewriter

FILE = "".join(f"{i:4d}  def function_{i}(x):  # does thing {i}\n" for i in range(120))
SYSTEM = "You are a careful coding agent working in /work/project."


@pytest.fixture
def rewriting_proxy(strict: StrictUpstream, tmp_path: Path) -> Iterator[Callable[..., ProxyThread]]:
    started: list[ProxyThread] = []

    def make(rewriter: Rewriter) -> ProxyThread:
        proxy = ProxyThread(
            port=0,
            out=tmp_path / f"rec{len(started)}.jsonl",
            upstream=strict.url,
            openai_upstream=strict.url,
            timeout=10.0,
            rewriter=rewriter,
        )
        proxy.start()
        started.append(proxy)
        return proxy

    yield make
    for proxy in started:
        proxy.stop()


# --- three agents, one per API: a prompt, a tool call, its result, an answer; repeated ---


def anthropic_agent(
    client: anthropic.Anthropic,
    turns: int,
    stream: bool,
    messages: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    messages = [] if messages is None else messages
    start = len(messages)
    tools = [
        {
            "name": "read_file",
            "description": "Read a file",
            "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
        }
    ]
    for t in range(turns):
        t += start
        messages.append({"role": "user", "content": f"Task {t}: read file {t}, fix the bug."})
        while True:
            kwargs = {
                "model": "claude-test",
                "max_tokens": 256,
                "system": SYSTEM,
                "tools": tools,
                "messages": messages,
            }
            if stream:
                with client.messages.stream(**kwargs) as s:
                    msg = s.get_final_message()
            else:
                msg = client.messages.create(**kwargs)
            content = [
                {"type": "text", "text": b.text}
                if b.type == "text"
                else {"type": "tool_use", "id": b.id, "name": b.name, "input": b.input}
                for b in msg.content
            ]
            messages.append({"role": "assistant", "content": content})
            calls = [b for b in content if b["type"] == "tool_use"]
            if not calls:
                break
            messages.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": c["id"],
                            "content": f"file {t}\n{FILE}",
                        }
                        for c in calls
                    ],
                }
            )
    return messages


def chat_agent(client: openai.OpenAI, turns: int, stream: bool, task: str = "Task") -> None:
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    tools = [
        {
            "type": "function",
            "function": {
                "name": "read_file",
                "description": "Read a file",
                "parameters": {"type": "object", "properties": {"k": {"type": "integer"}}},
            },
        }
    ]
    for t in range(turns):
        messages.append({"role": "user", "content": f"{task} {t}: read file {t}, fix the bug."})
        while True:
            if stream:
                text = "".join(
                    c.choices[0].delta.content or ""
                    for c in client.chat.completions.create(
                        model="gpt-test",
                        messages=messages,
                        stream=True,
                        stream_options={"include_usage": True},
                    )
                    if c.choices
                )
                calls = []
                assert text
                messages.append({"role": "assistant", "content": text})
            else:
                r = client.chat.completions.create(model="gpt-test", messages=messages, tools=tools)
                m = r.choices[0].message
                calls = m.tool_calls or []
                entry: dict[str, Any] = {"role": "assistant", "content": m.content}
                if calls:
                    entry["tool_calls"] = [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {
                                "name": c.function.name,
                                "arguments": c.function.arguments,
                            },
                        }
                        for c in calls
                    ]
                messages.append(entry)
            if not calls:
                break
            messages += [
                {"role": "tool", "tool_call_id": c.id, "content": f"file {t}\n{FILE}"}
                for c in calls
            ]
            stream = False


def responses_agent(client: openai.OpenAI, turns: int) -> None:
    items: list[dict[str, Any]] = []
    tools = [
        {
            "type": "function",
            "name": "read_file",
            "description": "Read a file",
            "parameters": {"type": "object", "properties": {}},
        }
    ]
    for t in range(turns):
        items.append({"role": "user", "content": f"Task {t}: read file {t}, fix the bug."})
        while True:
            r = client.responses.create(
                model="gpt-test", instructions=SYSTEM, input=items, tools=tools
            )
            calls = []
            for out in r.output:
                if out.type == "function_call":
                    calls.append(out.call_id)
                    items.append(
                        {
                            "type": "function_call",
                            "call_id": out.call_id,
                            "name": out.name,
                            "arguments": out.arguments,
                        }
                    )
                else:
                    items.append({"role": "assistant", "content": out.content[0].text})
            if not calls:
                break
            items += [
                {"type": "function_call_output", "call_id": c, "output": f"file {t}\n{FILE}"}
                for c in calls
            ]


# --- what every rewriting run must show ----------------------------------------------------


def _records(proxy: ProxyThread, count: int) -> list[dict[str, Any]]:
    assert proxy.wait_for_records(count, 10)
    return [r for r in read_lines(proxy.out) if r["type"] == "exchange"]


def check_rewritten(
    proxy: ProxyThread,
    strict: StrictUpstream,
    api: str,
    key: str,
    rules: Callable[[dict[str, Any]], list[str]],
) -> dict[str, Any]:
    """The recording has both bodies; the upstream got what the recording says; the
    compacted prefix is byte-identical on every later request; the tail is untouched."""
    sent = strict.bodies(api)
    records = _records(proxy, len(sent))
    assert [s for _a, _r, s in strict.received] == [200] * len(sent)  # nothing rejected
    first = next(i for i, r in enumerate(records) if "upstream_body" in r["request"])
    conv = records[first]["conversation"]
    mine = [r for r in records if r.get("conversation") == conv]
    rewritten = [r for r in mine if "upstream_body" in r["request"]]
    assert mine.index(records[first]) >= 1
    assert rewritten == mine[mine.index(records[first]) :] and len(rewritten) >= 2
    plan = records[first]["rewrite"]["plan"]
    removed, added = plan["removed_items"], plan["added_items"]
    assert removed > added
    head = 1 if api == "chat" else 0
    prefix = None
    for i, r in enumerate(records):
        client, up = r["request"]["body"], r["request"].get("upstream_body")
        received = {k: v for k, v in sent[i].items() if k != "_tokens"}
        assert received == (up if up is not None else client)
        assert rules(received) == []
        if up is None:
            continue
        assert r["conversation"] == records[first]["conversation"]
        c_items, u_items = client[key], up[key]
        assert u_items[:head] == c_items[:head]
        assert u_items[head + added :] == c_items[head + removed :]
        assert len(u_items) == len(c_items) - removed + added
        this = orjson.dumps(u_items[: head + added])
        assert prefix is None or this == prefix
        prefix = this
        assert r["usage"]["input_tokens"] < len(orjson.dumps(client)) // 4
    summary = plan["summary"]
    assert bool(summary) is (plan["strategy"] != "trim")
    assert orjson.dumps(summary).decode()[1:-1] in prefix.decode()
    return {"records": records, "first": first, "plan": plan}


def test_anthropic_messages_compacted_streaming_and_not(
    rewriting_proxy: Callable[..., ProxyThread], strict: StrictUpstream
) -> None:
    for stream in (False, True):
        strict.received.clear()
        proxy = rewriting_proxy(Rewriter(compact_at=3_000, strategy="qwen"))
        with anthropic.Anthropic(base_url=proxy.url, api_key="sk-ant-x", max_retries=0) as c:
            anthropic_agent(c, turns=6, stream=stream)
        out = check_rewritten(proxy, strict, "anthropic", "messages", anthropic_violations)
        first = out["records"][out["first"]]
        assert first["response"]["stream"] is stream
        # the prompt dropped by what the plan said (calibrated on the last API count)
        plan = out["plan"]
        assert plan["calibrated"]
        assert (
            abs(first["usage"]["input_tokens"] - plan["tokens_after"])
            <= 0.05 * plan["tokens_after"]
        )


@pytest.mark.parametrize("strategy", ["qwen", "shannon", "trim"])
def test_openai_chat_compacted(
    rewriting_proxy: Callable[..., ProxyThread], strict: StrictUpstream, strategy: str
) -> None:
    proxy = rewriting_proxy(Rewriter(compact_at=3_000, strategy=strategy))
    with openai.OpenAI(base_url=proxy.url + "/v1", api_key="sk-x", max_retries=0) as c:
        chat_agent(c, turns=8, stream=False)
        chat_agent(c, turns=1, stream=True, task="Chore")  # another conversation
    out = check_rewritten(proxy, strict, "chat", "messages", chat_violations)
    assert out["records"][-1].get("rewrite") is None


def test_openai_responses_compacted(
    rewriting_proxy: Callable[..., ProxyThread], strict: StrictUpstream
) -> None:
    proxy = rewriting_proxy(Rewriter(compact_at=3_000, strategy="shannon"))
    with openai.OpenAI(base_url=proxy.url + "/v1", api_key="sk-x", max_retries=0) as c:
        responses_agent(c, turns=8)
    check_rewritten(proxy, strict, "responses", "input", responses_violations)


def test_rejected_rewrite_falls_back_once_and_stops(
    rewriting_proxy: Callable[..., ProxyThread], strict: StrictUpstream
) -> None:
    strict.reject.append(b"Got it. Thanks for the additional context!")
    events: list[str] = []
    proxy = rewriting_proxy(Rewriter(compact_at=3_000, on_event=events.append))
    with anthropic.Anthropic(base_url=proxy.url, api_key="sk-ant-x", max_retries=0) as c:
        anthropic_agent(c, turns=5, stream=True)  # every call succeeds for the agent
    statuses = [s for _a, _r, s in strict.received]
    assert statuses.count(400) == 1
    records = _records(proxy, len(statuses) - 1)
    fell = [r for r in records if "fallback" in (r.get("rewrite") or {})]
    assert len(fell) == 1 and fell[0]["response"]["status"] == 200
    assert "upstream_body" not in fell[0]["request"]
    assert fell[0]["rewrite"]["rejected"]["status"] == 400
    assert "rejected by the test" in orjson.dumps(fell[0]["rewrite"]["rejected"]).decode()
    after = records[records.index(fell[0]) + 1 :]
    assert after and all("upstream_body" not in r["request"] for r in after)
    assert any("rejected the rewritten request" in e for e in events)


def test_preview_commit_undo(
    rewriting_proxy: Callable[..., ProxyThread], strict: StrictUpstream
) -> None:
    rw = Rewriter()  # no --compact-at: nothing happens unless asked
    proxy = rewriting_proxy(rw)
    with anthropic.Anthropic(base_url=proxy.url, api_key="sk-ant-x", max_retries=0) as c:
        history = anthropic_agent(c, turns=3, stream=False)
        records = _records(proxy, len(strict.received))
        assert all("upstream_body" not in r["request"] for r in records)
        (conv,) = rw.conversations()
        key = conv["conversation"]
        p = rw.preview(key, "slim")
        # three tool results; the model has answered two: the last stays whole
        last = p.body["messages"][-1]
        assert last["role"] == "user" and last["content"][0]["type"] == "tool_result"
        assert b"chars omitted" not in orjson.dumps(last)
        assert p.tokens_after < p.tokens_before and len(p.removed) == len(p.added) == 2
        assert rw.rule(key) is None  # a preview changes nothing
        rw.commit(p)
        n = len(strict.received)
        anthropic_agent(c, turns=1, stream=False)  # another conversation: untouched
        assert all(b"chars omitted" not in raw for _a, raw, _s in strict.received[n:])
        n = len(strict.received)
        anthropic_agent(c, turns=1, stream=True, messages=history)
        slimmed = strict.received[n:]
        assert slimmed and all(raw.count(b"chars omitted") == 2 for _a, raw, _s in slimmed)
        rw.undo(key)
        n = len(strict.received)
        anthropic_agent(c, turns=1, stream=False, messages=history)
        assert all(b"chars omitted" not in raw for _a, raw, _s in strict.received[n:])
    assert rw.rule(key) is None
    assert [s for _a, _r, s in strict.received] == [200] * len(strict.received)


def test_the_reader_shows_what_the_model_saw(
    rewriting_proxy: Callable[..., ProxyThread], strict: StrictUpstream
) -> None:
    from ctxviewer.ingest.loader import load

    proxy = rewriting_proxy(Rewriter(compact_at=3_000))
    with anthropic.Anthropic(base_url=proxy.url, api_key="sk-ant-x", max_retries=0) as c:
        anthropic_agent(c, turns=5, stream=True)
    records = _records(proxy, len(strict.received))
    session = load(str(proxy.out))
    assert len(session.requests) == len(records)
    for req, rec in zip(session.requests, records, strict=True):
        seen = rec["request"].get("upstream_body") or rec["request"]["body"]
        assert len(req.messages) == len(seen["messages"])
        marked = any(n.startswith("rewritten by the proxy") for n in req.notes)
        assert marked is ("upstream_body" in rec["request"])
    assert any("rewritten by the proxy" in " ".join(r.notes) for r in session.requests)


def test_cli_compact_at(tmp_path: Path, strict: StrictUpstream) -> None:
    """``ctxviewer proxy --compact-at``: says it is on, compacts, marks the lines, stops."""
    import os
    import queue
    import signal
    import subprocess
    import sys
    import threading

    out = tmp_path / "rec.jsonl"
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        "PYTHONUNBUFFERED": "1",
    }
    cmd = [
        sys.executable,
        "-m",
        "ctxviewer",
        "proxy",
        "--port",
        "0",
        "--out",
        str(out),
        "--upstream",
        strict.url,
        "--openai-upstream",
        strict.url,
        "--compact-at",
        "3000",
        "--strategy",
        "qwen",
    ]
    lines: queue.Queue[str] = queue.Queue()
    with subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path
    ) as proc:

        def pump() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.put(line.rstrip("\n"))

        threading.Thread(target=pump, daemon=True).start()
        try:
            banner: list[str] = []
            while not banner or not banner[-1].startswith("Ctrl+C"):
                banner.append(lines.get(timeout=20))
            assert any(b.startswith("rewriting ON") and "3,000" in b for b in banner)
            base = next(b for b in banner if b.startswith("export ANTHROPIC_BASE_URL="))
            with anthropic.Anthropic(
                base_url=base.split("=", 1)[1], api_key="sk-ant-x", max_retries=0
            ) as c:
                anthropic_agent(c, turns=5, stream=False)
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=20) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.stderr is not None and "Traceback" not in proc.stderr.read()
    said: list[str] = []
    while not lines.empty():
        said.append(lines.get())
    assert any(s.startswith("rewrite: c_") and "compacted (qwen" in s for s in said)
    rewritten = [s for s in said if s.startswith("ex_") and s.endswith("REWRITTEN")]
    assert len(rewritten) >= 2
    assert sum(1 for r in read_lines(out) if "upstream_body" in r.get("request", {})) == len(
        rewritten
    )
