"""Helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import sys

import orjson

from ctxviewer.fmt import fmt_tokens  # noqa: F401 - re-exported for the commands
from ctxviewer.model import Session


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def add_file_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="session log or API trace")
    parser.add_argument("--format", help="skip detection and use this reader (see `formats`)")


def request_index(session: Session, which: int | str | None, option: str = "--request") -> int:
    """``Session.resolve_index`` for a command-line option: bad input is a ``UsageError``."""
    try:
        return session.resolve_index(which)
    except (IndexError, ValueError) as e:
        raise UsageError(f"{option}: {e}") from None


def print_json(value: object) -> None:
    sys.stdout.write(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + "\n")


