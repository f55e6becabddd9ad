"""mypy --strict passes on the core, the proxy and the window, as configured in
pyproject.toml ([tool.mypy]); the timeline plot and its mixins are not checked yet
(see the override there).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _configured() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]


def test_the_core_is_configured_strict():
    config = _configured()
    assert config["strict"] is True
    wanted = {
        "ctxviewer/model.py",
        "ctxviewer/errors.py",
        "ctxviewer/fmt.py",
        "ctxviewer/jsonish.py",
        "ctxviewer/resources.py",
        "ctxviewer/ingest",
        "ctxviewer/analysis",
        "ctxviewer/commands",
        "ctxviewer/cli.py",
        "ctxviewer/proxy",
        "ctxviewer/special_files.py",
        "ctxviewer/gui",
    }
    assert wanted <= set(config["files"])


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")
def test_mypy_strict_is_clean_on_the_core():
    # the cache is .mypy_cache in the repository (ignored by git): a second run takes seconds
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-color-output", "--no-pretty"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    checked = re.search(r"Success: no issues found in (\d+) source files", done.stdout)
    assert checked, done.stdout
    # every module under the configured paths was checked
    files = {
        p
        for entry in _configured()["files"]
        for p in ((ROOT / entry).rglob("*.py") if (ROOT / entry).is_dir() else [ROOT / entry])
    }
    assert int(checked.group(1)) == len(files), (checked.group(0), len(files))
