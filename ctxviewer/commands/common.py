"""Helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import os
import sys

import orjson

from ctxviewer.errors import UsageError  # noqa: F401 - re-exported for the commands
from ctxviewer.fmt import fmt_tokens  # noqa: F401 - re-exported for the commands
from ctxviewer.model import Session


def add_file_argument(parser: argparse.ArgumentParser, sessions: bool = True,
                      optional: bool = False) -> None:
    parser.add_argument("file", nargs="?" if optional else None,
                        help="session log or API trace (- for standard input)")
    parser.add_argument("--format", help="skip detection and use this reader (see `formats`)")
    if sessions:
        parser.add_argument("--session", type=int, metavar="N",
                            help="a recording holding several agents or conversations: which "
                                 "one (0-based; `report FILE --sessions` lists them; default: "
                                 "the one that made the last main request)")


def load_file(path: str, format: str | None = None) -> Session:
    """``ingest.load``, with ``-`` for standard input (read whole, then parsed)."""
    from ctxviewer.ingest import load

    if path != "-":
        return load(path, format=format)
    data = sys.stdin.buffer.read()
    import tempfile  # only for standard input: kept off every command's start-up

    with tempfile.TemporaryDirectory(prefix="ctxviewer-stdin-") as folder:
        spool = os.path.join(folder, "stdin.jsonl")
        with open(spool, "wb") as f:
            f.write(data)
        session = load(spool, format=format)
    session.path = "-"
    return session


def load_session(args: argparse.Namespace) -> Session:
    """The file's session, or the one ``--session`` picks when it holds several."""
    from ctxviewer.analysis.agents.sessions import default_session, split

    parts = split(load_file(args.file, format=args.format))
    chosen = getattr(args, "session", None)
    if chosen is None:
        if len(parts) > 1:
            chosen = default_session(parts)
            sys.stderr.write(f"ctxviewer: {args.file} holds {len(parts)} sessions; showing "
                             f"session {chosen} ({parts[chosen].title}); --sessions lists them, "
                             "--session N picks one\n")
        return parts[chosen or 0]
    if not 0 <= chosen < len(parts):
        raise UsageError(f"--session {chosen}: the file holds {len(parts)} session"
                         f"{'s' if len(parts) != 1 else ''} (0..{len(parts) - 1})")
    return parts[chosen]


def request_index(session: Session, which: int | str | None, option: str = "--request") -> int:
    """``Session.resolve_index`` for a command-line option: bad input is a ``UsageError``."""
    try:
        return session.resolve_index(which)
    except (IndexError, ValueError) as e:
        raise UsageError(f"{option}: {e}") from None


def print_json(value: object) -> None:
    sys.stdout.write(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + "\n")


