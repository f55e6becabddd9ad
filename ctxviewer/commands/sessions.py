"""``ctxviewer sessions``: the agent session files on this machine, newest first."""

from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path

from ctxviewer.commands.common import (
    UsageError,
    add_json_argument,
    fit_line,
    print_json,
    terminal_width,
)
from ctxviewer.ingest.discover import ACTIVE_MINUTES, SessionInfo, default_roots, discover_sessions

HELP = "list Claude Code / Codex / Gemini CLI / qwen-code session files, newest first"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--active",
        action="store_true",
        help=f"only files written in the last --minutes (default {ACTIVE_MINUTES:g})",
    )
    p.add_argument(
        "--minutes",
        type=float,
        default=ACTIVE_MINUTES,
        help=f"how recent a write makes a session active (default {ACTIVE_MINUTES:g})",
    )
    p.add_argument("--limit", type=int, default=50, help="list at most N files (0: all found)")
    add_json_argument(p)


def run(args: argparse.Namespace) -> int:
    if args.minutes <= 0:
        raise UsageError("--minutes must be positive")
    if args.limit < 0:
        raise UsageError("--limit must be 0 (all) or a positive number")
    found = discover_sessions(active_minutes=args.minutes)
    if args.active:
        found = [s for s in found if s.active]
    if args.limit:
        found = found[: args.limit]
    if args.json:
        print_json([s.as_json() for s in found])
        return 0
    if not found:
        where = ", ".join(_home(str(r.path)) for r in default_roots())
        print(f"no {'active ' if args.active else ''}session files found (looked in {where})")
        return 0
    width = terminal_width()
    for s in found:
        print(render(s, width))
    return 0


def render(s: SessionInfo, width: int | None = None) -> str:
    """Active mark, time, agent, size, project, then the path and problems (on a line of
    their own when one line is wider than ``width``)."""
    mark = "*" if s.active else " "
    when = datetime.fromtimestamp(s.mtime).strftime("%Y-%m-%d %H:%M")
    head = f"{mark} {when}  {s.agent:<11} {_size(s.size):>8}  {_home(s.label) or '-'}"
    tail = _home(s.path)
    if s.subagent:
        tail += "  (sub-agent)"
    if not s.openable:
        why = (s.error or "").replace(f"{s.path}: ", "").replace(f"{s.path} ", "")
        tail += f"  [cannot open: {why}]"
    return fit_line(head, tail, width)


def _size(n: int) -> str:
    for unit, step in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= step:
            return f"{n / step:.1f} {unit}"
    return f"{n} B"


def _home(path: str) -> str:
    home = str(Path.home())
    if path == home:
        return "~"
    if path.startswith(home + "/"):
        return "~" + path[len(home) :]
    return path
