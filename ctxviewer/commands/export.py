"""``ctxviewer export PATHS… --parquet DIR``: sessions as a Parquet dataset for a team's
query engine (docs/parquet.md; the questions a team asks: docs/queries/).

Each session file is read as ``report`` reads it (a Claude Code session with its
sub-agent files); a file holding several sessions (a recording of several agents)
gives one session each. Files that cannot be read are listed on standard error
with the reason and counted; the command exits 0 when it exported anything, 2 when
nothing.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ctxviewer.commands.common import UsageError, add_estimator_argument, add_policy_argument
from ctxviewer.commands.team_extra import require
from ctxviewer.errors import LoadError
from ctxviewer.fmt import plural

if TYPE_CHECKING:  # imported when the command runs: `ctxviewer --help` lists it without them
    from ctxviewer.analysis.dataset.rows import SessionRows
    from ctxviewer.analysis.pricing import PriceTable
    from ctxviewer.commands.parquet_store import ParquetStore
    from ctxviewer.ingest.session_files import Expanded

HELP = "write sessions as a Parquet dataset (requests, categories, items, sessions) for SQL"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="session files or folders (a folder: every *.jsonl, *.json, *.ndjson "
        "under it, compressed or not; sub-agent files go with their session)",
    )
    p.add_argument(
        "--parquet",
        required=True,
        metavar="DIR",
        help="the dataset folder, created if needed; exporting a file again replaces "
        "its rows (docs/parquet.md)",
    )
    p.add_argument(
        "--prune",
        action="store_true",
        help="also remove the rows of session files that no longer exist (by "
        "default a dataset keeps them: agents delete old logs)",
    )
    add_estimator_argument(p)
    add_policy_argument(p)


def file_key(path: str) -> str:
    """The name a session file's rows go by in the dataset: a hash of its real path (links
    resolved: the same file reached another way replaces its rows too)."""
    import hashlib
    import os

    real = os.path.realpath(path)
    return hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def file_rows(path: str, args: argparse.Namespace, prices: PriceTable) -> list[SessionRows]:
    """The rows of every session ``path`` holds."""
    from ctxviewer.analysis.agents.sessions import split
    from ctxviewer.analysis.analysis import Analysis
    from ctxviewer.analysis.dataset.rows import session_rows
    from ctxviewer.ingest.loader import load

    key = file_key(path)
    return [
        session_rows(Analysis(part, args.estimator, args.policy), f"{key}-{n}", n, prices)
        for n, part in enumerate(split(load(path)))
    ]


def run(args: argparse.Namespace) -> int:
    from ctxviewer.analysis.pricing import load_prices
    from ctxviewer.commands.parquet_store import ParquetStore
    from ctxviewer.ingest.session_files import expand

    require("pyarrow", "export")
    try:
        prices = load_prices()
    except ValueError as e:
        raise UsageError(f"price table: {e}") from None
    found = expand(args.paths)
    with ParquetStore(args.parquet) as store:
        return _export(args, found, store, prices)


def _export(
    args: argparse.Namespace, found: Expanded, store: ParquetStore, prices: PriceTable
) -> int:
    problems = list(found.problems)
    counts = dict.fromkeys(store.schemas, 0)
    files = 0
    exported: set[str] = set()
    for path in found.files:
        try:
            rows = file_rows(path, args, prices)
        except LoadError as e:
            problems.append((path, str(e).replace(f"{path}: ", "").replace(f"{path} ", "")))
            continue
        except Exception as e:  # noqa: BLE001 - one bad file must not stop the others
            problems.append((path, f"internal error: {type(e).__name__}: {e}"[:300]))
            continue
        try:
            store.replace(file_key(path), rows)
        except OSError as e:
            raise UsageError(f"--parquet {args.parquet}: {e.strerror or e}") from None
        exported.add(file_key(path))
        files += 1
        for r in rows:
            for table in counts:
                counts[table] += r.count(table)
    pruned = store.prune(exported) if args.prune else []
    for path, why in problems:
        sys.stderr.write(f"ctxviewer: skipped {path}: {why}\n")
    notes = [plural(files, "file") + " read"]
    if found.joined:
        notes.append(f"{plural(len(found.joined), 'sub-agent file')} read with their session")
    if problems:
        notes.append(f"{plural(len(problems), 'path')} skipped")
    if found.ignored:
        notes.append(
            f"{plural(found.ignored, 'other file')} in folders not read "
            "(not named *.jsonl, *.json, *.ndjson)"
        )
    if pruned:
        notes.append(f"rows of {plural(len(pruned), 'session file')} no longer on disk removed")
    sys.stdout.write(
        f"exported {plural(counts['sessions'], 'session')} to {args.parquet}: "
        f"{counts['requests']:,} requests, {counts['categories']:,} category rows, "
        f"{counts['items']:,} item rows ({'; '.join(notes)})\n"
    )
    return 0 if files or pruned else 2
