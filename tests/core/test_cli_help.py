"""``ctxviewer --help`` and every subcommand's: order, a help text on every option,
one wording for the shared options, and counts in the singular when they are 1."""

from __future__ import annotations

import argparse
import lzma
from pathlib import Path

import pytest

from ctxviewer.analysis.thresholds import POLICIES
from ctxviewer.analysis.tokens.estimators import names as estimator_names
from ctxviewer.cli import COMMANDS, _gui_parser, build_parser, main
from ctxviewer.commands.common import REQUEST_HELP
from ctxviewer.resources import demo_session_path

EVERYDAY_FIRST = [
    "report",
    "insights",
    "findings",
    "compare",
    "compact",
    "tail",
    "sessions",
    "library",
    "proxy",
    "otel",
    "snapshot",
    "formats",
]


def subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_commands_are_listed_everyday_ones_first(capsys: pytest.CaptureFixture[str]) -> None:
    assert list(COMMANDS)[: len(EVERYDAY_FIRST)] == EVERYDAY_FIRST
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    listed = [
        line.split()[0]
        for line in out.splitlines()
        if line.startswith("    ") and line.split()[0] in COMMANDS
    ]
    assert listed == list(COMMANDS)


def test_every_option_has_a_help_text() -> None:
    parsers = {**subparsers(), "(the window)": _gui_parser()}
    assert set(parsers) == {*COMMANDS, "(the window)"}
    missing = [
        f"{name} {'/'.join(a.option_strings) or a.dest}"
        for name, p in parsers.items()
        for a in p._actions
        if not isinstance(a, argparse._HelpAction) and not (a.help or "").strip()
    ]
    assert missing == []


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_help_prints(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([name, "--help"]) == 0  # a stray % in a help text would be an internal error
    out = capsys.readouterr().out
    assert out.startswith(f"usage: ctxviewer {name}")
    assert "spec" not in out and "seed" not in out


def test_request_is_worded_once() -> None:
    helps = {
        name: next(a.help for a in p._actions if "--request" in a.option_strings)
        for name, p in subparsers().items()
        if any("--request" in a.option_strings for a in p._actions)
    }
    assert set(helps) >= {"report", "compare", "compact", "snapshot"}
    for name, text in helps.items():
        what, _, rest = text.partition(": ")
        assert rest.startswith(REQUEST_HELP), name  # "<what it is for>: <the one wording>"


def test_estimator_and_policy_list_their_choices() -> None:
    for name, p in subparsers().items():
        for a in p._actions:
            if "--estimator" in a.option_strings:
                assert list(a.choices) == estimator_names()
                assert all(f"{n}: " in a.help for n in estimator_names()), name
            if "--policy" in a.option_strings:
                assert tuple(a.choices) == POLICIES
                assert all(f"{n}: " in a.help for n in POLICIES), name


def test_one_record_skipped_is_singular(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "demo-with-a-broken-line.jsonl"
    path.write_bytes(lzma.decompress(demo_session_path().read_bytes()) + b'{"broken\n')
    assert main(["report", str(path)]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert head.endswith("55 requests, 1 record skipped")


def test_insights_counts_one_run_in_the_singular(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["insights", str(demo_session_path())]) == 0
    out = capsys.readouterr().out
    assert "Sub-agents: 1 run\n" in out
    assert "Redundancy: 4 findings" in out and "10 tool calls" in out
