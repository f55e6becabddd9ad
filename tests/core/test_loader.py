from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from ctxviewer.ingest import load


def _assistant(uuid, parent, msg_id, req_id, usage, text="hi"):
    return {
        "type": "assistant",
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s",
        "requestId": req_id,
        "timestamp": "2026-01-01T00:00:00Z",
        "message": {
            "id": msg_id,
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": text}],
            "usage": usage,
        },
    }


def _user(uuid, parent, text):
    return {
        "type": "user",
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s",
        "timestamp": "2026-01-01T00:00:00Z",
        "message": {"role": "user", "content": text},
    }


def _write(path, records, tail=""):
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + tail)
    return str(path)


def test_streamed_duplicates_count_once_keeping_largest_usage(tmp_path):
    small = {"input_tokens": 3, "cache_read_input_tokens": 100, "output_tokens": 1}
    large = {"input_tokens": 3, "cache_read_input_tokens": 100, "output_tokens": 250}
    recs = [
        _user("u1", None, "hello"),
        _assistant("a1", "u1", "msg_1", "req_1", small, "part one"),
        _assistant("a2", "a1", "msg_1", "req_1", large, "part two"),
        _user("u2", "a2", "next"),
        _assistant("a3", "u2", "msg_2", "req_2", small),
    ]
    s = load(_write(tmp_path / "t.jsonl", recs))
    assert len(s.requests) == 2
    assert s.requests[0].usage.output_tokens == 250
    # the second request's context holds the first reply as ONE message with both blocks
    ctx = s.requests[1].messages
    assert [m.role for m in ctx] == ["user", "assistant", "user"]
    assert [b.text for b in ctx[1].blocks] == ["part one", "part two"]


def test_truncated_last_line_and_unknown_types_are_counted(tmp_path):
    recs = [
        _user("u1", None, "hello"),
        _assistant("a1", "u1", "m", "r", {"input_tokens": 5, "output_tokens": 1}),
        {"type": "brand-new-type", "uuid": "x", "sessionId": "s"},
    ]
    s = load(_write(tmp_path / "t.jsonl", recs, tail='{"type": "user", "mess'))
    assert len(s.requests) == 1
    reasons = sorted(k.reason for k in s.skipped)
    assert reasons == ["truncated last line", "unknown record type 'brand-new-type'"]
    assert s.skipped[-1].line == 4 or s.skipped[0].line == 4


def test_rewind_follows_the_parent_chain(tmp_path):
    u = {"input_tokens": 5, "output_tokens": 1}
    recs = [
        _user("u1", None, "first"),
        _assistant("a1", "u1", "m1", "r1", u),
        _user("u2", "a1", "abandoned branch"),
        _assistant("a2", "u2", "m2", "r2", u),
        _user("u3", "a1", "rewritten prompt"),  # the user rewound to a1
        _assistant("a3", "u3", "m3", "r3", u),
    ]
    s = load(_write(tmp_path / "t.jsonl", recs))
    texts = [m.text for m in s.requests[2].messages]
    assert texts == ["first", "hi", "rewritten prompt"]


def test_gzip_is_detected_by_content(tmp_path):
    recs = [
        _user("u1", None, "hello"),
        _assistant("a1", "u1", "m", "r", {"input_tokens": 5, "output_tokens": 1}),
    ]
    path = tmp_path / "session.log"  # no telling extension
    with gzip.open(path, "wt") as f:
        f.write("".join(json.dumps(r) + "\n" for r in recs))
    s = load(str(path))
    assert s.format == "claude-code" and len(s.requests) == 1


def test_progress_and_cancel(tmp_path):
    import pytest

    from ctxviewer.ingest import Cancelled

    u = {"input_tokens": 5, "output_tokens": 1}
    recs = [_user("u0", None, "x" * 1000)]
    for i in range(1, 400):
        recs.append(_assistant(f"a{i}", f"u{i - 1}", f"m{i}", f"r{i}", u))
        recs.append(_user(f"u{i}", f"a{i}", "y" * 500))
    path = _write(tmp_path / "big.jsonl", recs)
    seen = []
    load(path, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1][0] == seen[-1][1] and len(seen) > 1
    assert all(a <= b for (a, _), (b, _) in zip(seen, seen[1:], strict=False))
    with pytest.raises(Cancelled):
        load(path, cancelled=lambda: True)


def test_partial_compaction_keeps_preserved_messages_only(tmp_path):
    """Newer Claude Code keeps some messages across a boundary (preservedMessages)."""
    u = {"input_tokens": 5, "output_tokens": 1}
    summary = _user(
        "s1",
        "b1",
        "This session is being continued from a previous conversation "
        "that ran out of context. Summary: ...",
    )
    summary["isCompactSummary"] = True
    recs = [
        _user("u0", None, "dropped prompt"),
        _assistant("a0", "u0", "m0", "r0", u, "dropped reply"),
        _user("k1", "a0", "kept prompt"),
        _assistant("a1", "k1", "m1", "r1", u, "kept reply"),
        {
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": "b1",
            "parentUuid": None,
            "sessionId": "s",
            "compactMetadata": {
                "trigger": "auto",
                "preTokens": 9000,
                "preservedMessages": {"anchorUuid": "a0", "uuids": ["k1", "a1"]},
            },
        },
        summary,
        _user("u2", "a1", "new prompt"),
        _assistant("a2", "u2", "m2", "r2", u),
    ]
    s = load(_write(tmp_path / "t.jsonl", recs))
    last = s.requests[-1]
    texts = [m.text for m in last.messages]
    assert texts[0].startswith("This session is being continued")
    assert texts[1:] == ["kept prompt", "kept reply", "new prompt"]
    assert [e.pre_tokens for e in last.events] == [9000]


def test_head_session_reads_the_first_bytes_of_a_line_log(tmp_path, corpus):
    import gzip

    from ctxviewer.ingest.loader import head_session

    src = corpus / "claude-trace/badlogic__lemmy__apps_claude-trace_test_test-traffic.jsonl"
    whole = load(str(src))
    assert head_session(str(src), src.stat().st_size) is None  # it all fits: no glimpse
    limit = src.stat().st_size // 3
    plain = head_session(str(src), limit)
    lines = src.read_bytes().splitlines(keepends=True)
    fit = 0
    while sum(map(len, lines[: fit + 1])) <= limit:
        fit += 1
    assert plain is not None and 0 < len(plain.requests) < len(whole.requests)
    assert [r.usage for r in plain.requests] == [
        r.usage for r in load(str(src)).requests if r.line <= fit
    ]
    packed = tmp_path / "trace.jsonl.gz"
    packed.write_bytes(gzip.compress(src.read_bytes()))
    assert limit > packed.stat().st_size // 3  # the limit counts decompressed bytes
    glimpse = head_session(str(packed), limit)
    assert glimpse is not None
    assert [r.usage for r in glimpse.requests] == [r.usage for r in plain.requests]


def test_head_session_of_a_json_document_is_none(tmp_path):
    from ctxviewer.ingest.loader import head_session

    doc = Path(__file__).resolve().parents[1] / "data" / "gemini_session.json"
    assert head_session(str(doc), 10) is None


@pytest.mark.parametrize("cut", [20_000, 400_000])
def test_a_truncated_gzip_log_loads_what_is_intact(corpus, tmp_path, cut):
    import gzip

    from ctxviewer.cli import main

    data = (
        corpus / "claude-trace" / "badlogic__lemmy__apps_claude-trace_test_test-traffic.jsonl"
    ).read_bytes()
    whole = gzip.compress(data)
    assert len(whole) > cut
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(whole[:cut])
    s = load(str(path))
    assert 0 < len(s.requests) < 64
    assert any("truncated here" in k.reason for k in s.skipped)
    assert main(["report", str(path)]) == 0


def test_a_first_line_longer_than_the_sniffed_head(corpus, tmp_path):
    """A trace can start with one request longer than what format detection reads."""
    from ctxviewer.ingest.loader import HEAD_BYTES

    lines = (
        (corpus / "claude-trace" / "badlogic__lemmy__apps_claude-trace_test_test-traffic.jsonl")
        .read_text()
        .splitlines()
    )
    first = json.loads(lines[-1])
    first["request"]["body"]["messages"][0]["content"] = "x" * (HEAD_BYTES + 100_000)
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps(first) + "\n" + "\n".join(lines[:5]) + "\n")
    s = load(str(path))
    assert s.format == "claude-trace" and len(s.requests) == 6 and not s.skipped


def test_a_lone_surrogate_keeps_its_call(corpus, tmp_path):
    """A client that cut an emoji in half writes a lone surrogate escape: orjson refuses
    the line; the call stays, the half character shown as U+FFFD."""
    lines = (
        (corpus / "claude-trace" / "badlogic__lemmy__apps_claude-trace_test_test-traffic.jsonl")
        .read_text()
        .splitlines()
    )
    record = json.loads(lines[-1])
    record["request"]["body"]["messages"][0]["content"] = "smile \ud83d please"
    path = tmp_path / "surrogate.jsonl"
    path.write_text("\n".join(lines[:-1] + [json.dumps(record)]) + "\n")
    s = load(str(path))
    assert len(s.requests) == 64 and not s.skipped
    text = s.requests[-1].messages[0].text
    assert "smile \ufffd please" in text
