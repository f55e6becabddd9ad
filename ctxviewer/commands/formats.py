"""``ctxviewer formats``: the readers ctxviewer has, in detection order."""

from __future__ import annotations

import argparse

from ctxviewer.commands.common import add_json_argument, print_json
from ctxviewer.ingest import READERS

HELP = "list the formats ctxviewer reads (detected by content)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_json_argument(p)


def run(args: argparse.Namespace) -> int:
    if args.json:
        print_json(
            [{"name": r.name, "label": r.label, "description": r.description} for r in READERS]
        )
        return 0
    for r in READERS:
        print(f"{r.name:<14} {r.label:<28} {r.description}")
    return 0
