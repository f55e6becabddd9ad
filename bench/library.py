"""The session library on a machine's worth of sessions: first index, rescans, search.

    python bench/library.py [TREE] [--sessions 2000] [--gb 2.0] [--workers N]

TREE (default /tmp/ctxviewer-library-tree) is made by ``tools/make_library_tree.py``
when it is not there: a home folder with every agent's layout and a folder of proxy
recordings. The index goes to a fresh folder under /tmp. Printed, with the baseline
measured in the same run:

- the baseline: a raw ``orjson`` parse of every file (each line of a log, the whole
  of a JSON document), in one process and in ``--workers`` processes, the files in
  the page cache (read once before);
- the first index (``ctxviewer library --json`` as a user runs it, a fresh process):
  the time to every row (the command lists the sessions after the first pass; target
  at most 2x the baseline) and its CPU time, then the time until search is complete
  (the second pass, the text for search, which the command started in the background:
  waited for here), with the default reader states (files of the last 7 days), and
  the machine's load meanwhile (the 2 CPUs may be shared);
- what keeping a file's reader state costs: a sample of sessions read with and
  without it (``--all-states`` also runs a whole first index keeping every state);
- a rescan with nothing changed (target under 0.3 s), in-process and as a command;
- a rescan after one file grew: the bytes read (target: only the appended bytes)
  and the time; and an old file (no kept state) that grew, read whole;
- full-text searches (target under 100 ms each), against the way they were
  answered before, in the same run (``--index DIR``: only these, on the library
  folder of an earlier run).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from baseline import _open  # noqa: E402

DEFAULT_TREE = Path("/tmp/ctxviewer-library-tree")
RESCANS = 5  # rescans with nothing changed, timed: the first after the index is colder


def raw_parse(path: str) -> int:
    """orjson of every line (a JSON document: of the whole); returns the bytes."""
    with _open(path) as f:
        data = f.read()
    first = data.split(b"\n", 1)[0]
    try:
        orjson.loads(first)
        whole = False
    except orjson.JSONDecodeError:
        whole = True
    if whole:
        try:
            orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
        return len(data)
    for line in data.split(b"\n"):
        if line.strip():
            try:
                orjson.loads(line)
            except orjson.JSONDecodeError:
                pass
    return len(data)


def files_of(tree: Path) -> list[str]:
    out = []
    for folder, _, names in os.walk(tree):
        out += [os.path.join(folder, n) for n in names]
    return out


def baseline(files: list[str], workers: int) -> tuple[float, float, float]:
    """The raw parse: wall time in 1 process, in ``workers``, and CPU time in 1."""
    for f in files:  # the page cache warm, as for the index after it: parses are timed
        with open(f, "rb") as fh:
            while fh.read(1 << 24):
                pass
    t, c = time.perf_counter(), time.process_time()
    for f in files:
        raw_parse(f)
    one, cpu = time.perf_counter() - t, time.process_time() - c
    t = time.perf_counter()
    with cf.ProcessPoolExecutor(workers) as pool:
        list(pool.map(raw_parse, files, chunksize=16))
    many = time.perf_counter() - t
    return one, many, cpu


CPU = [0.0]  # CPU seconds of the last command and its worker processes


def command(tree: Path, lib: Path, *args: str, **env: str) -> tuple[float, dict]:
    import resource

    environ = {**os.environ, "HOME": str(tree / "home"), "CTXVIEWER_LIBRARY_DIR": str(lib), **env}
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "ctxviewer", "library", "--json", "--limit", "1", *args],
        capture_output=True,
        env=environ,
        timeout=3600,
        cwd=ROOT,
    )
    took = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU[0] = after.ru_utime + after.ru_stime - ru.ru_utime - ru.ru_stime
    if out.returncode:
        raise SystemExit(out.stderr.decode())
    return took, json.loads(out.stdout)


def wait_indexed(tree: Path, lib: Path, timeout: float = 7200) -> float:
    """When the second pass the first index started in the background has ended (every
    text indexed, nothing running): the perf_counter time."""
    import sqlite3

    deadline = time.perf_counter() + timeout
    db = lib / "library.sqlite3"
    while time.perf_counter() < deadline:
        try:
            con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
            try:
                left = con.execute("SELECT count(*) FROM files WHERE pending = 1").fetchone()[0]
            finally:
                con.close()
        except sqlite3.OperationalError:
            left = -1
        if left == 0 and _texts_lock_free(lib):
            return time.perf_counter()
        time.sleep(0.1)
    raise SystemExit("the second pass did not end")


def _texts_lock_free(lib: Path) -> bool:
    sys.path.insert(0, str(ROOT))
    from ctxviewer.library.locks import Lock

    lock = Lock(lib / "library.sqlite3.texts-lock")
    free = lock.try_exclusive()
    lock.release()
    return free


def grow(path: Path) -> int:
    """Append one more turn (a prompt and its reply) to a Claude Code transcript."""
    last = orjson.loads(path.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1])
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    user = {
        **last,
        "type": "user",
        "uuid": "bench-u",
        "parentUuid": last.get("uuid"),
        "timestamp": stamp,
        "message": {"role": "user", "content": "one more thing: rename the flux capacitor"},
    }
    user.pop("requestId", None)
    usage = {
        "input_tokens": 4,
        "cache_creation_input_tokens": 900,
        "cache_read_input_tokens": 30_000,
        "output_tokens": 50,
    }
    reply = {
        **user,
        "type": "assistant",
        "uuid": "bench-a",
        "parentUuid": "bench-u",
        "requestId": "req_bench",
        "message": {
            "id": "msg_bench",
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-4-6",
            "usage": usage,
            "stop_reason": "end_turn",
            "content": [{"type": "text", "text": "Renamed it."}],
        },
    }
    data = orjson.dumps(user) + b"\n" + orjson.dumps(reply) + b"\n"
    with open(path, "ab") as f:
        f.write(data)
    return len(data)


def claude_files(tree: Path) -> list[Path]:
    return sorted(
        (tree / "home" / ".claude" / "projects").glob("*/*.jsonl"), key=lambda p: p.stat().st_mtime
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("tree", nargs="?", type=Path, default=DEFAULT_TREE)
    p.add_argument("--sessions", type=int, default=2000)
    p.add_argument("--gb", type=float, default=2.0)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument(
        "--all-states",
        action="store_true",
        help="also run a whole first index that keeps every file's reader state",
    )
    p.add_argument(
        "--sample",
        type=int,
        default=150,
        help="sessions read with and without their state (default 150)",
    )
    p.add_argument(
        "--index",
        type=Path,
        metavar="DIR",
        help="only the searches, on the library folder DIR of an earlier run (no first index)",
    )
    args = p.parse_args()
    if args.index is not None:
        return search_only(args.index)
    tree: Path = args.tree
    if not (tree / "home").is_dir():
        print(f"generating {tree} ...", flush=True)
        subprocess.run(
            [
                sys.executable,
                str(ROOT / "tools" / "make_library_tree.py"),
                str(tree),
                "--sessions",
                str(args.sessions),
                "--gb",
                str(args.gb),
            ],
            check=True,
            timeout=7200,
        )
    files = files_of(tree)
    size = sum(os.path.getsize(f) for f in files)
    print(
        f"tree: {tree}: {len(files):,} files, {size / 1e9:.2f} GB; {os.cpu_count()} CPUs, "
        f"{args.workers} workers; load average {_load()}"
    )
    one, many, raw_cpu = baseline(files, args.workers)
    print(
        f"baseline raw orjson parse: {one:.2f} s in 1 process ({size / one / 1e6:.0f} MB/s; "
        f"{raw_cpu:.2f} s of CPU), {many:.2f} s in {args.workers}; load average {_load()}"
    )
    work = Path(tempfile.mkdtemp(prefix="ctxviewer-library-bench-"))
    lib = work / "library"
    folder = str(tree / "recordings")
    t0 = time.perf_counter()
    took, out = command(tree, lib, "--add-folder", folder, "--workers", str(args.workers))
    rows_cpu = CPU[0]
    scan = out["scan"]
    db = lib / "library.sqlite3"
    print(
        f"first index, time to every row: {took:.2f} s as a command (scan "
        f"{scan['seconds']:.2f} s, {scan['workers']} workers): {took / one:.2f}x the "
        f"1-process baseline (target 2x), {took / many:.2f}x the {args.workers}-process "
        f"one; {out['counts']['sessions']:,} sessions, {out['counts']['requests']:,} "
        f"requests, {len(out['bad_files'])} bad files; text to index: "
        f"{out['indexing']['pending']:,} session files"
    )
    print(
        f"  CPU time of the command and its workers: {rows_cpu:.1f} s, "
        f"{rows_cpu / raw_cpu:.2f}x the baseline's CPU time (what the machine's other load "
        f"changes least); load average {_load()}"
    )
    searchable = wait_indexed(tree, lib)
    print(
        f"first index, time to complete search (the second pass, in the background): "
        f"{searchable - t0:.1f} s from the command's start, {(searchable - t0) / one:.1f}x "
        f"the baseline (the second pass alone {searchable - t0 - took:.1f} s); index "
        f"{_db_size(lib) / 1e6:.0f} MB, reader states {_states(db) / 1e6:.0f} MB; "
        f"load average {_load()}"
    )
    writer_floor(db, one)
    state_cost(tree, args.sample)
    if args.all_states:
        lib2 = work / "library-all-states"
        t2 = time.perf_counter()
        took2, out2 = command(
            tree,
            lib2,
            "--add-folder",
            folder,
            "--workers",
            str(args.workers),
            CTXVIEWER_LIBRARY_STATE_DAYS="100000",
        )
        done2 = wait_indexed(tree, lib2) - t2
        print(
            f"first index keeping every file's reader state: rows {took2:.2f} s, search "
            f"complete {done2:.1f} s ({done2 / one:.1f}x); reader states "
            f"{_states(lib2 / 'library.sqlite3') / 1e6:.0f} MB"
        )
    sys.path.insert(0, str(ROOT))
    os.environ.update(HOME=str(tree / "home"), CTXVIEWER_LIBRARY_DIR=str(lib))
    from ctxviewer.library import Library

    with Library() as library:
        idles = []
        for _ in range(RESCANS):
            t = time.perf_counter()
            stats = library.scan()
            idles.append(time.perf_counter() - t)
        cmds = [command(tree, lib)[0] for _ in range(RESCANS)]
        print(
            f"rescan, nothing changed (median of {RESCANS} [the first]; target 0.3 s): "
            f"{statistics.median(idles) * 1000:.0f} ms [{idles[0] * 1000:.0f}] in-process "
            f"({stats.files:,} files looked at, {stats.read} read), "
            f"{statistics.median(cmds):.2f} s [{cmds[0]:.2f}] as a command with its start"
        )
        recent, old = claude_files(tree)[-1], claude_files(tree)[0]
        for path, what in ((recent, recent.name), (old, "an old file")):
            added = grow(path)
            t = time.perf_counter()
            stats = library.scan()
            grown = time.perf_counter() - t
            print(
                f"rescan after {what} ({path.stat().st_size / 1e6:.1f} MB) grew by {added} "
                f"bytes: read {stats.bytes_read:,} bytes ({stats.resumed} file resumed; "
                f"target for a file of the last days: only the new bytes; an older one, "
                f"with no kept state, is read whole), {grown * 1000:.0f} ms"
            )
        searches(library)
    return 0


SEARCHES = (
    "function",
    "TICKET-1234",
    "flux capacitor",
    '"cache request" budget',
    "function return",
    '"cache request"',
    "zzqqxx",
)


def searches(library: Any, runs: int = 7) -> None:
    """Each search as the window and the command run it, against the way every search
    was answered before (every matching request counted per session, in the same run):
    medians of ``runs``, wall time and (in brackets) the process's CPU time, which the
    machine's other load does not change."""

    def timed(fn: Any) -> tuple[float, float, Any]:
        walls, cpus, out = [], [], None
        for _ in range(runs):
            t, c = time.perf_counter(), time.process_time()
            out = fn()
            walls.append(time.perf_counter() - t)
            cpus.append(time.process_time() - c)
        return statistics.median(walls) * 1000, statistics.median(cpus) * 1000, out

    print(
        f"searches (target under 100 ms; medians of {runs}; wall ms [CPU ms]); load average "
        f"{_load()}"
    )
    for text in SEARCHES:
        before = timed(lambda text=text: library.search_counts(text))
        found = timed(lambda text=text: library.matching(text))
        listed = timed(lambda text=text: library.sessions(search=text, limit=50))
        ranked = timed(lambda text=text: library.sessions(search=text, limit=50, sort="matches"))
        everything = timed(lambda text=text: library.sessions(search=text))
        counts = before[2]
        assert found[2] == set(counts), text
        print(
            f"  {text!r}: {len(counts):,} sessions, {sum(counts.values()):,} requests; "
            f"which sessions {found[0]:.1f} [{found[1]:.1f}]; the command's 50, newest "
            f"first, counted, with snippets {listed[0]:.1f} [{listed[1]:.1f}]; "
            f"--sort matches {ranked[0]:.1f} [{ranked[1]:.1f}]; every count (the window's "
            f"second step, and every search before) {before[0]:.1f} [{before[1]:.1f}]; "
            f"every match with its snippets (library --json) {everything[0]:.1f} "
            f"[{everything[1]:.1f}]"
        )


def search_only(index: Path) -> int:
    """``--index``: the searches alone, on an index built before (brought to this
    version's schema first, timed)."""
    sys.path.insert(0, str(ROOT))
    from ctxviewer.library import Library

    t = time.perf_counter()
    with Library(index / "library.sqlite3") as library:
        print(
            f"index {index}: opened in {time.perf_counter() - t:.2f} s (a schema 2 index "
            f"gets its chunk table then); {library.counts()['sessions']:,} sessions, "
            f"{library.counts()['requests']:,} requests; {_db_size(index) / 1e6:.0f} MB"
        )
        searches(library)
    return 0


def state_cost(tree: Path, n: int) -> None:
    """Read a sample of sessions with and without keeping their reader state."""
    import random

    sys.path.insert(0, str(ROOT))
    from ctxviewer.library.reading import FileJob, Job, read_group

    files = sorted(p for p in (tree / "home").rglob("*.jsonl") if "subagents" not in p.parts)
    sample = random.Random(1).sample(files, min(n, len(files)))
    times = {False: 0.0, True: 0.0}
    kept = 0
    for keep in (False, True, False, True):  # twice each, in turn: the load evens out
        for f in sample:
            t = time.perf_counter()
            out = read_group(Job((FileJob(str(f), keep_state=keep),)))
            times[keep] += time.perf_counter() - t
            if keep:
                kept += len(out.files[0].state or b"")
    size = sum(f.stat().st_size for f in sample)
    where_time_goes(sample)
    extra = times[True] / times[False] - 1
    print(
        f"keeping the reader state ({len(sample)} line logs, {size / 1e6:.0f} MB): "
        f"{extra * 100:+.0f}% read time, {kept / 2 / size * 100:.0f}% of the logs' size "
        f"stored (compressed pickles)"
    )


def where_time_goes(sample: list[Path]) -> None:
    """Of one session's read: the raw parse, the reader (``load``), the analysis
    ``report`` runs (``summarize``), and the text kept for search; as ``read_group``
    reads them, with the cyclic garbage collector paused."""
    import gc

    from ctxviewer.analysis.analysis import Analysis
    from ctxviewer.analysis.session_summary import summarize
    from ctxviewer.ingest.loader import load
    from ctxviewer.library.content import prompt_series, request_texts

    t = dict.fromkeys(("raw", "load", "summarize", "texts"), 0.0)
    for f in sample:
        gc.disable()
        t0 = time.perf_counter()
        raw_parse(str(f))
        t1 = time.perf_counter()
        session = load(str(f), subagents=False)
        t2 = time.perf_counter()
        a = Analysis(session)
        summarize(a)
        prompt_series(a.timeline)
        t3 = time.perf_counter()
        request_texts(session.requests)
        t4 = time.perf_counter()
        gc.enable()
        for k, d in zip(t, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
            t[k] += d
    print(
        f"where a read's time goes, per raw parse (the same {len(sample)} logs): reader "
        f"(ingest.load) {t['load'] / t['raw']:.1f}x, analysis and summary "
        f"{t['summarize'] / t['raw']:.1f}x, text for search {t['texts'] / t['raw']:.1f}x"
    )


def writer_floor(db: Path, one: float) -> None:
    """What writing the index costs at least, whoever reads the logs: the text the first
    index kept, indexed again into fresh FTS5 tables like the library's (one row per
    request, one per 64) and compressed as the index stores it, in this process. SQLite
    has one writer per database, so this runs in one process whatever the workers."""
    import sqlite3
    import zlib

    sys.path.insert(0, str(ROOT))
    from ctxviewer.library.schema import BREAK, CHUNK_BITS

    con = sqlite3.connect(str(db))
    try:
        rows = [
            (r, zlib.decompress(z).decode())
            for r, z in con.execute("SELECT id, z FROM bodies ORDER BY id")
        ]
    finally:
        con.close()
    chunks: dict[int, list[str]] = {}
    for r, text in rows:
        chunks.setdefault(r >> CHUNK_BITS, []).append(text)
    docs = [(c, BREAK.join(t)) for c, t in chunks.items()]
    mem = sqlite3.connect(":memory:")
    for table in ("texts", "chunk_texts"):
        mem.execute(
            f"CREATE VIRTUAL TABLE {table} USING fts5(body, content='', "
            "tokenize='unicode61 remove_diacritics 2')"
        )
    c = time.process_time()
    mem.execute("BEGIN")
    mem.executemany("INSERT INTO texts (rowid, body) VALUES (?, ?)", rows)
    fts_rows = time.process_time() - c
    mem.executemany("INSERT INTO chunk_texts (rowid, body) VALUES (?, ?)", docs)
    mem.execute("COMMIT")
    fts = time.process_time() - c
    c = time.process_time()
    for _, text in rows:
        zlib.compress(text.encode(), 1)
    packed = time.process_time() - c
    chars = sum(len(t) for _, t in rows)
    floor = fts + packed
    print(
        f"  the second pass's writer floor: the {chars / 1e6:,.0f} M characters of text "
        f"kept, indexed in FTS5 again {fts:.1f} s of CPU (the per-request table "
        f"{fts_rows:.1f} s) and compressed {packed:.1f} s: {floor:.1f} s, "
        f"{floor / one:.1f}x the baseline, in one process (the first pass writes none of it)"
    )


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def _db_size(lib: Path) -> int:
    return sum(f.stat().st_size for f in lib.iterdir())


def _states(db: Path) -> int:
    import sqlite3

    con = sqlite3.connect(str(db))
    try:
        return int(con.execute("SELECT coalesce(sum(length(blob)), 0) FROM states").fetchone()[0])
    finally:
        con.close()


if __name__ == "__main__":
    sys.exit(main())
