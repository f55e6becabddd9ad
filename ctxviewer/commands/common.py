"""Helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import os
import sys

import orjson

from ctxviewer.errors import UsageError as UsageError  # re-exported for the commands
from ctxviewer.fmt import fmt_tokens as fmt_tokens  # re-exported
from ctxviewer.fmt import plural
from ctxviewer.model import Session


def add_file_argument(
    parser: argparse.ArgumentParser, sessions: bool = True, optional: bool = False
) -> None:
    parser.add_argument(
        "file",
        nargs="?" if optional else None,
        help="session log or API trace (- for standard input)",
    )
    parser.add_argument("--format", help="skip detection and use this reader (see `formats`)")
    if sessions:
        parser.add_argument(
            "--session",
            type=int,
            metavar="N",
            help="a recording holding several agents or conversations: which "
            "one (0-based; `report FILE --sessions` lists them; default: "
            "the one that made the last main request)",
        )


REQUEST_HELP = "an index (0-based; negative counts from the end) or 'last' (the last main request)"


def add_request_argument(
    parser: argparse.ArgumentParser, what: str = "the request to show", default: str | None = "last"
) -> None:
    """``--request``, worded the same in every command."""
    shown = f"{what}: {REQUEST_HELP}" + ("; default: last" if default == "last" else "")
    parser.add_argument("--request", default=default, metavar="N|last", help=shown)


def add_estimator_argument(
    parser: argparse.ArgumentParser, what: str = "how tokens are counted where the API did not"
) -> None:
    """``--estimator``: the local estimators, each with what it counts (docs/estimators.md)."""
    from ctxviewer.analysis.tokens.estimators import DEFAULT, get_estimator, names

    rules = "; ".join(f"{n}: {get_estimator(n).label}" for n in names()).replace("%", "%%")
    parser.add_argument(
        "--estimator",
        default=DEFAULT,
        choices=names(),
        metavar="NAME",
        help=f"{what} (default {DEFAULT}). {rules}. See docs/estimators.md",
    )


def add_policy_argument(parser: argparse.ArgumentParser) -> None:
    """``--policy``: the compaction policies, each with what it means."""
    from ctxviewer.analysis.thresholds import POLICIES, POLICY_LABELS

    meanings = {
        **POLICY_LABELS,
        "agent": "the agent's own, from its profile",
        "custom": "your numbers, set in the GUI (the qwen-code ladder here)",
    }
    rules = "; ".join(f"{p}: {meanings[p]}" for p in POLICIES).replace("%", "%%")
    parser.add_argument(
        "--policy",
        default="agent",
        choices=POLICIES,
        metavar="NAME",
        help=f"the compaction thresholds (warn, auto, hard) to judge requests "
        f"by (default agent). {rules}",
    )


def add_window_argument(parser: argparse.ArgumentParser, default: int | None = None) -> None:
    parser.add_argument(
        "--window",
        type=int,
        default=default,
        metavar="TOKENS",
        help="the context window size in tokens (default: the agent's, from "
        "its profile or the log)",
    )


def port_number(text: str) -> int:
    """A ``--port`` value: 0-65535 (0: any free port)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port must be 0-65535 (0: any free port), not {value}")
    return value


def seconds(text: str) -> float:
    """A positive number of seconds (argparse type)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text}")
    return value


def add_client_timeout_argument(parser: argparse.ArgumentParser, default: float) -> None:
    parser.add_argument(
        "--client-timeout",
        type=seconds,
        default=default,
        metavar="SECONDS",
        help="seconds a client may take to send a request's head, or leave "
        f"its body silent, before it is closed (default {default:g})",
    )


def add_json_argument(parser: argparse._ActionsContainer, what: str = "print JSON") -> None:
    parser.add_argument("--json", action="store_true", help=f"{what} (keys: docs/json.md)")


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
    chosen: int | None = getattr(args, "session", None)
    if chosen is None:
        if len(parts) > 1:
            chosen = default_session(parts)
            sys.stderr.write(
                f"ctxviewer: {args.file} holds {len(parts)} sessions; showing "
                f"session {chosen} ({parts[chosen].title}); --sessions lists them, "
                "--session N picks one\n"
            )
        return parts[chosen or 0]
    if not 0 <= chosen < len(parts):
        raise UsageError(
            f"--session {chosen}: the file holds {plural(len(parts), 'session')} "
            f"(0..{len(parts) - 1})"
        )
    return parts[chosen]


def request_index(session: Session, which: int | str | None, option: str = "--request") -> int:
    """``Session.resolve_index`` for a command-line option: bad input is a ``UsageError``."""
    try:
        return session.resolve_index(which)
    except (IndexError, ValueError) as e:
        raise UsageError(f"{option}: {e}") from None


def print_json(value: object) -> None:
    try:
        text = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except TypeError:  # a file name that is no UTF-8: its bytes shown as \xe9
        from ctxviewer.jsonish import printable

        text = orjson.dumps(printable(value), option=orjson.OPT_INDENT_2)
    sys.stdout.write(text.decode() + "\n")


def terminal_width() -> int | None:
    """The terminal's width when the output goes to one; None when it is piped or
    redirected (then lines stay whole, one per item, for grep and friends)."""
    try:
        if not sys.stdout.isatty():
            return None
        return os.get_terminal_size(sys.stdout.fileno()).columns or None
    except (AttributeError, ValueError, OSError):
        return None


def fit_line(head: str, tail: str, width: int | None, indent: int = 4) -> str:
    """``head`` and ``tail`` on one line, or ``tail`` (a path…) on an indented line of its
    own when the one line is wider than ``width`` (the terminal's: it would wrap)."""
    line = f"{head}  {tail}" if tail else head
    if width is None or len(line) <= width:
        return line
    return f"{head}\n{' ' * indent}{tail}"
