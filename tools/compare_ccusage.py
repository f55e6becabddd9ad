"""ctxviewer's cost of session logs against ccusage's, model by model.

    python tools/compare_ccusage.py --ccusage PATH [FILE ...]

Each FILE (default: the logs of ``../shared/corpus``) is laid out in a temporary
home the way its agent keeps it (``.claude/projects``, ``.codex/sessions``,
``.gemini/tmp/<hash>/chats``, ``.qwen/projects/<p>/chats``) and ``ccusage AGENT session
--json --offline`` (ccusage 20: its cached prices, nothing fetched) reads it; ctxviewer's
``insights --json`` reads the file itself. Prints, per model both tools price, the two
costs and their difference; a model only one of them prices or counts is listed as
such. Files ccusage does not read (API traces, OTLP logs) are skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
AGENTS = {
    "claude-code": "claude",
    "codex": "codex",
    "gemini-cli": "gemini",
    "gemini-cli-jsonl": "gemini",
    "qwen-code": "qwen",
}


def lay_out(agent: str, path: Path, home: Path) -> None:
    if agent == "claude":
        folder = home / ".claude" / "projects" / "project"
        name = path.name
    elif agent == "codex":
        folder = home / ".codex" / "sessions" / "2026" / "01" / "01"
        name = f"rollout-2026-01-01T00-00-00-{path.name}"
    elif agent == "gemini":
        folder = home / ".gemini" / "tmp" / "0123abcd" / "chats"
        name = "session-2026-01-01T00-00-abcd1234" + (
            ".jsonl" if path.suffix == ".jsonl" else ".json"
        )
    else:
        folder = home / ".qwen" / "projects" / "project" / "chats"
        name = path.name
    folder.mkdir(parents=True)
    shutil.copy(path, folder / name)


def ccusage_costs(ccusage: str, agent: str, path: Path) -> dict[str, float]:
    """model -> USD, as ``ccusage AGENT session --json --offline`` prices it."""
    with tempfile.TemporaryDirectory(prefix="ccusage-home-") as tmp:
        home = Path(tmp)
        lay_out(agent, path, home)
        env = dict(
            os.environ,
            HOME=tmp,
            CLAUDE_CONFIG_DIR=str(home / ".claude"),
            CODEX_HOME=str(home / ".codex"),
        )
        done = subprocess.run(
            [ccusage, agent, "session", "--json", "--offline"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    try:
        data = json.loads(done.stdout)
    except json.JSONDecodeError:
        return {}
    out: dict[str, float] = {}
    for s in data.get("sessions", []):
        for m in s.get("modelBreakdowns", []):
            out[m["modelName"]] = out.get(m["modelName"], 0.0) + m["cost"]
        models = s.get("models")
        if isinstance(models, dict) and len(models) == 1:  # codex: one cost per session
            (name,) = models
            out[name] = out.get(name, 0.0) + s.get("costUSD", 0.0)
    return out


def ctxviewer_costs(path: Path) -> tuple[str, dict[str, float | None]]:
    done = subprocess.run(
        [sys.executable, "-m", "ctxviewer", "insights", str(path), "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    data: dict[str, Any] = json.loads(done.stdout)
    return data["source"]["format"], {m["model"]: m["total_usd"] for m in data["cost"]["by_model"]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="*", type=Path)
    p.add_argument("--ccusage", required=True, help="the ccusage command (version 20)")
    args = p.parse_args(argv)
    files = args.files or sorted(x for x in CORPUS.glob("*/*") if x.suffix in (".json", ".jsonl"))
    worst = 0.0
    for path in files:
        fmt, ours = ctxviewer_costs(path)
        agent = AGENTS.get(fmt)
        if agent is None:
            print(f"{path.name[:70]}: {fmt}, not a log ccusage reads")
            continue
        theirs = ccusage_costs(args.ccusage, agent, path)
        print(f"{path.name[:70]} [{fmt}]")
        for model in sorted(set(ours) | set(theirs)):
            a, b = ours.get(model), theirs.get(model)
            if a is not None and b is not None:
                diff = abs(a - b) / b if b else abs(a - b)
                worst = max(worst, diff)
                print(f"  {model:40} ctxviewer ${a:10.6f}  ccusage ${b:10.6f}  {diff:7.2%}")
            else:
                print(
                    f"  {model:40} ctxviewer {'-' if a is None else f'${a:.6f}':>11}  "
                    f"ccusage {'-' if b is None else f'${b:.6f}':>11}  (one side only)"
                )
    print(f"largest difference where both price a model: {worst:.2%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
