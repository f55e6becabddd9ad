"""The tree passes its lint and is formatted, as `pyproject.toml`'s ``[tool.ruff]`` says.

``ruff`` comes with the test extra, pinned to a minor version: its formatter changes
style only between minors, so a run here and in CI agree.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TREE = ["ctxviewer", "tests", "tools", "bench"]


def _ruff() -> list[str]:
    exe = Path(sys.executable).with_name("ruff")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("ruff")
    if found is None:
        pytest.fail("ruff is not installed: it comes with the test extra ('.[test]')")
    return [found]


def test_the_lint_passes() -> None:
    done = subprocess.run(
        [*_ruff(), "check", "--output-format", "concise", *TREE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_the_tree_is_formatted() -> None:
    done = subprocess.run(
        [*_ruff(), "format", "--check", *TREE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, (
        "run `ruff format ctxviewer tests tools bench`:\n"
        + done.stdout[-4000:]
        + done.stderr[-2000:]
    )
