from __future__ import annotations

import json

import pytest

from ctxviewer.cli import main
from ctxviewer.errors import UsageError

LEMMY = "claude-trace/badlogic__lemmy__apps_claude-trace_test_test-traffic.jsonl"
SPOTTER = "claude-code/marot__spotter__test_fixtures_transcripts_fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"


def run_json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_report_json_contract(corpus, capsys):
    out = run_json(capsys, "report", str(corpus / LEMMY), "--json")
    assert out["source"]["format"] == "claude-trace"
    assert out["source"]["skipped_records"] == 0
    assert out["window"] == 200_000 and out["policy"] == "agent"
    assert out["agent"]["id"] == "claude-code" and out["agent"]["version"] == "1.0.6"
    assert out["window_source"] == "agent profile" and out["policy_source"] == "agent profile"
    assert out["thresholds"] == {
        "warn": 147_000,
        "auto": 167_000,
        "hard": 177_000,
        "effective": 180_000,
        "target": None,
    }
    assert len(out["requests"]) == 64
    first = out["requests"][0]
    for key in (
        "index",
        "timestamp",
        "model",
        "api_prompt_tokens",
        "estimated_prompt_tokens",
        "output_tokens",
        "tier",
        "sidechain",
        "events",
    ):
        assert key in first
    b = out["breakdown"]
    assert b["mode"] == "B" and b["estimator"] == "qwen"
    assert b["total"] == out["requests"][b["request"]]["api_prompt_tokens"]
    names = [c["name"] for c in b["categories"]]
    assert names == [
        "system_prompt",
        "builtin_tools",
        "mcp_tools",
        "skills",
        "memory_files",
        "messages",
        "free_space",
        "autocompact_buffer",
    ]
    assert sum(c["tokens"] for c in b["categories"]) == out["window"]
    mcp = next(c for c in b["categories"] if c["name"] == "mcp_tools")
    assert mcp["items"][0]["name"] == "ide"
    assert {i["name"] for i in mcp["items"][0]["items"]} == {
        "mcp__ide__executeCode",
        "mcp__ide__getDiagnostics",
    }
    assert mcp["percent"] == round(100 * mcp["tokens"] / 200_000, 2)


def test_report_json_spotter(corpus, capsys):
    out = run_json(capsys, "report", str(corpus / SPOTTER), "--json")
    # 157 calls of the main agent, 18 of two Explore sub-agents (from progress records)
    roles = [r["role"] for r in out["requests"]]
    assert (roles.count("main"), roles.count("subagent"), len(roles)) == (157, 18, 175)
    assert out["peak_prompt_tokens"] == 166_874
    assert max(r["api_prompt_tokens"] for r in out["requests"]) == 166_874
    assert [e["kind"] for e in out["events"]] == ["compact_boundary"]
    assert out["events"][0]["pre_tokens"] == 167_117
    flagged = [r for r in out["requests"] if r["events"]]
    assert [r["events"] for r in flagged] == [["compact_boundary"]]
    assert out["breakdown"]["categories"][0]["name"] == "unrecorded_overhead"


def test_report_options(corpus, capsys):
    out = run_json(
        capsys,
        "report",
        str(corpus / LEMMY),
        "--json",
        "--request",
        "3",
        "--estimator",
        "cl100k",
        "--window",
        "100000",
        "--policy",
        "qwen-legacy",
    )
    assert out["breakdown"]["request"] == 3 and out["breakdown"]["estimator"] == "cl100k"
    assert out["window"] == 100_000 and out["thresholds"]["auto"] == 70_000
    out = run_json(capsys, "report", str(corpus / LEMMY), "--json", "--request", "-1")
    assert out["breakdown"]["request"] == 63


def test_report_text(corpus, capsys):
    assert main(["report", str(corpus / LEMMY)]) == 0
    text = capsys.readouterr().out
    for label in (
        "System prompt",
        "Built-in tools",
        "MCP tools",
        "Messages",
        "Free space",
        "Autocompact buffer",
        "mcp__ide__executeCode",
    ):
        assert label in text


def _one_line_error(capsys, argv):
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err and "\n" not in err and "Traceback" not in err
    return err


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    assert "no such file" in _one_line_error(capsys, ["report", str(tmp_path / "missing.jsonl")])
    assert "directory" in _one_line_error(capsys, ["report", str(tmp_path)])
    binary = tmp_path / "x.bin"
    binary.write_bytes(bytes(range(256)) * 10)
    assert "binary" in _one_line_error(capsys, ["report", str(binary)])
    unknown = tmp_path / "notes.jsonl"
    unknown.write_text('{"hello": "world"}\n{"a": 1}\n')
    assert "unknown format" in _one_line_error(capsys, ["report", str(unknown)])
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert "empty" in _one_line_error(capsys, ["report", str(empty)])
    text = tmp_path / "readme.txt"
    text.write_text("just some text\n")
    assert "unknown format" in _one_line_error(capsys, ["report", str(text)])


def test_bad_arguments(corpus, capsys):
    _one_line_error(capsys, ["report", str(corpus / LEMMY), "--request", "999"])
    _one_line_error(capsys, ["report", str(corpus / LEMMY), "--estimator", "nope"])
    _one_line_error(capsys, ["report", str(corpus / LEMMY), "--window", "-5"])
    _one_line_error(capsys, ["report"])
    _one_line_error(capsys, ["report", str(corpus / LEMMY), "--format", "nope"])


def test_formats(capsys):
    assert main(["formats"]) == 0
    out = capsys.readouterr().out
    assert "claude-code" in out and "claude-trace" in out and "recording" in out
    assert main(["formats", "--json"]) == 0
    names = [f["name"] for f in json.loads(capsys.readouterr().out)]
    assert {"claude-code", "claude-trace", "recording"} <= set(names)


def test_version_and_help(capsys):
    assert main(["--version"]) == 0
    assert "ctxviewer" in capsys.readouterr().out
    assert main(["--help"]) == 0
    assert "report" in capsys.readouterr().out


def test_module_entry_point(corpus):
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "ctxviewer", "report", str(corpus / LEMMY), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["source"]["format"] == "claude-trace"


def test_mistyped_commands_and_missing_files_say_so(capsys, tmp_path):
    assert main(["reprot", "FILE"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ctxviewer: unknown command 'reprot' (did you mean report?)")
    assert main(["nosuchcommand"]) == 2  # does not open the window
    assert "unknown command 'nosuchcommand'" in capsys.readouterr().err
    # a missing file is the window's to say (a dialog, then the library): not refused here
    from ctxviewer.cli import _check_not_a_command

    _check_not_a_command([str(tmp_path / "gone.jsonl")])
    _check_not_a_command(["gone.jsonl"])
    _check_not_a_command(["--new-instance", str(tmp_path / "gone.jsonl")])  # option first
    with pytest.raises(UsageError, match="unknown command 'nosuch'"):
        _check_not_a_command(["--new-instance", "nosuch", "FILE"])
    assert main(["report"]) == 2  # one prefix, not "ctxviewer: ctxviewer report: …"
    assert capsys.readouterr().err.startswith("ctxviewer: report: the following arguments")


def test_help_names_the_window(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for part in ("ctxviewer [FILE]", "--new-instance", "--install-desktop"):
        assert part in out


def test_no_display_is_one_line_not_a_crash(tmp_path):
    import os
    import subprocess
    import sys

    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    }
    if not sys.platform.startswith("linux"):
        pytest.skip("displays are a Linux matter here (X11 / Wayland)")
    done = subprocess.run(
        [sys.executable, "-m", "ctxviewer"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr.startswith("ctxviewer: no display") and "report" in done.stderr


def test_standard_input_pipes_and_nul_bytes(corpus, tmp_path, capsys):
    import os
    import subprocess
    import sys

    data = (corpus / LEMMY).read_bytes()
    done = subprocess.run(
        [sys.executable, "-m", "ctxviewer", "report", "-", "--json"],
        input=data,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["source"]["path"] == "-" and len(out["requests"]) == 64
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # nothing writes to it: reading would block forever
    assert main(["report", str(fifo)]) == 2
    assert "not a regular file" in capsys.readouterr().err
    lines = data.splitlines(keepends=True)
    broken = tmp_path / "nul.jsonl"
    broken.write_bytes(lines[0][:50] + b"\x00" + lines[0][50:] + b"".join(lines[1:]))
    assert main(["report", str(broken), "--json"]) == 0  # the line with the NUL is skipped
    out = json.loads(capsys.readouterr().out)
    assert out["source"]["skipped_records"] == 1 and len(out["requests"]) == 63


@pytest.mark.parametrize("count", [1e30, 2**63, 10**12])
def test_absurd_token_counts_are_clamped(tmp_path, capsys, count):
    records = [
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "sessionId": "s",
            "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "user", "content": "hi"},
        },
        {
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "sessionId": "s",
            "requestId": "r",
            "timestamp": "2026-01-01T00:00:01Z",
            "message": {
                "id": "m",
                "role": "assistant",
                "model": "claude-x",
                "content": [{"type": "text", "text": "x"}],
                "usage": {"input_tokens": count, "output_tokens": 1},
            },
        },
    ]
    path = tmp_path / "damaged.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["report", str(path)]) == 0
    text = capsys.readouterr().out
    assert "peak prompt 1,000,000,000 tokens" in text and len(text) < 20_000
    assert main(["report", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["peak_prompt_tokens"] == 1_000_000_000


def test_report_sessions_of_a_file_without_requests(corpus, capsys):
    """A transcript holding only a summary line: one session, no request, no timestamps
    (it was an IndexError)."""
    empty = next((corpus / "claude-code").glob("chiphuyen__sniffly__*ff71dbed*.jsonl"))
    out = run_json(capsys, "report", str(empty), "--sessions", "--json")
    assert out == {
        "sessions": [
            {
                "session": 0,
                "agent": "Claude Code",
                "conversation": None,
                "requests": 0,
                "main_requests": 0,
                "first": None,
                "last": None,
                "peak_prompt_tokens": None,
            }
        ]
    }
