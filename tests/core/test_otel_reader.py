"""Claude Code's OpenTelemetry events read back (ctxviewer.ingest.otel.reader): the captures of
real Claude Code 2.1.197 runs in tests/data/otel (README there), compared with what the
fake server itself recorded of each call (expected.json), then the pairing rules on
events written here."""

from __future__ import annotations

import hashlib
import json
import lzma
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.report import report_json
from ctxviewer.cli import main
from ctxviewer.ingest import detect, load, read_head
from ctxviewer.ingest.base import MESSAGES_CUT_NOTE, ONLY_USAGE
from ctxviewer.ingest.follow.follower import Follower
from ctxviewer.ingest.loader import READER_ERROR
from ctxviewer.ingest.otel.reader import ORPHAN_DETAIL, role_of
from ctxviewer.model import API_ERROR, AUXILIARY, COMPACT_BOUNDARY, MAIN, SUBAGENT

DATA = Path(__file__).resolve().parents[1] / "data" / "otel"
EXPECTED = json.loads((DATA / "expected.json").read_text())


def _usage(r: Any) -> dict[str, int]:
    u = r.usage
    return {
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "cache_read_input_tokens": u.cache_read_input_tokens,
        "cache_creation_input_tokens": u.cache_creation_input_tokens,
    }


def _want(name: str) -> list[dict[str, int]]:
    keys = (
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    )
    return [{k: call[k] for k in keys} for call in EXPECTED[name]]


@pytest.mark.parametrize(
    "name", ["inline.jsonl.xz", "inline-json.jsonl.xz", "big-inline.jsonl.xz", "file.jsonl"]
)
def test_captures_are_detected(name: str) -> None:
    assert detect(read_head(str(DATA / name))).name == "otel"


@pytest.mark.parametrize("name", ["inline", "inline-json", "big-inline", "file"])
def test_usage_per_request_is_what_the_server_recorded(name: str) -> None:
    path = DATA / (f"{name}.jsonl" if name == "file" else f"{name}.jsonl.xz")
    session = load(str(path))
    assert session.skipped == []
    assert [_usage(r) for r in session.requests] == _want(name)
    assert {r.client for r in session.requests} == {"claude-code/2.1.197"}
    assert {r.role for r in session.requests} == {MAIN}  # query_source "sdk": print mode
    assert all(r.request_id and r.message_id for r in session.requests)  # answers joined
    assert all(r.response is not None and r.response.blocks for r in session.requests)


def test_inline_bodies_cut_in_the_tools_keep_messages_and_system() -> None:
    session = load(str(DATA / "inline.jsonl.xz"))
    for req, call in zip(session.requests, EXPECTED["inline"], strict=True):
        assert not req.complete and req.tools == ()
        assert len(req.messages) == call["messages"]  # every message survived the cut
        assert req.system and "You are" in "".join(b.text for b in req.system)
        assert any("in `tools`" in n and "inferred from the API's count" in n for n in req.notes)
    a = Analysis(session)
    first = session.requests[0]
    est = a.estimator
    inferred = first.usage.prompt_tokens - est.messages(first.messages)
    last = session.requests[-1]
    recorded = sum(est.block(b) for b in last.system)  # its own system prompt is in the log
    b = a.breakdown(last.index)
    lost = b.category("unrecorded_overhead")
    assert lost is not None and lost.label == "Tools (not recorded)"
    assert lost.estimated == inferred - recorded > 10_000  # Claude Code's tools are large
    assert lost.items == ()  # no text is made up for what the log lost
    assert b.total == last.usage.prompt_tokens


def test_a_cut_inside_the_messages_is_marked_and_not_taken_as_overhead() -> None:
    session = load(str(DATA / "big-inline.jsonl.xz"))
    cut = [r for r in session.requests if any(n.startswith(MESSAGES_CUT_NOTE) for n in r.notes)]
    assert cut, "the 90 KB tool result pushes the later bodies past 60 KB of messages"
    for req in cut:
        call = EXPECTED["big-inline"][req.index]
        assert len(req.messages) < call["messages"] and req.system == ()
    whole = session.requests[0]
    assert whole not in cut and len(whole.messages) == EXPECTED["big-inline"][0]["messages"]
    a = Analysis(session)
    est = a.estimator
    b = a.breakdown(cut[-1].index)
    lost = b.category("unrecorded_overhead")
    # system prompt + tools: from the first request, whose messages were whole
    assert lost is not None and lost.label == "System prompt + tools (not recorded)"
    assert lost.estimated == whole.usage.prompt_tokens - est.messages(whole.messages)
    msgs = b.category("messages")
    assert msgs is not None and msgs.tokens == b.total - sum(
        c.tokens
        for c in b.categories
        if c.name not in ("messages", "free_space", "autocompact_buffer")
    )
    assert any(i.kind == "unattributed" and i.tokens > 15_000 for i in msgs.items)


def _wire_sha(body_file: Path) -> str:
    raw = re.sub(rb',"betas":\[[^\]]*\]', b"", body_file.read_bytes())
    return hashlib.sha256(raw).hexdigest()


def test_body_files_are_the_bodies_sent_and_missing_ones_are_noted() -> None:
    session = load(str(DATA / "file.jsonl"))
    refs = _body_refs(DATA / "file.jsonl")
    for req, call, ref in zip(session.requests, EXPECTED["file"], refs, strict=True):
        found = DATA / "otel-bodies" / Path(ref).name
        if found.exists():  # beside the log, in the folder the log's body_ref names
            assert _wire_sha(found) == call["body_sha256"]  # the body sent, plus its betas
            assert req.complete and len(req.tools) == call["tools"]
            assert len(req.messages) == call["messages"]
            assert any(t.kind == "mcp" for t in req.tools)
            assert req.window_hint == 1_000_000  # the context-1m beta, in the logged betas
        else:
            assert not req.complete and req.messages == ()
            assert any(ref in n and "missing" in n and ONLY_USAGE in n for n in req.notes)
    assert sum(r.complete for r in session.requests) == 2


def _body_refs(path: Path) -> list[str]:
    refs = []
    for line in path.read_text().splitlines():
        for rl in json.loads(line).get("resourceLogs", []):
            for sl in rl["scopeLogs"]:
                for lr in sl["logRecords"]:
                    attrs = {kv["key"]: kv["value"] for kv in lr["attributes"]}
                    if attrs["event.name"]["stringValue"] == "api_request_body":
                        refs.append(attrs["body_ref"]["stringValue"])
    return refs


def test_a_body_file_where_it_was_written_is_read(tmp_path: Path) -> None:
    bodies = tmp_path / "elsewhere"
    shutil.copytree(DATA / "otel-bodies", bodies)
    text = (DATA / "file.jsonl").read_text().replace("/redacted/otel-bodies/", f"{bodies}/")
    log = tmp_path / "logs" / "otel.jsonl"
    log.parent.mkdir()
    log.write_text(text)
    session = load(str(log))
    assert [r.complete for r in session.requests] == [True, True, False, False, False]


@pytest.mark.parametrize(
    "command",
    [["report", "--json"], ["compare", "--json"], ["findings", "--json"], ["insights", "--json"]],
)
def test_commands_read_the_captures(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("inline.jsonl.xz", "file.jsonl"):
        assert main([command[0], str(DATA / name), *command[1:]]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out


def test_report_says_what_the_log_lost(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(DATA / "big-inline.jsonl.xz")]) == 0
    out = capsys.readouterr().out
    assert "System prompt + tools (not recorded)" in out
    assert f"from the log: {MESSAGES_CUT_NOTE}" in out
    session = load(str(DATA / "big-inline.jsonl.xz"))
    data = report_json(Analysis(session))
    assert data["source"] == {
        "path": str(DATA / "big-inline.jsonl.xz"),
        "format": "otel",
        "skipped_records": 0,
        "complete": False,
        "requests": 5,
    }


def test_following_the_file_as_it_grows_ends_as_load(tmp_path: Path) -> None:
    lines = lzma.decompress((DATA / "inline.jsonl.xz").read_bytes()).splitlines(True)
    path = tmp_path / "otel.jsonl"
    path.write_bytes(b"")
    follower = Follower(str(path))
    seen = []
    for line in lines:
        with open(path, "ab") as f:
            f.write(line)
        follower.poll()
        if follower.session is not None:
            seen.append(len(follower.session.requests))
    follower.finish()
    whole = load(str(path))
    assert follower.session is not None
    assert [_usage(r) for r in follower.session.requests] == [_usage(r) for r in whole.requests]
    assert [r.messages for r in follower.session.requests] == [r.messages for r in whole.requests]
    assert seen[-1] == len(whole.requests) and max(seen) == seen[-1]


# --- the pairing rules, on events written here ------------------------------------------


def _kv(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


class Log:
    """OTLP JSON lines of Claude Code events, one export request a ``flush``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: list[dict[str, Any]] = []
        self.seq = 0

    def event(self, name: str, prompt: str = "p1", session: str = "s1", **attrs: Any) -> None:
        base = {
            "session.id": session,
            "prompt.id": prompt,
            "event.name": name,
            "event.timestamp": f"2026-01-01T00:00:{self.seq:02d}.000Z",
            "event.sequence": self.seq,
        }
        self.seq += 1
        self.records.append(
            {
                "timeUnixNano": "1",
                "body": {"stringValue": f"claude_code.{name}"},
                "attributes": [_kv(k, v) for k, v in {**base, **attrs}.items()],
            }
        )

    def body(
        self,
        messages: list[dict[str, Any]],
        source: str = "sdk",
        prompt: str = "p1",
        session: str = "s1",
        **extra: Any,
    ) -> None:
        body = {
            "model": "claude-opus-4-8",
            "messages": messages,
            "system": "You are Claude Code",
            "tools": [{"name": "Read", "input_schema": {}}],
            "max_tokens": 32000,
            **extra,
        }
        text = json.dumps(body, separators=(",", ":"))
        self.event(
            "api_request_body",
            prompt,
            session,
            body=text,
            body_length=str(len(text)),
            model="claude-opus-4-8",
            query_source=source,
        )

    def call(self, rid: str, tokens: int, source: str = "sdk", session: str = "s1") -> None:
        self.event(
            "api_request",
            session=session,
            model="claude-opus-4-8",
            input_tokens=tokens,
            output_tokens=5,
            cache_read_tokens=0,
            cache_creation_tokens=0,
            request_id=rid,
            query_source=source,
        )

    def flush(self) -> None:
        export = {
            "resourceLogs": [
                {
                    "resource": {
                        "attributes": [
                            _kv("service.name", "claude-code"),
                            _kv("service.version", "2.1.197"),
                        ]
                    },
                    "scopeLogs": [
                        {
                            "scope": {"name": "com.anthropic.claude_code.events"},
                            "logRecords": self.records,
                        }
                    ],
                }
            ]
        }
        with open(self.path, "a") as f:
            f.write(json.dumps(export) + "\n")
        self.records = []


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def test_a_retried_body_makes_one_request_and_sources_pair_apart(tmp_path: Path) -> None:
    log = Log(tmp_path / "otel.jsonl")
    log.body([_user("main question")])
    log.body([_user("main question")])  # the same body again: the call was retried
    log.body([_user("make a title")], source="generate_session_title")
    log.body([_user("review the diff")], source="agent:custom:reviewer")
    log.call("req_title", 50, source="generate_session_title")
    log.flush()  # the calls end in the next export request
    log.call("req_main", 1000)
    log.call("req_agent", 400, source="agent:custom")  # api_request drops the custom name
    log.flush()
    session = load(str(log.path))
    by_id = {r.request_id: r for r in session.requests}
    assert list(by_id) == ["req_title", "req_main", "req_agent"]
    assert by_id["req_main"].messages[0].text == "main question"
    assert any("logged 2 times" in n for n in by_id["req_main"].notes)
    assert by_id["req_title"].role == AUXILIARY
    assert by_id["req_title"].messages[0].text == "make a title"
    agent = by_id["req_agent"]
    assert (agent.role, agent.sidechain) == (SUBAGENT, True)
    assert agent.messages[0].text == "review the diff"
    assert agent.agent is not None and agent.agent.startswith("agent:custom:reviewer#")
    assert all(r.complete and r.tools for r in session.requests)


def test_two_calls_of_one_source_at_once_pair_in_order(tmp_path: Path) -> None:
    log = Log(tmp_path / "otel.jsonl")
    log.body([_user("task one")], source="agent:builtin:general-purpose")
    log.body([_user("task two")], source="agent:builtin:general-purpose")
    log.call("r1", 100, source="agent:builtin:general-purpose")
    log.call("r2", 200, source="agent:builtin:general-purpose")
    log.flush()
    reqs = load(str(log.path)).requests
    assert [(r.request_id, r.messages[0].text) for r in reqs] == [
        ("r1", "task one"),
        ("r2", "task two"),
    ]
    assert reqs[0].agent != reqs[1].agent  # two runs of one agent type: two conversations


def test_errors_compactions_and_bodies_left_over(tmp_path: Path) -> None:
    log = Log(tmp_path / "otel.jsonl")
    log.body([_user("first")])
    log.event(
        "api_error",
        model="claude-opus-4-8",
        error="Overloaded",
        status_code=529,
        query_source="sdk",
        request_id="r_err",
    )
    log.event("compaction", trigger="auto", success="true", pre_tokens="150000", post_tokens="9000")
    log.body([_user("second")])
    log.call("r2", 9000)
    log.body([_user("third")], prompt="p2")  # under way when the log ends
    log.flush()
    reqs = load(str(log.path)).requests
    assert [r.messages[0].text for r in reqs] == ["first", "second", "third"]
    assert reqs[0].usage is None and reqs[0].failure == "HTTP 529: Overloaded"
    assert reqs[0].status == 529
    compaction = [e for e in reqs[1].events if e.kind == COMPACT_BOUNDARY]
    assert [(e.pre_tokens, e.post_tokens, e.trigger) for e in compaction] == [
        (150000, 9000, "auto")
    ]
    assert reqs[2].usage is None
    assert [(e.kind, e.detail) for e in reqs[2].events] == [(API_ERROR, ORPHAN_DETAIL)]


def test_calls_without_bodies_keep_their_usage(tmp_path: Path) -> None:
    log = Log(tmp_path / "otel.jsonl")
    log.call("r1", 20000)
    log.call("r2", 21000)
    log.flush()
    session = load(str(log.path))
    assert [r.api_prompt_tokens for r in session.requests] == [20000, 21000]
    assert all(any(ONLY_USAGE in n for n in r.notes) for r in session.requests)
    b = Analysis(session).breakdown(1)
    assert b.total == 21000


def test_other_lines_are_skipped_and_metrics_ignored(tmp_path: Path) -> None:
    path = tmp_path / "otel.jsonl"
    path.write_text(
        json.dumps({"resourceMetrics": [{"scopeMetrics": []}]})
        + "\n"
        + json.dumps({"something": "else"})
        + "\n"
        + json.dumps({"resourceSpans": []})
        + "\n"
    )
    session = load(str(path))
    assert session.format == "otel" and session.requests == []
    assert [s.line for s in session.skipped] == [2]


@pytest.mark.parametrize(
    ("source", "role"),
    [
        ("repl_main_thread", MAIN),
        ("repl_main_thread:outputStyle:Explanatory", MAIN),
        ("sdk", MAIN),
        (None, MAIN),
        ("agent:builtin:Explore", SUBAGENT),
        ("hook_agent", SUBAGENT),
        ("compact", AUXILIARY),
        ("generate_session_title", AUXILIARY),
    ],
)
def test_roles_follow_claude_codes_own_sorting(source: str | None, role: str) -> None:
    assert role_of(source) == role


# --- odd values where Claude Code writes text or numbers ----------------------------------

odd = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats()
    | st.text(max_size=30)
    | st.sampled_from(
        ["[1,2", '{"model":"m","messages":[{"role":', "[" * 3000, "1e400", "NaN", "true"]
    )
)
EVENTS = ["api_request_body", "api_request", "api_error", "api_response_body", "compaction"]
KEYS = [
    "body",
    "body_ref",
    "body_length",
    "body_truncated",
    "query_source",
    "request_id",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "event.sequence",
    "prompt.id",
    "session.id",
    "model",
    "status_code",
    "pre_tokens",
    "success",
    "event.timestamp",
]
VALUE_KINDS = [
    "stringValue",
    "intValue",
    "doubleValue",
    "boolValue",
    "arrayValue",
    "kvlistValue",
    "bytesValue",
]


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
# found by random runs: a body_ref holding a NUL reached os.stat ("embedded null byte"),
# and one holding a lone surrogate could not be encoded as a file name
@example(events=[("api_request_body", {"body_ref": ("stringValue", "\x00")})], cut=0.0)
@example(events=[("api_response_body", {"body_ref": ("stringValue", "a/\ud800.json")})], cut=1.0)
@given(
    events=st.lists(
        st.tuples(
            st.sampled_from(EVENTS),
            st.dictionaries(
                st.sampled_from(KEYS), st.tuples(st.sampled_from(VALUE_KINDS), odd), max_size=8
            ),
        ),
        min_size=1,
        max_size=8,
    ),
    cut=st.floats(0, 1),
)
def test_odd_events_never_trip_the_reader(tmp_path: Path, events: list[Any], cut: float) -> None:
    records = []
    for name, attrs in events:
        kvs = [{"key": "event.name", "value": {"stringValue": name}}]
        kvs += [{"key": k, "value": {kind: value}} for k, (kind, value) in attrs.items()]
        records.append({"timeUnixNano": "1", "attributes": kvs})
    line = json.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": records}]}]})
    path = tmp_path / "odd.jsonl"
    path.write_text(line + "\n" + line[: int(len(line) * cut)])
    session = load(str(path))
    assert not [s.reason for s in session.skipped if s.reason.startswith(READER_ERROR)]
    report_json(Analysis(session))


def test_a_collector_file_splits_by_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = Log(tmp_path / "team.jsonl")
    log.body([_user("alice asks")], session="alice-1")
    log.body([_user("bob asks")], session="bob-1")
    log.call("r_bob", 300, session="bob-1")
    log.call("r_alice", 500, session="alice-1")
    log.flush()
    assert main(["report", str(log.path), "--sessions", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(s["conversation"], s["requests"]) for s in listed["sessions"]] == [
        ("bob-1", 1),
        ("alice-1", 1),
    ]
    assert main(["report", str(log.path), "--session", "1", "--json"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert [r["api_prompt_tokens"] for r in one["requests"]] == [500]
