"""Helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import sys

import orjson


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def add_file_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="session log or API trace")
    parser.add_argument("--format", help="skip detection and use this reader (see `formats`)")


def print_json(value: object) -> None:
    sys.stdout.write(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + "\n")


def fmt_tokens(n: int | float | None) -> str:
    """1234 -> '1.2k', like /context prints."""
    if n is None:
        return "-"
    n = float(n)
    if abs(n) >= 1_000_000:
        return f"{n / 1_000_000:.1f}M".replace(".0M", "M")
    if abs(n) >= 1000:
        return f"{n / 1000:.1f}k"
    return f"{int(n)}"
