"""``ctxviewer library``: every session on this machine, summarized, searchable."""

from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime
from typing import Any

from ctxviewer.commands.common import (
    UsageError,
    add_json_argument,
    fit_line,
    print_json,
    terminal_width,
)
from ctxviewer.fmt import fmt_tokens, plural, usd
from ctxviewer.jsonish import printable

HELP = (
    "index every Claude Code / Codex / Gemini CLI / qwen-code session on this machine "
    "(and folders you add) and list them with their peak, cost and compactions"
)
TEXT_LIMIT = 50


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ctxviewer.library.location import db_path
    from ctxviewer.library.query import SORTS

    p.add_argument(
        "--search",
        metavar="TEXT",
        help='only sessions whose messages hold every word of TEXT (a "quoted '
        'phrase" as written), with the matching requests',
    )
    p.add_argument(
        "--sort",
        choices=sorted(SORTS),
        default=None,
        metavar="KEY",
        help=f"order by one of {', '.join(sorted(SORTS))} (default: start, newest "
        "first; matches: the most matching requests first, which counts "
        "every match, the slower way)",
    )
    p.add_argument(
        "--agent",
        metavar="A",
        help="only sessions of this agent (claude-code, codex, gemini-cli, "
        "qwen-code, …; part of the name is enough)",
    )
    p.add_argument(
        "--project", metavar="P", help="only sessions whose project (working directory) contains P"
    )
    p.add_argument(
        "--add-folder",
        action="append",
        default=[],
        metavar="DIR",
        help="index the session files under DIR too (e.g. where the proxy writes "
        "its recordings); remembered by the library; may be repeated",
    )
    p.add_argument(
        "--remove-folder",
        action="append",
        default=[],
        metavar="DIR",
        help="stop indexing a folder added with --add-folder",
    )
    scan = p.add_mutually_exclusive_group()
    scan.add_argument(
        "--rescan", action="store_true", help="forget what was read and read every file again"
    )
    scan.add_argument(
        "--no-scan",
        action="store_true",
        help="list what the index holds without looking for new or changed files",
    )
    p.add_argument(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help=f"list at most N sessions (0: all; default {TEXT_LIMIT} in text, all with --json)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="processes that read files on a large scan (default: the CPUs)",
    )
    p.add_argument(
        "--index-text",
        action="store_true",
        help="index the text for --search now, in this process, before listing "
        "(a large scan lists the sessions first and indexes their text in "
        "the background)",
    )
    p.add_argument(
        "--bad", action="store_true", help="list the files that cannot be read, with the reason"
    )
    add_json_argument(p)
    p.epilog = f"The index lives in {db_path()} (CTXVIEWER_LIBRARY_DIR moves it)."


def run(args: argparse.Namespace) -> int:
    from ctxviewer.library import Library, ScanStats

    if args.limit is not None and args.limit < 0:
        raise UsageError("--limit must be 0 (all) or a positive number")
    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if args.search is not None:
        from ctxviewer.library.search import fts_query

        if fts_query(args.search) is None:
            raise UsageError(f"--search {args.search!r}: no word to look for")
    with Library() as lib:
        for folder in args.add_folder:
            try:
                lib.add_folder(folder)
            except ValueError as why:
                raise UsageError(f"--add-folder: {why}") from None
        for folder in args.remove_folder:
            if not lib.remove_folder(folder):
                raise UsageError(
                    f"--remove-folder {folder}: not one of the library's folders "
                    f"({', '.join(lib.folders()) or 'none added'})"
                )
        stats = ScanStats()
        if args.rescan:
            lib.clear()
        sort = args.sort or "start"  # matches: every match counted, the slower way
        limit = args.limit if args.limit is not None else (0 if args.json else TEXT_LIMIT)
        if not args.no_scan:
            stats = _scan(lib, args)
        if args.index_text:
            _index_text(lib, args)
        said = len(lib.notes)
        found = lib.sessions(
            agent=args.agent,
            project=args.project,
            sort=sort,
            limit=limit or None,
            search=args.search,
        )
        bad = lib.bad_files()
        if len(lib.notes) > said and not args.no_scan:  # the listing found it damaged: the
            stats = _scan(lib, args)  # new index is filled, and listed again
            found = lib.sessions(
                agent=args.agent,
                project=args.project,
                sort=sort,
                limit=limit or None,
                search=args.search,
            )
            bad = lib.bad_files()
        indexing = lib.indexing()
        if indexing["pending"] and not indexing["running"]:
            _index_in_background()
            indexing["running"] = True
        status = _say(lib.notes, stats)
        if args.json:
            print_json(
                {
                    "library": str(lib.path),
                    "folders": lib.folders(),
                    "scan": stats.as_dict(),
                    "counts": lib.counts(),
                    "indexing": indexing,
                    "sessions": found,
                    "bad_files": bad,
                }
            )
            return status
        total = lib.counts()["sessions"]
        width = terminal_width()
        found, bad = printable(found), printable(bad)  # a name that is no UTF-8: \xe9
        for e in found:
            print(render(e, width))
            for m in e.get("matches", []):
                print(f"      request {m['request']}: {m['snippet']}")
        _footer(found, total, bad, stats, args)
        _indexing_note(indexing, args)
    return status


def _index_text(lib: Any, args: argparse.Namespace) -> None:
    """``--index-text``: the second pass here (waiting for one another process runs)."""
    tty = sys.stderr.isatty()
    lib.index_texts(
        workers=args.workers,
        wait=True,
        progress=(lambda s: _progress(s, "indexing the text")) if tty else None,
    )
    if tty:
        sys.stderr.write("\r\033[K")


def _index_in_background() -> None:
    """Start the second pass (``library --index-text``) in a process of its own that
    outlives this one, as ``git gc --auto`` does: the listing does not wait for it."""
    import subprocess

    detached: dict[str, Any] = (
        {"start_new_session": True}
        if os.name != "nt"
        else {
            "creationflags": getattr(subprocess, "DETACHED_PROCESS", 0)
            | getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
        }
    )
    this = (
        [sys.executable] if getattr(sys, "frozen", False) else [sys.executable, "-m", "ctxviewer"]
    )  # a packaged app is its own command
    subprocess.Popen(
        [*this, "library", "--index-text", "--no-scan", "--json", "--limit", "1"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        close_fds=True,
        **detached,
    )


def _indexing_note(indexing: dict[str, Any], args: argparse.Namespace) -> None:
    """Until the second pass ends, a search sees only the sessions whose text it read."""
    left = indexing["pending"]
    if not left:
        return
    done = f"{indexing['indexed']:,} of {indexing['indexed'] + left:,} session files"
    if args.search is not None:
        print(
            f"still indexing the text for search ({done} done): the sessions not indexed "
            "yet are not in these results"
        )
    else:
        print(f"indexing the text for --search in the background ({done} done)")


def _say(notes: list[str], stats: Any) -> int:
    """What happened to the index and its folders, once, on stderr; 1 when the scan could
    not write the index (what it holds is listed all the same)."""
    lines = list(notes)
    lines += [
        f"the folder {printable(f)} you added is not there any more: its sessions "
        f"left the library (--remove-folder {printable(f)} forgets it)"
        for f in stats.missing_folders
    ]
    if stats.failed:
        left = stats.to_read - stats.read
        lines.append(
            f"{stats.failed}: {plural(left, 'changed file')} of {stats.to_read:,} "
            "not read; the list is what the index held"
        )
    for line in lines:
        print(f"ctxviewer: library: {line}", file=sys.stderr)
    return 1 if stats.failed else 0


def _scan(lib: Any, args: argparse.Namespace) -> Any:
    stats = lib.scan(workers=args.workers, progress=_progress if sys.stderr.isatty() else None)
    if sys.stderr.isatty() and stats.to_read:
        sys.stderr.write("\r\033[K")
    return stats


def _progress(stats: Any, what: str = "indexing") -> None:
    if stats.waiting and not stats.to_read:
        sys.stderr.write(f"\r{what}: waiting for another ctxviewer's…")
    else:
        sys.stderr.write(
            f"\r{what}: {stats.read:,}/{stats.to_read:,} sessions, "
            f"{stats.bytes_read / 1e6:,.0f} MB read"
        )
    sys.stderr.flush()


def render(e: dict[str, Any], width: int | None = None) -> str:
    """One session: when, agent, size, peak, cost, compactions, project, then its file
    and matches. In a terminal narrower than that line (``width``) the file goes on a
    line of its own, and if the columns do not fit either, the project and the compactions
    join it."""
    when = _when(e["start"]) or _when(e["mtime"]) or "?"
    share = f" ({e['peak_share'] * 100:.0f}%)" if e["peak_share"] is not None else ""
    peak = f"peak {fmt_tokens(e['peak_prompt_tokens'])}{share}"
    comp = e["compactions_observed"]
    fields = [
        when,
        e["agent"],
        plural(e["requests"], "request"),
        peak,
        usd(e["cost_usd"], "-"),
        plural(comp, "compaction") if comp else "",
    ]
    columns = [
        f"{when}  {e['agent']:<12}",
        f"{fields[2]:>13}",
        f"{peak:<18}",
        f"{fields[4]:>9}",
        f"{fields[5]:<13}",
    ]
    project = _home(e["project"] or "-")
    if e["parts"] > 1:
        project += f"  (session {e['part'] + 1} of {e['parts']})"
    tail = _home(e["path"] or "")
    if e.get("match_count"):
        tail += f"  [{plural(e['match_count'], 'matching request')}]"
    head = "  ".join([*columns, project])
    if width is not None and len(head) > width:  # compact: no padding, at most 77 columns;
        below = "  ".join(f for f in (project, fields[5], tail) if f)  # the rest below
        return fit_line("  ".join(fields[:5]), below, width)
    return fit_line(head, tail, width)


def _footer(
    found: list[dict[str, Any]],
    total: int,
    bad: list[dict[str, Any]],
    stats: Any,
    args: argparse.Namespace,
) -> None:
    shown = (
        f"{len(found):,} of {plural(total, 'session')}"
        if len(found) < total
        else plural(total, "session")
    )
    read = (
        f"; read {plural(stats.read, 'file')} ({stats.bytes_read / 1e6:,.1f} MB)"
        if stats.read
        else ""
    )
    print(
        f"{shown}{read}"
        + (
            f"; {plural(len(bad), 'file')} cannot be read"
            + ("" if args.bad else " (--bad lists them)")
            if bad
            else ""
        )
    )
    if args.bad:
        for b in bad:
            print(f"  {_home(b['path'])}: {b['reason']}")
    if not total:
        from ctxviewer.ingest.discover import default_roots

        where = ", ".join(_home(str(r.path)) for r in default_roots())
        print(f"no sessions found (looked in {where}; --add-folder DIR adds a folder)")


def _when(iso: str | None) -> str | None:
    if not iso:
        return None
    try:
        t = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return iso[:16]
    return t.astimezone().strftime("%Y-%m-%d %H:%M")


def _home(path: str) -> str:
    from ctxviewer.commands.sessions import _home as home

    return home(path)
