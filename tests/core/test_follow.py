"""Following a growing session file (ctxviewer.ingest.follow.follower) and ``ctxviewer tail``."""

from __future__ import annotations

import json
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ctxviewer.cli import main
from ctxviewer.ingest import LoadError, load
from ctxviewer.ingest.follow import follower as follow_mod
from ctxviewer.ingest.follow.follower import Follower, peek

DATA = Path(__file__).resolve().parents[1] / "data"
CODEX = "codex/Mai0313__VibeCodingTracker__tests_fixtures_sessions_codex.jsonl"
GEMINI_JSONL = "gemini-cli/Mai0313__VibeCodingTracker__tests_fixtures_sessions_gemini.jsonl"
CLAUDE = "claude-code/Mai0313__VibeCodingTracker__tests_fixtures_sessions_claude_code.jsonl"
GEMINI_DOC = (
    "gemini-cli/lanegrid__agtrace__samples-tmp_.gemini_tmp_9126eddec7f67e038794657b4d5"
    "17dd9cb5226468f30b5ee7296c27d65e84fde_chats_session-2025-12-09T19-50-f0a689a6.json"
)


def _rec(uuid: str, parent: str | None, kind: str, **extra: object) -> bytes:
    rec: dict[str, object] = {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s-1",
        "timestamp": "2025-08-02T12:00:00Z",
    }
    rec.update(extra)
    return (json.dumps(rec) + "\n").encode()


def user(uuid: str, parent: str | None, text: str = "hello") -> bytes:
    return _rec(uuid, parent, "user", message={"role": "user", "content": text})


def reply(
    uuid: str, parent: str, msg_id: str, prompt: int, output: int = 5, request: str = "req-1"
) -> bytes:
    usage = {"input_tokens": 10, "cache_read_input_tokens": prompt - 10, "output_tokens": output}
    return _rec(
        uuid,
        parent,
        "assistant",
        requestId=request,
        message={
            "id": msg_id,
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "ok"}],
            "usage": usage,
        },
    )


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as f:
        f.write(data)


def test_grows_in_chunks_and_waits_for_a_partial_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    append(path, user("u1", None))
    f = Follower(path)
    up = f.poll()
    assert f.format == "claude-code" and up.session is f.session and not up
    session = f.session
    line = reply("a1", "u1", "msg_1", 20_000)
    append(path, line[:40])  # the writer is half way through the line
    up = f.poll()
    assert not up and session.requests == [] and session.skipped == []
    assert f.offset == len(user("u1", None))
    append(path, line[40:])  # ... and finishes it
    up = f.poll()
    assert up.new == [0] and up.changed == [] and not up.reloaded
    assert session.requests[0].usage.prompt_tokens == 20_000
    append(path, user("u2", "a1") + reply("a2", "u2", "msg_2", 21_500, request="req-2"))
    up = f.poll()
    assert up.new == [1] and up.session is session and session.skipped == []
    assert [m.role for m in session.requests[1].messages] == ["user", "assistant", "user"]


def test_idle_poll_reads_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.jsonl"
    append(path, user("u1", None) + reply("a1", "u1", "msg_1", 1_000))
    f = Follower(path)
    assert f.poll().new == [0]

    def no_open(*args: object, **kwargs: object) -> None:
        raise AssertionError("an unchanged file was opened")

    monkeypatch.setattr(follow_mod, "open", no_open, raising=False)
    for _ in range(3):
        assert not f.poll()


def test_streamed_duplicate_replaces_usage_in_place(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    append(path, user("u1", None) + reply("a1", "u1", "msg_1", 5_000, output=3))
    f = Follower(path)
    assert f.poll().new == [0]
    first = f.session.requests[0]
    append(path, reply("a1b", "a1", "msg_1", 5_000, output=250))  # same message + request id
    up = f.poll()
    assert up.new == [] and up.changed == [0]
    assert f.session.requests[0].usage.output_tokens == 250
    assert f.session.requests[0].messages == first.messages


def test_truncation_reloads(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    append(
        path,
        user("u1", None)
        + reply("a1", "u1", "msg_1", 1_000)
        + user("u2", "a1")
        + reply("a2", "u2", "msg_2", 2_000, request="req-2"),
    )
    f = Follower(path)
    old = f.poll().session
    assert len(old.requests) == 2
    path.write_bytes(user("x1", None) + reply("x2", "x1", "msg_9", 900))  # shorter: truncated
    up = f.poll()
    assert up.reloaded and up.session is not old and up.new == [0]
    assert f.session.requests[0].usage.prompt_tokens == 900


def test_replacement_reloads(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    append(path, user("u1", None) + reply("a1", "u1", "msg_1", 1_000))
    f = Follower(path)
    old = f.poll().session
    other = tmp_path / "new.jsonl"
    other.write_bytes(
        user("v1", None, "another session")
        + reply("v2", "v1", "msg_5", 3_000)
        + user("v3", "v2")
        + reply("v4", "v3", "msg_6", 3_500, request="req-6")
    )
    os.replace(other, path)  # a new inode, longer than before
    up = f.poll()
    assert up.reloaded and up.session is not old and up.new == [0, 1]
    # the same inode rewritten in place, longer, with other first bytes
    data = user("w1", None, "rewritten in place!") + reply("w2", "w1", "msg_7", 7_000)
    with open(path, "r+b") as fh:
        fh.write(data * 3)
    up = f.poll()
    assert up.reloaded and f.session.requests[0].usage.prompt_tokens == 7_000


def test_missing_then_empty_then_content(tmp_path: Path) -> None:
    path = tmp_path / "later.jsonl"
    f = Follower(path)
    up = f.poll()
    assert not up and up.session is None and "no such file" in f.error
    path.write_bytes(b"")
    assert not f.poll() and f.session is None
    append(path, user("u1", None)[:30])  # not even one complete line
    assert not f.poll() and f.session is None
    append(path, user("u1", None)[30:] + reply("a1", "u1", "msg_1", 1_234))
    up = f.poll()
    assert up.new == [0] and f.format == "claude-code" and f.error is None


def test_unknown_content_waits_while_small_and_finish_refuses(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("just some notes\nnot a session\n")
    f = Follower(path)
    assert not f.poll() and f.session is None and "unknown format" in f.error
    with pytest.raises(LoadError, match="unknown format"):
        f.finish()
    big = tmp_path / "big.txt"
    big.write_text("".join(f'{{"line": {i}}}\n' for i in range(100)))
    with pytest.raises(LoadError, match="unknown format"):
        Follower(big).poll()
    with pytest.raises(LoadError, match="directory"):
        Follower(tmp_path).poll()


def test_gemini_document_rewritten_grows(tmp_path: Path) -> None:
    doc = json.loads((DATA / "gemini_session.json").read_text())
    messages = doc["messages"]
    path = tmp_path / "session-1.json"
    cut = next(i for i, m in enumerate(messages) if m.get("tokens")) + 1
    path.write_text(json.dumps({**doc, "messages": messages[:cut]}, indent=2))
    f = Follower(path)
    up = f.poll()
    assert f.format == "gemini-cli" and up.new == [0]
    session = f.session
    path.write_text(json.dumps(doc, indent=2))  # Gemini CLI rewrites the whole file
    up = f.poll()
    assert up.session is session and not up.reloaded
    full = load(str(path))
    assert up.new == list(range(1, len(full.requests)))
    assert [r.usage for r in session.requests] == [r.usage for r in full.requests]
    assert not f.poll()
    path.write_text(json.dumps(doc, indent=2)[:200])  # caught mid-rewrite: keep the last good one
    assert not f.poll() and len(f.session.requests) == len(full.requests)
    tmp = tmp_path / "next.json"
    tmp.write_text(json.dumps(doc))  # written next to it and renamed over it: a new inode
    os.replace(tmp, path)
    up = f.poll()
    assert up.session is session and not up.reloaded and up.new == []


def test_codex_held_call_is_shown_provisionally(tmp_path: Path) -> None:
    lines = (DATA / "codex_tools.jsonl").read_bytes().splitlines(keepends=True)
    first_count = next(i for i, raw in enumerate(lines) if b'"last_token_usage"' in raw) + 1
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"".join(lines[:first_count]))
    f = Follower(path)
    up = f.poll()
    # the call is not over (its output items may follow): shown now, marked provisional
    assert up.new == [0] and up.provisional == [0]
    for raw in lines[first_count:]:
        append(path, raw)
        up = f.poll()
        assert 0 not in up.new  # the final version takes the same index
    final = f.finish()
    assert final.provisional == []
    assert f.session.requests == load(str(path)).requests


def test_peek_leaves_the_parser_untouched() -> None:
    import orjson

    from ctxviewer.ingest.registry import get_reader

    parser = get_reader("gemini-cli-jsonl").parser()
    lines = (DATA / "gemini_updates.jsonl").read_bytes().splitlines()
    end = next(i for i, raw in enumerate(lines) if b'"tokens"' in raw) + 1
    for n, raw in enumerate(lines[:end], 1):  # up to a reply the parser holds back
        list(parser.feed(n, orjson.loads(raw)))
    once, twice = peek(parser), peek(parser)
    assert once and once == twice
    assert list(parser.finish()) == once


@pytest.mark.parametrize("name", [CODEX, GEMINI_JSONL, CLAUDE])
def test_live_session_matches_load_of_what_was_written(
    corpus: Path, tmp_path: Path, name: str
) -> None:
    """After every poll, the followed session is what ``load`` makes of the complete lines."""
    data = (corpus / name).read_bytes()
    path, prefix = tmp_path / "live.jsonl", tmp_path / "prefix.jsonl"
    path.write_bytes(b"")
    f = Follower(path)
    rnd = random.Random(7)
    pos, seen, provisional = 0, 0, 0
    while pos < len(data):
        step = rnd.randint(1, 9_000)
        append(path, data[pos : pos + step])
        pos += step
        up = f.poll()
        assert up.new == list(range(seen, seen + len(up.new)))
        seen += len(up.new)
        provisional += bool(up.provisional)
        cut = data[:pos].rfind(b"\n") + 1
        if cut == 0:
            continue
        prefix.write_bytes(data[:cut])
        ref = load(str(prefix), format=f.format)
        assert f.session.requests == ref.requests
        assert f.session.events == ref.events
    if name != CLAUDE:
        assert provisional  # held-back calls were shown early
    f.finish()
    assert f.session.requests == load(str(corpus / name)).requests


def test_a_reply_written_before_its_prompt_is_shown_then_completed(tmp_path: Path) -> None:
    """Claude Code 2.1.197's TUI writes its first reply before the prompt it answers: the
    parser holds that request for its prompt; live, it is shown provisionally, and after
    every line the followed session is what ``load`` makes of the lines so far."""
    import lzma

    data = lzma.decompress(
        (DATA / "agents" / "claude-code-2.1.197" / "tui" / "transcript.jsonl.xz").read_bytes()
    )
    path, prefix = tmp_path / "live.jsonl", tmp_path / "prefix.jsonl"
    path.write_bytes(b"")
    f = Follower(path)
    provisional = 0
    for raw in data.splitlines(keepends=True):
        append(path, raw)
        up = f.poll()
        provisional += bool(up.provisional)
        if f.session is None:  # not known as a transcript yet
            continue
        prefix.write_bytes(path.read_bytes())
        assert f.session.requests == load(str(prefix), format=f.format).requests
    assert provisional
    f.finish()
    whole = load(str(path))
    assert f.session.requests == whole.requests
    assert whole.requests[0].messages[0].text.startswith("Please look at hello.py")


def test_max_bytes_takes_a_big_file_in_steps(corpus: Path) -> None:
    src = corpus / CLAUDE
    f = Follower(src)
    steps = 0
    up = f.poll(max_bytes=50_000)
    while up.more:
        steps += 1
        up = f.poll(max_bytes=50_000)
    assert steps >= 3  # some lines are longer than one step
    assert f.session.requests == load(str(src)).requests


def test_gemini_document_from_corpus_matches_load(corpus: Path) -> None:
    f = Follower(corpus / GEMINI_DOC)
    assert f.poll().new == list(range(len(load(str(corpus / GEMINI_DOC)).requests)))


# -- ctxviewer tail ----------------------------------------------------------------


def _session_file(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        user("u1", None)
        + reply("a1", "u1", "msg_1", 20_000)
        + user("u2", "a1")
        + reply("a2", "u2", "msg_2", 21_234, request="req-2")
    )
    return path


def test_tail_once_prints_every_request(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = _session_file(tmp_path)
    assert main(["tail", str(path), "--once"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "[claude-code]" in out[0] and "2 requests" in out[0]
    assert len(out) == 3
    assert out[1].split()[0] == "0" and "20,000" in out[1] and "safe" in out[1]
    assert out[2].split()[0] == "1" and "21,234" in out[2] and "+1,234" in out[2]
    assert out[2].rstrip().endswith("main")


def test_tail_once_json_and_new_only(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = _session_file(tmp_path)
    assert (
        main(["tail", str(path), "--once", "--json", "--window", "32000", "--policy", "qwen"]) == 0
    )
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows[0]["type"] == "start" and rows[0]["window"] == 32_000
    assert [r["index"] for r in rows[1:]] == [0, 1]
    assert rows[2]["delta"] == 1_234 and rows[2]["tier"] == "warn"
    assert rows[2]["prompt_tokens"] == 21_234 and rows[2]["estimated"] is False
    assert main(["tail", str(path), "--once", "--new-only"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1  # the header only


def test_tail_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["tail", str(tmp_path / "missing.jsonl"), "--once"]) == 2
    assert "no such file" in capsys.readouterr().err
    junk = tmp_path / "junk.txt"
    junk.write_text("hello\n")
    assert main(["tail", str(junk), "--once"]) == 2
    assert main(["tail", str(junk), "--interval", "0"]) == 2


def test_tail_follows_a_file_in_a_subprocess(tmp_path: Path) -> None:
    path = _session_file(tmp_path)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ctxviewer", "tail", str(path), "--interval", "0.05"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()

    def next_line(timeout: float) -> str:
        return lines.get(timeout=timeout)

    try:
        assert "[claude-code]" in next_line(30)  # the first start imports everything
        assert next_line(5).split()[0] == "0"
        assert next_line(5).split()[0] == "1"
        line = reply("a3", "u3", "msg_3", 30_000, request="req-3")
        append(path, user("u3", "a2") + line[:50])
        time.sleep(0.2)  # a partial line: nothing to print yet
        assert lines.empty()
        start = time.monotonic()
        append(path, line[50:])
        new = next_line(5)
        assert time.monotonic() - start < 1.0
        assert new.split()[0] == "2" and "30,000" in new and "+8,766" in new
        path.write_bytes(user("z1", None) + reply("z2", "z1", "msg_z", 500))
        assert next_line(5).startswith("-- reloaded")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


def test_compressed_log_is_reread_whole(tmp_path: Path) -> None:
    import gzip

    path = tmp_path / "s.jsonl.gz"
    first = user("u1", None) + reply("a1", "u1", "msg_1", 1_000)
    path.write_bytes(gzip.compress(first))
    f = Follower(path)
    assert f.poll().new == [0] and f.format == "claude-code"
    session = f.session
    path.write_bytes(
        gzip.compress(first + user("u2", "a1") + reply("a2", "u2", "msg_2", 2_000, request="req-2"))
    )
    up = f.poll()
    assert up.session is session and up.new == [1] and not up.reloaded


def test_an_in_place_rewrite_with_the_same_first_bytes_reloads(
    corpus: Path, tmp_path: Path
) -> None:
    """``cp`` over a followed recording (same inode; a recording of the same day starts
    with the same bytes) is a new file, not more lines."""
    lines = (
        (corpus / "claude-trace" / "badlogic__lemmy__apps_claude-trace_test_test-traffic.jsonl")
        .read_bytes()
        .splitlines(keepends=True)
    )
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"".join(lines[:10]))
    f = Follower(path)
    f.poll()
    assert len(f.session.requests) == 10
    other = lines[:1] + lines[30:64]  # same first line, then different ones, and longer
    assert len(b"".join(other)) > len(b"".join(lines[:10]))
    with open(path, "r+b") as out:  # truncate and write in place: the inode stays
        out.truncate(0)
        out.write(b"".join(other))
    up = f.poll()
    assert up.reloaded
    assert len(f.session.requests) == len(load(str(path)).requests) == 35


def test_a_snapshot_is_not_touched_by_later_polls(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    append(path, user("u1", None) + reply("a1", "u1", "msg_1", 20_000))
    f = Follower(path)
    assert f.snapshot() is None  # nothing read yet
    f.poll()
    snap = f.snapshot()
    assert snap is not None and snap is not f.session
    assert snap.requests == f.session.requests and len(snap.requests) == 1
    append(path, user("u2", "a1") + reply("a2", "u2", "msg_2", 21_500, request="req-2"))
    up = f.poll()
    assert up.new == [1] and len(f.session.requests) == 2
    assert len(snap.requests) == 1  # the copy did not grow
    assert snap.requests[0] is f.session.requests[0]  # requests are shared, not copied


def test_an_interrupt_lost_in_a_finalizer_still_stops_tail(monkeypatch) -> None:
    """Python swallows an exception raised in a finalizer, the interrupt's with it:
    ``tail`` stops on the event its handler sets all the same."""
    from ctxviewer.commands.tail import _stop_on_interrupt

    class InterruptedWhileFinalized:
        def __del__(self) -> None:
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):  # the handler runs between these: its raise is ignored
                pass

    lost: list[type[BaseException] | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: lost.append(u.exc_type))
    before = signal.getsignal(signal.SIGINT)
    with _stop_on_interrupt() as stop:
        obj = InterruptedWhileFinalized()
        del obj
        assert stop.is_set()
    assert lost == [KeyboardInterrupt]  # the raise went nowhere
    assert signal.getsignal(signal.SIGINT) is before
