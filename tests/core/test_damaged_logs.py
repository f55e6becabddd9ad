"""Real logs damaged the way tools/fuzz_logs.py found them to break ctxviewer.

Each test builds its damaged copy from a corpus file at test time and checks the
outcome the command line and the window get: the records read and skipped, or the
one line of a ``LoadError``.
"""

from __future__ import annotations

import gzip
import json
import lzma
from pathlib import Path
from typing import Any

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.report import report_json
from ctxviewer.analysis.timeline_view import view as timeline_view
from ctxviewer.cli import main
from ctxviewer.ingest import load
from ctxviewer.ingest.loader import head_session

MAI_CLAUDE = "claude-code/Mai0313__VibeCodingTracker__tests_fixtures_sessions_claude_code.jsonl"
CODEX = "codex/Mai0313__VibeCodingTracker__tests_fixtures_sessions_codex.jsonl"
SPOTTER = "claude-code/marot__spotter__test_fixtures_transcripts_fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"


def _edit_first(src: Path, dst: Path, wanted: Any, edit: Any) -> dict[str, Any]:
    """Copy ``src`` to ``dst`` with ``edit(record)`` applied to the first record
    ``wanted(record)`` accepts; returns that record as it was."""
    lines = src.read_bytes().splitlines(keepends=True)
    for i, raw in enumerate(lines):
        record = json.loads(raw)
        if wanted(record):
            before = json.loads(raw)
            edit(record)
            lines[i] = json.dumps(record).encode() + b"\n"
            dst.write_bytes(b"".join(lines))
            return before
    raise AssertionError(f"no record of {src.name} to edit")


def _report(capsys: Any, path: Path) -> dict[str, Any]:
    assert main(["report", "--json", str(path)]) == 0
    captured = capsys.readouterr()
    assert "internal error" not in captured.err
    out: dict[str, Any] = json.loads(captured.out)
    return out


def test_an_empty_client_version_is_no_version(corpus: Path, tmp_path: Path, capsys: Any) -> None:
    """A transcript record whose ``version`` is "" gives the client "claude-code/": the
    agent's identification split it and took a word that was not there (IndexError,
    ``report`` said "internal error")."""
    damaged = tmp_path / "empty-version.jsonl"
    _edit_first(
        corpus / MAI_CLAUDE,
        damaged,
        lambda r: r.get("type") == "assistant" and r.get("version"),
        lambda r: r.update(version=""),
    )
    whole = _report(capsys, corpus / MAI_CLAUDE)
    out = _report(capsys, damaged)
    assert out["source"]["requests"] == whole["source"]["requests"] > 0
    assert out["source"]["skipped_records"] == whole["source"]["skipped_records"]
    assert out["agent"] == whole["agent"]  # the other records still name the version
    assert out["agent"]["version"] is not None
    assert main(["insights", "--json", str(damaged)]) == 0
    assert json.loads(capsys.readouterr().out)["source"]["requests"] == out["source"]["requests"]


def test_an_odd_compaction_timestamp_and_trigger_are_unknown(corpus: Path, tmp_path: Path) -> None:
    """A compact boundary whose timestamp is a number and whose trigger is a list: the
    event kept them, and the timeline by time (the window's Timeline tab) raised
    TypeError in ``fromisoformat``. Now they are unknown; the compaction stays."""
    damaged = tmp_path / "odd-compaction.jsonl"
    before = _edit_first(
        corpus / SPOTTER,
        damaged,
        lambda r: r.get("subtype") == "compact_boundary",
        lambda r: (
            r.update(timestamp=-1_000_000_000),
            r["compactMetadata"].update(trigger=["auto"]),
        ),
    )
    whole, session = load(str(corpus / SPOTTER)), load(str(damaged))
    assert len(session.requests) == len(whole.requests)
    assert len(session.skipped) == len(whole.skipped)
    events = [e for r in session.requests for e in r.events if e.kind == "compact_boundary"]
    assert [(e.timestamp, e.trigger, e.pre_tokens) for e in events] == [
        (None, None, before["compactMetadata"]["preTokens"])
    ]
    a = Analysis(session)
    view = timeline_view.from_analysis(a, x_mode="time")
    assert view.data.x_mode == "time"
    assert len(view.marks) == len(timeline_view.from_analysis(Analysis(whole), x_mode="time").marks)
    compact = [e for e in report_json(a)["events"] if e["kind"] == "compact_boundary"]
    assert [(e["timestamp"], e["trigger"]) for e in compact] == [(None, None)]


def test_a_compressed_log_cut_short_is_read_up_to_the_cut(
    corpus: Path, tmp_path: Path, capsys: Any
) -> None:
    """The head of a compressed log was read in 64 KiB reads, and a read that met the
    cut raised and lost what it had decompressed: a log cut within its first 64 KiB
    was refused as "the compressed file ends before any data" though it held
    requests. The window's first view (``head_session``) raised EOFError or LZMAError."""
    data = (corpus / CODEX).read_bytes()
    whole = load(str(corpus / CODEX))
    for kind, packed in (("gz", gzip.compress(data, mtime=0)), ("xz", lzma.compress(data))):
        path = tmp_path / f"cut.jsonl.{kind}"
        path.write_bytes(packed[: len(packed) // 2])
        assert head_session(str(path), 4 * 1024 * 1024) is None  # shorter than that
        out = _report(capsys, path)
        session = load(str(path))
        assert 0 < out["source"]["requests"] == len(session.requests) < len(whole.requests)
        assert out["source"]["skipped_records"] == len(session.skipped) == 1
        assert session.skipped[0].reason.startswith("the compressed file is truncated here")
    path = tmp_path / "cut-early.jsonl.gz"
    path.write_bytes(gzip.compress(data, mtime=0)[:12])
    assert main(["report", "--json", str(path)]) == 2
    assert (
        capsys.readouterr().err
        == f"ctxviewer: cannot read {path}: the compressed file ends before any data\n"
    )


GEMINI_DOC = (
    "gemini-cli/lanegrid__agtrace__samples-tmp_.gemini_tmp_9126eddec7f67e038794657b4d5"
    "17dd9cb5226468f30b5ee7296c27d65e84fde_chats_session-2025-12-09T19-50-f0a689a6.json"
)


def test_a_byte_order_mark_is_not_part_of_the_first_record(
    corpus: Path, tmp_path: Path, capsys: Any
) -> None:
    """An editor that saves a log with a UTF-8 byte order mark: the first record of a
    line log was skipped as not JSON (a Codex rollout lost its session_meta), and a
    JSON document (a Gemini chat) was refused as an unknown format."""
    for name in (CODEX, GEMINI_DOC):
        path = tmp_path / Path(name).name
        path.write_bytes(b"\xef\xbb\xbf" + (corpus / name).read_bytes())
        whole, out = _report(capsys, corpus / name), _report(capsys, path)
        assert out["source"]["requests"] == whole["source"]["requests"] > 0
        assert out["source"]["skipped_records"] == whole["source"]["skipped_records"]
        assert out["source"]["format"] == whole["source"]["format"]
        assert out["agent"] == whole["agent"]


def test_a_utf16_log_says_so(corpus: Path, tmp_path: Path, capsys: Any) -> None:
    """The same log saved as UTF-16 (with or without its byte order mark) was "a binary
    file"; a file of NULs still is."""
    text = (corpus / CODEX).read_text(encoding="utf-8")
    for encoding in ("utf-16", "utf-16-le", "utf-16-be"):
        path = tmp_path / f"{encoding}.jsonl"
        path.write_bytes(text.encode(encoding))
        assert main(["report", "--json", str(path)]) == 2
        assert capsys.readouterr().err == (
            f"ctxviewer: {path} is UTF-16 text: ctxviewer reads logs in UTF-8 (save it as UTF-8)\n"
        )
    nuls = tmp_path / "nuls.jsonl"
    nuls.write_bytes(bytes(4096))
    assert main(["report", "--json", str(nuls)]) == 2
    assert capsys.readouterr().err == f"ctxviewer: {nuls} is a binary file, not a session log\n"


CODEX_WINDOW = (
    "codex/lanegrid__agtrace__samples-tmp_.codex_sessions_2025_12_10_rollout-2025-12"
    "-10T04-55-16-019b04ae-b1c6-7c72-a134-a4c2de66058c.jsonl"
)


def test_a_window_of_two_to_the_63_is_damage(corpus: Path, tmp_path: Path, capsys: Any) -> None:
    """A Codex rollout whose ``model_context_window`` is 2**63-1: the window became
    9,223,372,036,854,775,807 tokens "from the log". Such a window is dropped, as
    token counts above a billion are: one such record leaves the others' window, all
    of them give the window of a log that recorded none."""
    src = corpus / CODEX_WINDOW
    data = src.read_bytes()
    recorded = {
        json.loads(x)["payload"]["info"]["model_context_window"]
        for x in data.splitlines()
        if b'"model_context_window"' in x
    }
    assert len(recorded) == 1
    old = b'"model_context_window":%d' % recorded.pop()
    huge = b'"model_context_window":%d' % (2**63 - 1)
    cases = {
        "one": (data.replace(old, huge, 1), data),
        "all": (data.replace(old, huge), data.replace(old, b'"model_context_window":null')),
    }
    for name, (damaged, like) in cases.items():
        path, expected = tmp_path / f"{name}.jsonl", tmp_path / f"{name}-expected.jsonl"
        path.write_bytes(damaged)
        expected.write_bytes(like)
        out, want = _report(capsys, path), _report(capsys, expected)
        assert (out["window"], out["window_source"]) == (want["window"], want["window_source"])
        assert out["window"] < 2**63 - 1
        assert out["source"]["requests"] == want["source"]["requests"] > 0


LEMMY = "claude-trace/badlogic__lemmy__apps_claude-trace_test_test-traffic.jsonl"


def test_a_forecast_over_aware_and_naive_times(corpus: Path, tmp_path: Path, capsys: Any) -> None:
    """A claude-trace record whose request timestamp is damaged takes its time from
    ``logged_at``, which has no UTC offset: the compaction forecast subtracted it from
    an aware time (TypeError; ``findings`` said "internal error"). Lines deleted so
    that the last turns grow and the forecast runs; it now gives no minutes."""
    from ctxviewer.analysis.findings.forecast import last_turns

    src = corpus / LEMMY
    lines = src.read_bytes().splitlines(keepends=True)
    turns = last_turns(load(str(src)).requests)
    bigger = {
        r.line
        for r in turns
        if r.usage and turns[-1].usage and r.usage.prompt_tokens > turns[-1].usage.prompt_tokens
    }
    shorter = tmp_path / "shorter.jsonl"  # only the lines deleted: times all aware
    shorter.write_bytes(b"".join(x for i, x in enumerate(lines, 1) if i not in bigger))
    record = json.loads(lines[turns[-1].line - 1])
    assert isinstance(record["logged_at"], str) and record["logged_at"][-1].isdigit()  # naive
    record["request"]["timestamp"] = [record["request"]["timestamp"]]
    lines[turns[-1].line - 1] = json.dumps(record).encode() + b"\n"
    damaged = tmp_path / "forecast.jsonl"
    damaged.write_bytes(b"".join(x for i, x in enumerate(lines, 1) if i not in bigger))
    session = load(str(damaged))
    assert session.requests[-1].timestamp == record["logged_at"]
    assert len(session.requests) == len(load(str(src)).requests) - len(bigger)

    def forecast(path: Path) -> str:
        assert main(["findings", "--json", str(path)]) == 0
        found = json.loads(capsys.readouterr().out)["findings"]
        titles = [f["title"] for f in found if f["code"] == "compaction-soon"]
        assert len(titles) == 1
        return str(titles[0])

    timed = forecast(shorter)
    assert " min)" in timed
    assert forecast(damaged) == timed[: timed.index(" (about")]


def test_codex_dynamic_tools_of_another_type(corpus: Path, tmp_path: Path, capsys: Any) -> None:
    """A rollout whose session_meta lists ``dynamic_tools`` as a number: the reader
    raised iterating it, and ``load`` skipped the whole record as a reader error (the
    session lost its instructions and version). Now only the tools are unknown."""
    src = corpus / CODEX_WINDOW
    for odd in (7, 2.5, True, None, "x", {"name": "t"}):
        path = tmp_path / "dynamic-tools.jsonl"
        _edit_first(
            src,
            path,
            lambda r: r.get("type") == "session_meta",
            lambda r, odd=odd: r["payload"].update(dynamic_tools=odd),
        )
        out, whole = _report(capsys, path), _report(capsys, src)
        for report in (out, whole):
            report["source"].pop("path")
        assert out == whole


def test_a_followed_log_drops_its_byte_order_mark_as_load_does(
    corpus: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    """Live follow and the library (which follows the files of the last days) read a log
    saved with a byte order mark as ``load`` does: before, its first record was skipped."""
    from library_tree import fake_home

    from ctxviewer.ingest.follow.follower import Follower
    from ctxviewer.library import Library

    home = fake_home(tmp_path, monkeypatch)
    for name in (CODEX, MAI_CLAUDE):
        path = tmp_path / Path(name).name
        path.write_bytes(b"\xef\xbb\xbf" + (corpus / name).read_bytes())
        whole = load(str(corpus / name))
        follower = Follower(str(path))
        follower.poll()
        followed = follower.finish().session
        assert followed is not None
        assert len(followed.requests) == len(whole.requests) > 0
        assert len(followed.skipped) == len(whole.skipped)
        assert followed.format == whole.format
    folder = home / "logs"
    folder.mkdir()
    (folder / "bom.jsonl").write_bytes(b"\xef\xbb\xbf" + (corpus / CODEX).read_bytes())
    with Library() as lib:
        lib.add_folder(str(folder))
        lib.scan()  # a file written now: read by a follower, its state kept
        (row,) = lib.sessions()
    assert row["requests"] == len(load(str(corpus / CODEX)).requests)
    assert row["skipped_records"] == len(load(str(corpus / CODEX)).skipped)


def test_a_compressed_log_damaged_at_its_start_says_damaged_not_cut(
    corpus: Path, tmp_path: Path, capsys: Any
) -> None:
    """A compressed log with nothing readable: cut before its first data, or damaged there
    (the magic intact, the rest of the header broken). Each says which, in one line."""
    packed = lzma.compress((corpus / CODEX).read_bytes())
    cut = tmp_path / "cut.jsonl.xz"
    cut.write_bytes(packed[:20])
    broken = tmp_path / "broken.jsonl.xz"
    broken.write_bytes(packed[:6] + bytes(34) + packed[40:])
    for path, said in ((cut, "ends before any data"), (broken, "is damaged before any data")):
        assert main(["report", "--json", str(path)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and said in err and str(path) in err, err


SNIFFLY = "claude-code/chiphuyen__sniffly__tests_mock-data_-Users-chip-dev-ai-music_d3ad4cdc-5657-435d-98fa-0035d53e383d.jsonl"


def test_a_tool_call_id_of_another_type(corpus: Path, tmp_path: Path) -> None:
    """A tool_use ``id`` that is an object (tools/fuzz_logs.py's field-types): the turn of
    parallel calls keyed its calls by it ("unhashable type: 'dict'", a reader error).
    Such a call answers nothing; the rest reads as before."""
    damaged = tmp_path / "odd-id.jsonl"

    def odd(record: dict[str, Any]) -> None:
        use = next(b for b in record["message"]["content"] if b.get("type") == "tool_use")
        use["id"] = {"value": use["id"]}

    _edit_first(
        corpus / SNIFFLY,
        damaged,
        lambda r: (
            r.get("type") == "assistant"
            and any(
                isinstance(b, dict) and b.get("type") == "tool_use"
                for b in r["message"].get("content") or []
            )
        ),
        odd,
    )
    whole, session = load(str(corpus / SNIFFLY)), load(str(damaged))
    assert not [k for k in session.skipped if "reader error" in k.reason]
    assert len(session.requests) == len(whole.requests)
