"""The core runs without Qt: only ctxviewer/gui may import PySide6 or pyqtgraph."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "ctxviewer"
QT = ("PySide6", "pyqtgraph", "shiboken6")


def _imports(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module


def test_no_qt_outside_gui():
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] == "gui":
            continue
        for name in _imports(path):
            if name.split(".")[0] in QT or name.startswith("ctxviewer.gui"):
                # the CLI may start the GUI lazily, inside a function
                if rel.parts[-1] in ("cli.py", "snapshot_cli.py") and name.startswith(
                    "ctxviewer.gui"
                ):
                    continue
                offenders.append(f"{rel}: {name}")
    assert not offenders, offenders


def test_core_imports_and_runs_with_qt_blocked(tmp_path):
    """Import every core module and run a report with PySide6/pyqtgraph made unimportable."""
    code = f"""
import sys
for name in {QT!r}:
    sys.modules[name] = None
import importlib, pkgutil, ctxviewer
for mod in pkgutil.walk_packages(ctxviewer.__path__, "ctxviewer."):
    if mod.name.startswith("ctxviewer.gui") or mod.name == "ctxviewer.__main__":
        continue
    importlib.import_module(mod.name)
from ctxviewer.cli import main
sys.exit(main(["formats"]))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_the_window_starts_without_the_proxy_stack():
    """aiohttp (a tenth of a second to import) loads when the proxy is first started."""
    code = (
        "import sys, ctxviewer.gui.app, ctxviewer.cli; "
        "print(sorted(m for m in ('aiohttp', 'ctxviewer.proxy.server') if m in sys.modules))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_the_layers_hold():
    """import-linter's contracts in pyproject.toml: model <- ingest <- analysis <- proxy
    <- commands | gui (siblings that never import each other), and no Qt in the core."""
    import pytest

    pytest.importorskip("importlinter", reason="import-linter is a test dependency")
    root = PACKAGE.parent
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "lint-imports"),
            "--config",
            str(root / "pyproject.toml"),
        ],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert "0 broken" in done.stdout
