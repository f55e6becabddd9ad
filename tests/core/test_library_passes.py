"""Rows first: a large scan writes every session's row, and a second pass reads the
files in full for their text (search) and the summary's details. Until it ends a
search says how far it is; after it, the library is what one pass gives; stopped
or killed, it resumes."""

from __future__ import annotations

import importlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from library_tree import fake_home, lay_out, recordings

from ctxviewer.cli import main
from ctxviewer.library import Library
from ctxviewer.library.rows import Declined, lean_session

# the module (a Library method is named scan too); imported on first use by the package
SCAN = importlib.import_module("ctxviewer.library.scan")

SEARCHES = ("TodoWrite", "the file", '"git status"', "function return")
ROW_KEYS = (
    "agent",
    "agent_label",
    "project",
    "model",
    "start",
    "end",
    "requests",
    "main_requests",
    "peak_prompt_tokens",
    "peak_request",
    "window",
    "peak_share",
    "compactions_observed",
    "compactions_predicted",
    "cost_usd",
    "cache_hit_rate",
    "path",
    "part",
    "parts",
    "size",
    "mtime",
    "prompt_series",
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return fake_home(tmp_path, monkeypatch)


def _tree(corpus: Path, home: Path, tmp_path: Path) -> Path:
    lay_out(corpus, home)
    recordings(corpus, tmp_path / "rec")
    with Library() as lib:
        lib.add_folder(str(tmp_path / "rec"))
    return tmp_path / "rec"


def _by_file(entries: list[dict]) -> dict[tuple[str, int], dict]:
    return {(e["path"], e["part"]): {k: v for k, v in e.items() if k != "id"} for e in entries}


def _one_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder: Path) -> tuple:
    """What a library read in one pass lists and finds (in a folder of its own)."""
    monkeypatch.setenv("CTXVIEWER_LIBRARY_DIR", str(tmp_path / "one-pass"))
    with Library() as lib:
        lib.add_folder(str(folder))
        lib.scan(two_pass=False)
        out = (_by_file(lib.sessions()), {q: _by_file(lib.sessions(search=q)) for q in SEARCHES})
    monkeypatch.setenv("CTXVIEWER_LIBRARY_DIR", str(tmp_path / "library"))
    return out


def test_the_rows_come_first_and_the_text_after(
    corpus: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _tree(corpus, home, tmp_path)
    rows, found = _one_pass(tmp_path, monkeypatch, folder)
    assert all(found.values())
    with Library() as lib:
        first = lib.scan(two_pass=True)
        files = len({path for path, _ in rows})
        assert first.read == files
        assert lib.indexing() == {"pending": files, "indexed": 0, "running": False}
        listed = _by_file(lib.sessions())
        assert listed.keys() == rows.keys()
        for key, row in rows.items():  # every row's numbers, before any text
            assert {k: listed[key][k] for k in ROW_KEYS} == {k: row[k] for k in ROW_KEYS}
            assert listed[key]["top_sources"] == listed[key]["top_categories"] == []
        assert lib.sessions(search="TodoWrite") == []  # no text yet
        assert lib.db.execute("SELECT count(*) FROM bodies").fetchone() == (0,)
        second = lib.index_texts()
        assert second is not None and second.read == first.read
        assert lib.indexing() == {"pending": 0, "indexed": files, "running": False}
        assert _by_file(lib.sessions()) == rows  # the library one pass gives
        assert {q: _by_file(lib.sessions(search=q)) for q in SEARCHES} == found
        assert lib.scan().read == 0 and lib.index_texts().read == 0  # nothing left


def test_a_stopped_second_pass_resumes(
    corpus: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _tree(corpus, home, tmp_path)
    rows, found = _one_pass(tmp_path, monkeypatch, folder)
    with Library() as lib:
        lib.scan(two_pass=True)
        total = lib.indexing()["pending"]
        asked: list[int] = []

        def after_three() -> bool:  # asked before each file: three are read
            asked.append(1)
            return len(asked) > 3

        stopped = lib.index_texts(pool=False, cancelled=after_three)
        assert stopped is not None and stopped.cancelled
        left = lib.indexing()["pending"]
        assert left == total - 3
        done = lib.index_texts()
        assert done is not None and done.read == left  # only what was left
        assert _by_file(lib.sessions()) == rows
        assert {q: _by_file(lib.sessions(search=q)) for q in SEARCHES} == found


def test_a_killed_second_pass_resumes(corpus: Path, home: Path, tmp_path: Path) -> None:
    laid = lay_out(corpus, home)
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(40):
        (folder / f"copy-{i:02}.jsonl").write_bytes(laid["spotter"].read_bytes())
    with Library() as lib:
        lib.add_folder(str(folder))
        lib.scan(two_pass=True)
        total = lib.indexing()["pending"]
        db_file = lib.path
    code = "from ctxviewer.library import Library; Library().index_texts(pool=False)"
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            with sqlite3.connect(f"file:{db_file}?mode=ro", uri=True, timeout=5) as db:
                if (
                    db.execute(
                        "SELECT count(*) FROM files WHERE pending = 0 AND parent IS NULL"
                    ).fetchone()[0]
                    >= 3
                ):
                    break
            time.sleep(0.05)
        assert proc.poll() is None, "the second pass ended before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    with Library() as lib:
        left = lib.indexing()["pending"]
        assert 0 < left < total - 2
        assert lib.index_texts().read == left
        assert lib.indexing()["pending"] == 0
        hits = lib.sessions(search="Bash")  # a tool every copy calls
        assert {e["path"] for e in hits} >= {str(folder / f"copy-{i:02}.jsonl") for i in range(40)}
        assert lib.db.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def _wait_indexed(timeout: float = 120) -> dict:
    """The background second pass has ended (its process gone, every text read)."""
    deadline = time.monotonic() + timeout
    while True:
        with Library() as lib:
            now = lib.indexing()
        if not now["pending"] and not now["running"] or time.monotonic() > deadline:
            return now
        time.sleep(0.2)


def test_the_command_indexes_the_text_in_the_background(
    corpus: Path,
    home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = _tree(corpus, home, tmp_path)
    rows, found = _one_pass(tmp_path, monkeypatch, folder)
    monkeypatch.setattr(SCAN, "POOL_MIN_BYTES", 1)  # a large scan, for this small tree
    monkeypatch.setattr(SCAN, "POOL_MIN_JOBS", 1)
    try:
        assert main(["library", "--json", "--search", "TodoWrite"]) == 0
        out = json.loads(capsys.readouterr().out)
        files = len({path for path, _ in rows})
        assert out["indexing"]["pending"] + out["indexing"]["indexed"] == files
        assert out["indexing"]["running"]  # started, in a process of its own
        assert main(["library", "--no-scan", "--search", "TodoWrite"]) == 0
        text = capsys.readouterr().out
        if "still indexing" in text:  # the background pass may already be done
            assert (
                "session files done): the sessions not indexed yet are not in these results" in text
            )
    finally:
        now = _wait_indexed()
    assert now["pending"] == 0 and not now["running"]
    assert main(["library", "--no-scan", "--json", "--search", "TodoWrite"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert _by_file(out["sessions"]) == found["TodoWrite"]
    assert out["indexing"] == {"pending": 0, "indexed": files, "running": False}
    assert main(["library", "--no-scan", "--search", "TodoWrite"]) == 0
    assert "indexing" not in capsys.readouterr().out


def test_index_text_does_it_in_the_foreground(
    corpus: Path, home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _tree(corpus, home, tmp_path)
    with Library() as lib:
        lib.scan(two_pass=True)
        assert lib.indexing()["pending"]
    assert main(["library", "--no-scan", "--index-text", "--json", "--search", "TodoWrite"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["indexing"]["pending"] == 0 and not out["indexing"]["running"]
    assert out["sessions"]
    assert os.environ["CTXVIEWER_LIBRARY_DIR"] == str(tmp_path / "library")


def _same_rows(log: Path | str, group: tuple[str, ...] = ()) -> None:
    """The first pass's rows of ``log`` (and its sub-agent files) are the full read's:
    every number of every row, the prompt series; what it leaves out comes empty."""
    from ctxviewer.library.reading import FileJob, Job, read_group

    files = tuple(FileJob(str(f)) for f in (log, *group))
    whole = read_group(Job(files))
    rows = read_group(Job(files, full=False))
    assert rows.error == whole.error, log
    assert not rows.full and len(rows.parts) == len(whole.parts), log
    for r, w in zip(rows.parts, whole.parts, strict=True):
        assert {k: r.summary[k] for k in ROW_KEYS if k in r.summary} == {
            k: w.summary[k] for k in ROW_KEYS if k in w.summary
        }, log
        assert r.series == w.series and r.texts == [], log
        assert r.summary["top_categories"] == r.summary["subagent_runs"] == []
        assert r.summary["top_sources"] == []


def _row_reader(log: Path | str) -> str | None:
    """The format whose row reader reads ``log`` (None: it declines, or none does)."""
    from ctxviewer.errors import LoadError
    from ctxviewer.library.rows import Declined, lean_session

    try:
        return lean_session(str(log)).format
    except (Declined, LoadError):
        return None


def test_the_row_readers_give_the_full_reads_numbers(corpus: Path, data: Path) -> None:
    """Every log of the corpus and of the agents' captures, of every format: its rows in
    the first pass are those of a full read, whether a row reader reads it (Claude
    Code, Codex, qwen-code, Gemini CLI) or declines and the file is read in full."""
    logs = sorted(
        [
            *(f for f in corpus.rglob("*") if f.is_file() and f.suffix in (".jsonl", ".json")),
            *(f for f in data.rglob("*") if f.is_file() and f.name != "case.json"),
        ]
    )
    by_reader: dict[str | None, int] = {}
    for log in logs:
        _same_rows(log)
        fmt = _row_reader(log)
        by_reader[fmt] = by_reader.get(fmt, 0) + 1
    assert by_reader.get("claude-code", 0) >= 20, by_reader
    assert by_reader.get("codex", 0) >= 6, by_reader  # every rollout but the legacy one
    assert by_reader.get("qwen-code", 0) >= 3, by_reader
    assert by_reader.get("gemini-cli", 0) + by_reader.get("gemini-cli-jsonl", 0) >= 3


def test_the_row_readers_on_every_agents_layout(home: Path, tmp_path: Path) -> None:
    """A small machine's worth of sessions (``tools/make_library_tree.py``: every agent's
    layout, sub-agent files, recordings): every session's rows in the first pass are
    the full read's, and each agent's files are read by its row reader."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
    try:
        from make_library_tree import generate
    finally:
        sys.path.pop(0)
    from ctxviewer.library.walk import find_files, groups

    generate(tmp_path, 24, 0.004, 7)  # tmp_path/home is the fake home
    found = find_files([str(tmp_path / "recordings")])
    readers = set()
    for path, group in groups(found.values()).items():
        _same_rows(path, tuple(f.path for f in group[1:]))
        readers.add(_row_reader(path))
    assert {"claude-code", "codex", "qwen-code", "gemini-cli"} <= readers, readers


def test_a_compressed_log_cut_short_is_read_in_full_for_its_row(
    corpus: Path, tmp_path: Path
) -> None:
    """A compressed transcript cut short: its row reader declines (it was marked a bad
    file, an internal error, and left out of the library), and the full read lists the
    requests before the cut, as a one-pass scan does."""
    import gzip

    log = (
        corpus
        / "claude-code"
        / ("marot__spotter__test_fixtures_transcripts_fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")
    )
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(gzip.compress(log.read_bytes())[:20_000])
    from ctxviewer.library.reading import FileJob, Job
    from ctxviewer.library.scan import safe_read

    rows = safe_read(Job((FileJob(str(cut)),), full=False))
    assert rows.error is None and rows.parts and rows.parts[0].summary["requests"] > 0
    _same_rows(cut)


def test_a_transcript_s_recorded_prompts_make_its_row(data: Path, tmp_path: Path) -> None:
    """Claude Code 2.1.332 records what each call sent (``api-request``): a model of a
    200k window sent with the context-1m beta works in 1M, which its row says from the
    first pass on (it said 200k until the full read)."""
    import lzma

    log = tmp_path / "wide.jsonl"
    capture = data / "agents" / "claude-code-2.1.332" / "tui" / "transcript.jsonl.xz"
    with log.open("wb") as out:
        for line in lzma.decompress(capture.read_bytes()).splitlines():
            record = json.loads(line)
            message = record.get("message")
            if record.get("type") == "assistant" and isinstance(message, dict):
                message["model"] = "claude-sonnet-4-5-20250929"
            if record.get("type") == "api-request":
                record["params"]["model"] = "claude-sonnet-4-5-20250929"
                record["params"]["betas"] = [
                    *record["params"].get("betas", []),
                    "context-1m-2025-08-07",
                ]
            out.write(json.dumps(record).encode() + b"\n")
    assert _row_reader(log) == "claude-code"
    _same_rows(log)
    from ctxviewer.library.reading import FileJob, Job, read_group

    assert read_group(Job((FileJob(str(log)),), full=False)).parts[0].summary["window"] == 1_000_000


def _rollout(path: Path, *records: tuple[str, dict]) -> Path:
    """A Codex rollout of ``(type, payload)`` records, one second apart."""
    lines = [
        json.dumps({"timestamp": f"2026-05-01T10:00:{i:02}.000Z", "type": kind, "payload": p})
        for i, (kind, p) in enumerate(records)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _said(role: str, text: str) -> tuple[str, dict]:
    kind = "output_text" if role == "assistant" else "input_text"
    return "response_item", {
        "type": "message",
        "role": role,
        "content": [{"type": kind, "text": text}],
    }


def _call(prompt: int, total: int) -> tuple[str, dict]:
    last = {"input_tokens": prompt, "cached_input_tokens": 0, "output_tokens": 20}
    return "event_msg", {
        "type": "token_count",
        "info": {
            "last_token_usage": {**last, "reasoning_output_tokens": 0},
            "total_token_usage": {**last, "input_tokens": total, "reasoning_output_tokens": 0},
            "model_context_window": 258_400,
        },
    }


def _whole_start(base: str = "You are Codex, a coding agent.") -> list[tuple[str, dict]]:
    """A rollout's start that makes whole requests: the base instructions and the tools."""
    tools = {"type": "namespace", "name": "functions", "tools": [{"name": "shell"}]}
    return [
        ("session_meta", {"id": "s", "cwd": "/p", "cli_version": "0.171.0"}),
        ("turn_context", {"model": "gpt-5.1-codex", "base_instructions": base}),
        ("response_item", {"type": "additional_tools", "tools": [tools]}),
    ]


def test_a_codex_row_declines_where_the_builder_reads_the_messages(tmp_path: Path) -> None:
    """The session builder infers a compaction where a summary opens a later call's
    history than the call before's: from the messages, which a row reader leaves out.
    It says so and declines, and the first pass reads the rollout in full. Whole
    requests with two system prompts (sub-agents, to the builder) keep theirs: read."""
    summary = "Another language model started to solve this problem; the state so far: ..."
    inferred = _rollout(
        tmp_path / "inferred.jsonl",
        *_whole_start(),
        _said("user", "hello"),
        _call(1_000, 1_000),  # a call that wrote nothing: the next one's history grows
        _said("user", summary),
        _call(1_500, 2_500),
        _said("assistant", "ok"),
        _said("user", "next"),
        _call(1_600, 4_100),
        _said("assistant", "done"),
    )
    two_prompts = _rollout(
        tmp_path / "two.jsonl",
        *_whole_start(),
        _said("user", "hello"),
        _call(1_000, 1_000),
        _said("assistant", "ok"),
        _said("user", "next"),  # the call before is written with the prompt it had
        ("turn_context", {"model": "gpt-5.1-codex", "base_instructions": "Another agent."}),
        _call(1_200, 2_200),
        _said("assistant", "done"),
    )
    from ctxviewer.library.reading import FileJob, Job, read_group

    with pytest.raises(Declined, match="compaction summary"):
        lean_session(str(inferred))
    assert _row_reader(two_prompts) == "codex"
    for log in (inferred, two_prompts):
        _same_rows(log)
    whole = read_group(Job((FileJob(str(inferred)),))).parts[0].summary
    assert whole["compactions_observed"] == 1  # the builder's, from the messages
    rows = read_group(Job((FileJob(str(two_prompts)),), full=False)).parts[0].summary
    assert (rows["requests"], rows["main_requests"]) == (2, 1)  # the other is a sub-agent


def test_a_codex_row_reads_what_it_needs_of_an_item_when_asked(tmp_path: Path) -> None:
    """Without messages, a tool's output is made into one only when its tags are asked
    for: here a tool output that reads as memory (the AGENTS.md wrapper), which takes
    the AGENTS.md of ``session_meta`` out of the system prompt from then on, and one
    that opens the history. Their rows are read by the row reader, as the full read."""
    memory = _rollout(
        tmp_path / "memory.jsonl",
        ("session_meta", {"id": "s", "cwd": "/p", "instructions": "Answer concisely."}),
        ("turn_context", {"model": "gpt-5.1-codex"}),
        _said("user", "hello"),
        _call(1_000, 1_000),
        ("response_item", {"type": "function_call", "name": "shell", "call_id": "c1"}),
        (
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": "<user_instructions>\nAnswer concisely.\n</user_instructions>",
            },
        ),
        _call(1_300, 2_300),
        _said("assistant", "done"),
    )
    opening = _rollout(
        tmp_path / "opening.jsonl",
        *_whole_start(),
        ("response_item", {"type": "function_call_output", "call_id": "c0", "output": "x"}),
        _said("user", "hello"),
        _call(1_000, 1_000),
        _said("assistant", "ok"),
        _said("user", "next"),
        _call(1_200, 2_200),
        _said("assistant", "done"),
    )
    for log in (memory, opening):
        assert _row_reader(log) == "codex", log.name
        _same_rows(log)
