"""Bring the index up to date with the files on disk.

1. ``walk.find_files`` lists the session files with one ``stat`` each.
2. A session file is read again when it, or one of its sub-agent files, is new,
   changed (size, mtime, inode or ctime) or gone; unchanged ones cost nothing more.
   A kept reader state resumes a file that grew, never one changed in place.
3. The reads run in worker processes (``workers``, the CPUs by default) when
   there is much to read, in this process otherwise; each result is written in
   its own part of a transaction committed every ``COMMIT_SECONDS``.
4. Files that are gone leave the index.

Rows first. When there is much to read (a first index: ``POOL_MIN_BYTES`` and
``POOL_MIN_JOBS``), a scan writes each session's row only (``Job.full`` False: what
the table shows) and marks its file ``pending``; ``index_texts``, the second pass,
then reads those files in full (their text for search, the summary's details, the
reader state), newest first, and can be stopped and resumed. A file whose kept state
makes its full read cheap (it grew) is read in full by the scan itself.

The reader state of a file written in the last ``keep_days`` is kept, so that
when it grows only its new bytes are read; an older file that grows (a resumed
session) is read whole once, and then kept too.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from ctxviewer.library import store
from ctxviewer.library.index_file import damage, write_failure
from ctxviewer.library.schema import from_db, to_db
from ctxviewer.library.walk import Found, find_files, groups

if TYPE_CHECKING:  # reading imports the analysis: only a scan with work to do needs it
    from ctxviewer.library.reading import Job, JobResult

STATE_DAYS = 7.0  # reader states kept for files written in the last days
COMMIT_SECONDS = 0.5
POOL_MIN_BYTES = 32 << 20  # less to read than this: no worker processes
POOL_MIN_JOBS = 8

Progress = Callable[["ScanStats"], None]


@dataclass
class ScanStats:
    """What one scan did (``library --json``: ``scan``)."""

    files: int = 0  # session and sub-agent files found
    to_read: int = 0  # session files read (new or changed, with their sub-agent files)
    read: int = 0  # of those, done
    resumed: int = 0  # files read from their kept state: only their new bytes
    bytes_to_read: int = 0  # the size of the files to read (at most: resumed ones read less)
    bytes_read: int = 0  # bytes of logs actually parsed
    removed: int = 0  # files gone from disk, taken out of the index
    bad: int = 0  # files that cannot be read (listed with their reason)
    workers: int = 0  # processes that read (0: read in this process)
    seconds: float = 0.0
    cancelled: bool = False
    failed: str | None = None  # why the index could not be written (a full disk…)
    missing_folders: list[str] = field(default_factory=list)  # added, not there any more
    waiting: bool = False  # for another scan (another process) to end
    notes: list[str] = field(default_factory=list, repr=False)  # ``Library.notes``
    read_paths: list[str] = field(default_factory=list, repr=False)

    def as_dict(self) -> dict[str, object]:
        return {
            "files": self.files,
            "read": self.read,
            "resumed": self.resumed,
            "bytes_read": self.bytes_read,
            "removed": self.removed,
            "bad": self.bad,
            "workers": self.workers,
            "seconds": round(self.seconds, 3),
            "cancelled": self.cancelled,
            "failed": self.failed,
            "missing_folders": self.missing_folders,
        }


def state_days() -> float:
    try:
        return float(os.environ.get("CTXVIEWER_LIBRARY_STATE_DAYS", STATE_DAYS))
    except ValueError:
        return STATE_DAYS


def scan(
    db: sqlite3.Connection,
    folders: Sequence[str],
    *,
    workers: int | None = None,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
    keep_days: float | None = None,
    now: float | None = None,
    pool: bool | None = None,
    two_pass: bool | None = None,
) -> ScanStats:
    """Bring the index in ``db`` up to date. ``pool``: read in worker processes (True),
    here (False), or decide by the amount to read (None). ``two_pass``: write the rows
    first and leave the files' full reads (their text for search) to ``index_texts``
    (True), read each file in full now (False), or decide by the amount to read (None:
    two passes when it is large). An index that cannot be written (a full disk) stops
    the scan: what was committed stays, ``failed`` says why."""
    return _writing(
        db,
        progress,
        lambda stats: _scan(
            db, folders, stats, workers, progress, cancelled, keep_days, now, pool, two_pass
        ),
    )


def index_texts(
    db: sqlite3.Connection,
    folders: Sequence[str],
    *,
    workers: int | None = None,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
    keep_days: float | None = None,
    now: float | None = None,
    pool: bool | None = None,
) -> ScanStats:
    """The second pass: read in full the files whose rows only a large scan wrote
    (``files.pending``), newest first: their text for search, their summary's details,
    their reader state. ``to_read``/``read`` count them; stopped (``cancelled``, killed),
    the rest is done by the next call."""
    return _writing(
        db,
        progress,
        lambda stats: _index_texts(
            db, folders, stats, workers, progress, cancelled, keep_days, now, pool
        ),
    )


def _writing(
    db: sqlite3.Connection, progress: Progress | None, work: Callable[[ScanStats], None]
) -> ScanStats:
    t0 = time.perf_counter()
    stats = ScanStats()
    try:
        work(stats)
    except (sqlite3.Error, OSError) as e:
        why = None if damage(e) else write_failure(e)
        if why is None:
            raise
        if db.in_transaction:
            db.execute("ROLLBACK")
        stats.failed = f"the index could not be written ({why})"
    stats.seconds = time.perf_counter() - t0
    if progress is not None:
        progress(stats)
    return stats


def _scan(
    db: sqlite3.Connection,
    folders: Sequence[str],
    stats: ScanStats,
    workers: int | None,
    progress: Progress | None,
    cancelled: Callable[[], bool] | None,
    keep_days: float | None,
    now: float | None,
    pool: bool | None,
    two_pass: bool | None,
) -> None:
    now = time.time() if now is None else now
    keep = (state_days() if keep_days is None else keep_days) * 86_400
    stats.missing_folders = [f for f in folders if not os.path.isdir(f)]
    found = find_files(folders)
    stats.files = len(found)
    known = {
        from_db(p): _Known(size, mtime, inode, ctime, None if parent is None else from_db(parent))
        for p, size, mtime, inode, ctime, parent in db.execute(
            "SELECT path, size, mtime_ns, inode, ctime_ns, parent FROM files"
        )
    }
    by_group = groups(found.values())
    subs_known: dict[str, list[str]] = {}
    for p, k in known.items():
        if k.parent is not None:
            subs_known.setdefault(k.parent, []).append(p)
    todo: list[list[Found]] = []
    for path, files in by_group.items():
        if any(_changed(f, known.get(f.path)) for f in files) or any(
            s not in found or found[s].parent != path for s in subs_known.get(path, ())
        ):
            todo.append(files)
    gone = [p for p in known if p not in found]
    _note_ctimes(db, found, known)
    todo.sort(key=lambda g: -max(f.mtime_ns for f in g))  # newest first: shown first
    stats.to_read = len(todo)
    stats.bytes_to_read = sum(f.size for g in todo for f in g)
    with _transaction(db):
        for p in gone:
            store.forget_file(db, p)
            stats.removed += 1
    if progress is not None:
        progress(stats)
    rows_first = _large(stats, todo) if two_pass is None else two_pass
    _run(
        db,
        todo,
        lambda g: _job(db, g, known, now, keep, rows_first),
        stats,
        workers,
        progress,
        cancelled,
        pool,
    )
    stats.bad = db.execute("SELECT count(*) FROM files WHERE error IS NOT NULL").fetchone()[0]


def _large(stats: ScanStats, todo: Sequence[Group]) -> bool:
    """Much to read: worker processes read it, and a scan writes the rows first."""
    return stats.bytes_to_read >= POOL_MIN_BYTES and len(todo) >= POOL_MIN_JOBS


def _index_texts(
    db: sqlite3.Connection,
    folders: Sequence[str],
    stats: ScanStats,
    workers: int | None,
    progress: Progress | None,
    cancelled: Callable[[], bool] | None,
    keep_days: float | None,
    now: float | None,
    pool: bool | None,
) -> None:
    now = time.time() if now is None else now
    keep = (state_days() if keep_days is None else keep_days) * 86_400
    pending = {from_db(p) for (p,) in db.execute("SELECT path FROM files WHERE pending = 1")}
    if not pending:
        return
    found = find_files(folders)
    stats.files = len(found)
    todo = [g for p, g in groups(found.values()).items() if p in pending]
    todo.sort(key=lambda g: -max(f.mtime_ns for f in g))  # newest first: searched first
    stats.to_read = len(todo)
    stats.bytes_to_read = sum(f.size for g in todo for f in g)
    with _transaction(db):
        for p in pending - found.keys():  # gone since its rows were written
            store.forget_file(db, p)
            stats.removed += 1
    if progress is not None:
        progress(stats)
    _run(
        db,
        todo,
        lambda g: _job(db, g, {}, now, keep, False),
        stats,
        workers,
        progress,
        cancelled,
        pool,
    )


class _Known(NamedTuple):
    """A file's stat at its last read (``ctime_ns`` None: an index of schema 3 did not
    keep it; noted by the next scan)."""

    size: int
    mtime_ns: int
    inode: int
    ctime_ns: int | None
    parent: str | None


def _changed(f: Found, was: _Known | None) -> bool:
    return (
        was is None
        or (was.size, was.mtime_ns, was.inode, was.parent)
        != (f.size, f.mtime_ns, f.inode, f.parent)
        or (was.ctime_ns is not None and was.ctime_ns != f.ctime_ns)
    )


def _note_ctimes(db: sqlite3.Connection, found: dict[str, Found], known: dict[str, _Known]) -> None:
    """Keep the ctime of the files an earlier schema read without it (unchanged: no read)."""
    rows = [
        (found[p].ctime_ns, to_db(p))
        for p, k in known.items()
        if k.ctime_ns is None and p in found and not _changed(found[p], k)
    ]
    if rows:
        with _transaction(db):
            db.executemany("UPDATE files SET ctime_ns = ? WHERE path = ?", rows)


def _job(
    db: sqlite3.Connection,
    group: list[Found],
    known: dict[str, _Known],
    now: float,
    keep: float,
    rows_first: bool,
) -> Job:
    """The reads of ``group``, each with its kept reader state when it grew or did not
    change: a file changed in place (its size kept, or smaller) is read whole.
    ``rows_first``: the rows only, unless a kept state makes the full read cheap."""
    from ctxviewer.library.reading import FileJob, Job

    files = []
    for f in group:
        was = known.get(f.path)
        row = db.execute("SELECT blob FROM states WHERE path = ?", (to_db(f.path),)).fetchone()
        state = (
            row[0]
            if row is not None and was is not None and (f.size > was.size or not _changed(f, was))
            else None
        )
        files.append(FileJob(f.path, state, keep_state=now - f.mtime_ns / 1e9 <= keep))
    return Job(tuple(files), full=not rows_first or any(f.state for f in files))


class _transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, *_: object) -> None:
        if kind is None:
            self.db.execute("COMMIT")
        elif self.db.in_transaction:  # SQLite may have rolled back itself (a full disk)
            self.db.execute("ROLLBACK")


Group = list[Found]  # a session file and its sub-agent files
MakeJob = Callable[[Group], "Job"]  # with the kept states, fetched when the job starts


def _run(
    db: sqlite3.Connection,
    groups: list[Group],
    make: MakeJob,
    stats: ScanStats,
    workers: int | None,
    progress: Progress | None,
    cancelled: Callable[[], bool] | None,
    pool: bool | None,
) -> None:
    n = workers if workers is not None else min(os.cpu_count() or 1, 8)
    big = _large(stats, groups) if pool is None else pool
    writer = _Writer(db, stats, progress)
    try:
        if n > 1 and big:
            stats.workers = n
            left = _in_pool(groups, make, n, writer, cancelled)
        else:
            left = groups
        for group in left:
            if cancelled is not None and cancelled():
                stats.cancelled = True
                break
            writer.add(safe_read(make(group)), group)
    finally:
        writer.flush()


def _in_pool(
    groups: list[Group],
    make: MakeJob,
    n: int,
    writer: _Writer,
    cancelled: Callable[[], bool] | None,
) -> list[Group]:
    """Read ``groups`` in ``n`` processes; returns those left to read here (a broken
    pool)."""
    ctx = _start_method()
    pending: dict[cf.Future[JobResult], Group] = {}
    queue = list(reversed(groups))
    pool = cf.ProcessPoolExecutor(n, mp_context=ctx)
    stopped = False
    try:
        while queue or pending:
            if cancelled is not None and cancelled():
                writer.stats.cancelled = stopped = True
                return []
            while queue and len(pending) < 3 * n:
                group = queue.pop()
                pending[pool.submit(safe_read, make(group))] = group
            done, _ = cf.wait(pending, timeout=0.2, return_when=cf.FIRST_COMPLETED)
            for fut in done:
                writer.add(fut.result(), pending.pop(fut))
    except BrokenProcessPool:  # a worker died (out of memory?): the rest is read here
        return [*pending.values(), *reversed(queue)]
    finally:  # cancelled: the reads under way finish in their processes, unwaited
        pool.shutdown(wait=not stopped, cancel_futures=True)
    return []


def _start_method() -> multiprocessing.context.BaseContext:
    """How the worker processes start. Forked where that is safe, on Linux from a process
    of one thread (the command): they then start with the readers imported once, here
    (spawned, each imports them: 0.3-0.4 s of CPU apiece). Spawned elsewhere: a fork
    beside other threads (the window's) may copy a lock one of them holds, and macOS
    frameworks do not survive a fork."""
    if sys.platform.startswith("linux") and threading.active_count() == 1:
        import ctxviewer.library.reading  # noqa: F401 - for the forked workers

        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def safe_read(job: Job) -> JobResult:
    """``read_group``; a bug in an analysis marks the file bad instead of ending the scan."""
    from ctxviewer.library.reading import FileResult, JobResult, read_group

    try:
        return read_group(job)
    except Exception as e:  # noqa: BLE001 - one session must not stop the library
        try:
            st = os.stat(job.path)
        except OSError:
            return JobResult(job.path, [FileResult(job.path, vanished=True)])
        res = FileResult(
            job.path,
            st.st_size,
            st.st_mtime_ns,
            st.st_ino,
            st.st_ctime_ns,
            error=f"internal error: {type(e).__name__}: {e}"[:300],
        )
        return JobResult(job.path, [res])


class _Writer:
    """Writes results in transactions of ``COMMIT_SECONDS`` and reports progress."""

    def __init__(self, db: sqlite3.Connection, stats: ScanStats, progress: Progress | None) -> None:
        self.db, self.stats, self.progress = db, stats, progress
        self.open = False
        self.since = time.perf_counter()

    def add(self, result: JobResult, group: list[Found]) -> None:
        if not self.open:
            self.db.execute("BEGIN IMMEDIATE")
            self.open, self.since = True, time.perf_counter()
        try:
            store.apply(self.db, result, group)
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            self.open = False
            raise
        s = self.stats
        s.read += 1
        s.resumed += sum(f.resumed for f in result.files)
        s.bytes_read += result.bytes_read
        s.read_paths.append(result.path)
        if time.perf_counter() - self.since >= COMMIT_SECONDS:
            self.flush()
            if self.progress is not None:
                self.progress(s)

    def flush(self) -> None:
        if self.open:
            self.open = False
            self.db.execute("COMMIT")
