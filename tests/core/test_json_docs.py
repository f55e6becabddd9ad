"""docs/json.md and the JSON the commands print agree, both ways.

Each documented command runs on the bundled demo session (and on small files
written here where the demo cannot show a key: a file that starts empty and
grows, one that is truncated, a session folder in a home of its own). Every
key path a command prints must be in its table in docs/json.md, with a value
of the documented type (null only where the table allows it); every path in
the table must be printed by some run.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxviewer.analysis.tokens.estimators import get_estimator
from ctxviewer.cli import main
from ctxviewer.commands.tail import TailPrinter
from ctxviewer.ingest.follow.follower import Follower
from ctxviewer.resources import demo_session_path

DOC = Path(__file__).resolve().parents[2] / "docs" / "json.md"
CAPTURED = "captured/claude-code-2.1.197-tui.claude-trace.jsonl"
CAPTURED_CONTEXT = "captured/claude-code-2.1.197-tui.context.txt"
TYPES = {
    "int": int,
    "float": (int, float),
    "number": (int, float),
    "string": str,
    "bool": bool,
    "list": list,
    "object": dict,
}


def doc_tables() -> dict[str, dict[str, str]]:
    """Section (the command in the ``## `...` `` heading) -> key path -> its type cell."""
    tables: dict[str, dict[str, str]] = {}
    section = None
    for line in DOC.read_text("utf-8").splitlines():
        heading = re.match(r"## `([^`]+)`", line)
        if heading:
            section = heading.group(1)
            tables[section] = {}
        row = re.match(r"\| `([^`]+)` \| ([^|]*) \|", line)
        if row and section is not None:
            tables[section][row.group(1)] = row.group(2).strip()
    return tables


def paths(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every key path of a JSON value with the value there (``a.b``, ``a[].b``).

    Nested item rows (``items[].items[]``) are folded into one level: they
    have the same keys at every depth."""
    if isinstance(value, dict):
        for k, v in value.items():
            p = f"{prefix}.{k}" if prefix else k
            p = re.sub(r"(\.items\[\])+\.items\[\]", ".items[]", p)
            yield p, v
            yield from paths(v, p)
    elif isinstance(value, list):
        for item in value:
            yield from paths(item, prefix + "[]")


def pattern(documented: str) -> re.Pattern[str]:
    """A documented path as a regex: ``<name>`` stands for any one key."""
    return re.compile(re.sub(r"<[a-z]+>", r"[^.\\[\\]]+", re.escape(documented)) + "$")


def type_ok(cell: str, value: Any) -> bool:
    if value is None:
        return "null" in cell
    head = cell.split(",")[0]
    kinds = [TYPES[w] for w in re.findall(r"[a-z]+", head) if w in TYPES]
    if head.startswith("list"):
        kinds = [list]
    if isinstance(value, bool):
        return bool in kinds
    return any(isinstance(value, k) for k in kinds)


def check(section: str, outputs: list[Any], unseen_ok: tuple[str, ...] = ()) -> None:
    table = doc_tables()[section]
    assert table, f"docs/json.md has no key table for {section}"
    patterns = {p: pattern(p) for p in table}
    seen: set[str] = set()
    undocumented: set[str] = set()
    wrong: set[str] = set()
    for out in outputs:
        for path, value in paths(out):
            match = next((p for p, rx in patterns.items() if rx.match(path)), None)
            if match is None:
                undocumented.add(path)
                continue
            seen.add(match)
            if not type_ok(table[match], value):
                wrong.add(f"{path} = {json.dumps(value)[:60]} (documented: {table[match]})")
    assert not undocumented, f"{section}: printed, not in docs/json.md: {sorted(undocumented)}"
    assert not wrong, f"{section}: another type than documented: {sorted(wrong)}"
    missing = sorted(p for p in table if p not in seen and not p.startswith(unseen_ok))
    assert not missing, f"{section}: in docs/json.md, printed by no run: {missing}"


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    assert main(list(args)) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def demo() -> str:
    return str(demo_session_path())


def test_every_section_of_the_page_is_checked_here() -> None:
    assert set(doc_tables()) == {
        "report --json",
        "report --sessions --json",
        "compare --json",
        "compare --csv",
        "compact --json",
        "insights --json",
        "findings --json",
        "sessions --json",
        "library --json",
        "formats --json",
        "tail --json",
        "query --json",
        "proxy",
    }
    assert not doc_tables()["proxy"]  # it prints no JSON: docs/recording-format.md


def _reports(demo: str, capsys: pytest.CaptureFixture[str]) -> list[Any]:
    return [
        run_json(capsys, "report", demo, "--json"),
        run_json(capsys, "report", demo, "--json", "--request", "0"),
    ]


def test_report(demo: str, capsys: pytest.CaptureFixture[str]) -> None:
    check("report --json", _reports(demo, capsys), unseen_ok=("against",))


def test_report_against(demo: str, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``against``: an agent's own /context output, which the demo does not come with."""
    against = run_json(
        capsys,
        "report",
        str(corpus / CAPTURED),
        "--json",
        "--against",
        str(corpus / CAPTURED_CONTEXT),
    )
    check("report --json", [*_reports(demo, capsys), against])


def test_report_sessions(demo: str, capsys: pytest.CaptureFixture[str]) -> None:
    check("report --sessions --json", [run_json(capsys, "report", demo, "--sessions", "--json")])


def test_compare(demo: str, capsys: pytest.CaptureFixture[str]) -> None:
    check("compare --json", [run_json(capsys, "compare", demo, "--json", "--request", "last")])


def test_compare_csv_columns(demo: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", demo, "--csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    header = rows[0]
    estimators = header[4 : 4 + (len(header) - 4) // 2]
    as_doc = header[:4] + ["<estimator>"] + ["<estimator>_pct"]
    assert header == header[:4] + estimators + [f"{n}_pct" for n in estimators]
    assert list(doc_tables()["compare --csv"]) == as_doc
    assert len(rows) > 1 and all(len(r) == len(header) for r in rows)


def test_compact(demo: str, capsys: pytest.CaptureFixture[str]) -> None:
    outputs = [
        run_json(capsys, "compact", demo, "--strategy", s, "--json")
        for s in ("qwen", "slim+qwen", "trim")
    ]
    # usage: only a summary made by the Anthropic API has one (no network in the tests)
    check("compact --json", outputs, unseen_ok=("usage.",))


def test_insights(demo: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(
        capsys,
        "insights",
        demo,
        "--json",
        "--budget",
        "0.5",
        "--budget-tokens",
        "500000",
        "--budget-scope",
        "task",
        "--diff",
        "1",
        "3",
    )
    check("insights --json", [out])


def test_findings(demo: str, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lemmy = next((corpus / "claude-trace").glob("badlogic__lemmy__*.jsonl"))
    check(
        "findings --json",
        [
            run_json(capsys, "findings", demo, "--json"),
            run_json(capsys, "findings", str(lemmy), "--json"),
        ],
    )


def test_query(demo: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset = tmp_path / "ds"
    assert main(["export", demo, "--parquet", str(dataset)]) == 0
    capsys.readouterr()
    sql = Path(__file__).resolve().parents[2] / "docs" / "queries" / "cost_by_mcp_server.sql"
    out = run_json(capsys, "query", str(sql), str(dataset), "--json")
    assert len(out["rows"]) == 2 and all(len(r) == len(out["columns"]) for r in out["rows"])
    check("query --json", [out])


def test_formats(capsys: pytest.CaptureFixture[str]) -> None:
    check("formats --json", [run_json(capsys, "formats", "--json")])


def _claude(uuid: str, parent: str | None, kind: str, **extra: object) -> bytes:
    rec: dict[str, object] = {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s-1",
        "cwd": "/work/app",
        "timestamp": "2025-08-02T12:00:00Z",
    }
    rec.update(extra)
    return (json.dumps(rec) + "\n").encode()


def _user(uuid: str, parent: str | None) -> bytes:
    return _claude(uuid, parent, "user", message={"role": "user", "content": "hello"})


def _reply(uuid: str, parent: str, msg_id: str, prompt: int) -> bytes:
    usage = {"input_tokens": 10, "cache_read_input_tokens": prompt - 10, "output_tokens": 5}
    return _claude(
        uuid,
        parent,
        "assistant",
        requestId=f"req-{msg_id}",
        message={
            "id": msg_id,
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "ok"}],
            "usage": usage,
        },
    )


def test_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    for name in (
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "GEMINI_CLI_HOME",
        "QWEN_RUNTIME_DIR",
        "XDG_CONFIG_HOME",
    ):
        monkeypatch.delenv(name, raising=False)
    folder = home / ".claude" / "projects" / "-work-app"
    (folder / "s-1" / "subagents").mkdir(parents=True)
    (folder / "s-1.jsonl").write_bytes(_user("u1", None) + _reply("a1", "u1", "m1", 1_000))
    (folder / "s-1" / "subagents" / "agent-a1.jsonl").write_bytes(b"not a transcript\n")
    out = run_json(capsys, "sessions", "--json")
    assert len(out) == 2
    check("sessions --json", [out])


def test_library(
    demo: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The demo in a folder the user added, a Claude Code session in its agent folder,
    and a bad file beside it; a plain listing and a search."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CTXVIEWER_LIBRARY_DIR", str(tmp_path / "library"))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "QWEN_RUNTIME_DIR"):
        monkeypatch.delenv(name, raising=False)
    folder = home / ".claude" / "projects" / "-work-app"
    folder.mkdir(parents=True)
    (folder / "s-1.jsonl").write_bytes(_user("u1", None) + _reply("a1", "u1", "m1", 1_000))
    (folder / "junk.jsonl").write_bytes(b"\x00\x01" * 50)
    recordings = tmp_path / "recordings"
    recordings.mkdir()
    (recordings / "demo.jsonl.xz").write_bytes(Path(demo).read_bytes())
    listing = run_json(capsys, "library", "--add-folder", str(recordings), "--json")
    found = run_json(capsys, "library", "--search", "the", "--json", "--no-scan")
    assert len(listing["sessions"]) == 2 and listing["bad_files"]
    assert found["sessions"] and found["sessions"][0]["matches"]
    check("library --json", [listing, found])


def test_tail(demo: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tail", demo, "--once", "--json"]) == 0
    lines = capsys.readouterr().out
    # a file that starts with no request (start, then agent), then is truncated (reload)
    path = tmp_path / "s.jsonl"
    path.write_bytes(_user("u1", None))
    follower = Follower(path)
    printer = TailPrinter(get_estimator("qwen"), "agent", None, as_json=True)
    printer.show(follower.poll())
    with open(path, "ab") as f:
        f.write(
            _reply("a1", "u1", "m1", 1_000) + _user("u2", "a1") + _reply("a2", "u2", "m2", 2_000)
        )
    printer.show(follower.poll())
    path.write_bytes(_user("x1", None) + _reply("x2", "x1", "m9", 900))
    printer.show(follower.poll())
    lines += capsys.readouterr().out
    outputs = [json.loads(line) for line in lines.splitlines()]
    assert {o["type"] for o in outputs} == {"start", "agent", "reload", "request"}
    check("tail --json", outputs)
