"""Read one session for the library: its file, its sub-agent files, and what to keep.

``read_group(job)`` runs in a worker process (or in the caller's, for a few files)
and returns plain data: per file its stamp, the bytes it read and its reader state;
per session (a recording may hold several) its summary, prompt series and texts.

Incremental reads. A line log whose reader state was kept (``Job`` carries it,
pickled) is resumed where the last read stopped: ``ingest.follow.follower.Follower`` reads
only the bytes appended since, and re-reads the file whole when it was truncated
or replaced (it checks the first and the last bytes it read). Documents (Gemini
CLI's JSON chat) and compressed logs have no such state: they are read whole.
The session is then finished as ``load`` finishes it, so its numbers are
``report``'s.
"""

from __future__ import annotations

import os
import pickle
import time
import zlib
from dataclasses import dataclass, field
from typing import Any

from ctxviewer import __version__
from ctxviewer.analysis.agents.sessions import split
from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.pricing.table import current_prices
from ctxviewer.analysis.session_summary import summarize
from ctxviewer.errors import LoadError
from ctxviewer.ingest.collector import collector_paused
from ctxviewer.ingest.follow.follower import Follower
from ctxviewer.ingest.loader import load
from ctxviewer.ingest.registry import get_reader
from ctxviewer.library.content import prompt_series, request_texts
from ctxviewer.model import Session

# A kept state is read back only by the same ctxviewer: readers' classes change.
STATE_VERSION = f"{__version__}/1"
CLAUDE_CODE = "claude-code"


@dataclass(frozen=True)
class FileJob:
    """One file to read, with the reader state its last read kept."""

    path: str
    state: bytes | None = None  # the reader state the last read kept (``dump_state``)
    keep_state: bool = False  # keep the state of this read (the file may still grow)


@dataclass(frozen=True)
class Job:
    """A session file and its sub-agent files (Claude Code's ``<session>/subagents/``)."""

    files: tuple[FileJob, ...]  # the session file first
    full: bool = True  # False: the rows only (the first pass); no text, no reader state

    @property
    def path(self) -> str:
        return self.files[0].path


@dataclass
class FileResult:
    """What reading one file gave: its stat, the bytes read, its state or its error."""

    path: str
    size: int = 0  # the stat before reading (what the next scan compares)
    mtime_ns: int = 0
    inode: int = 0
    ctime_ns: int = 0
    bytes_read: int = 0  # bytes of the log parsed by this read
    resumed: bool = False  # read from the kept state: only what was appended
    state: bytes | None = None  # to keep for the next read (None: read whole next time)
    error: str | None = None  # why the file cannot be read (a bad file)
    vanished: bool = False  # deleted before or while it was read


@dataclass
class PartResult:
    """One session of the file (a recording of several agents holds several)."""

    summary: dict[str, Any]  # ``SessionSummary.as_dict()``
    series: list[int]
    texts: list[str]  # per request


@dataclass
class JobResult:
    """What reading a session file and its sub-agent files gave."""

    path: str
    files: list[FileResult] = field(default_factory=list)
    parts: list[PartResult] = field(default_factory=list)
    seconds: float = 0.0
    full: bool = True  # False: the rows only; the full read (text, details) is to come

    @property
    def error(self) -> str | None:
        return self.files[0].error if self.files else None

    @property
    def vanished(self) -> bool:
        return bool(self.files) and self.files[0].vanished

    @property
    def bytes_read(self) -> int:
        return sum(f.bytes_read for f in self.files)


def dump_state(follower: Follower) -> bytes:
    return zlib.compress(pickle.dumps((STATE_VERSION, follower), protocol=5), 1)


def load_state(blob: bytes | None) -> Follower | None:
    """The kept reader, or None when there is none or it is not readable any more.

    The blob comes from the user's own cache folder, written by this code."""
    if not blob:
        return None
    try:
        version, follower = pickle.loads(zlib.decompress(blob))
    except Exception:  # noqa: BLE001 - an old or damaged state: the file is read whole
        return None
    return follower if version == STATE_VERSION and isinstance(follower, Follower) else None


def read_group(job: Job) -> JobResult:
    """Read ``job``'s files and summarize its sessions (never raises for a file), the
    cyclic garbage collector paused (``ingest.collector``) for the summary too."""
    with collector_paused():
        return _read_group(job)


def _read_group(job: Job) -> JobResult:
    if not job.full:
        rows = _read_rows(job)
        if rows is not None:
            return rows
    return _read_whole(job)


def _read_rows(job: Job) -> JobResult | None:
    """The rows of ``job``'s sessions from the usage alone (``rows``), or None when the
    log's need its text (declined, or no row reader): read whole then."""
    from ctxviewer.ingest.claude import subagents as claude_subagents
    from ctxviewer.library.rows import Declined, lean_session

    t0 = time.perf_counter()
    out = JobResult(job.path, full=False)
    for fj in job.files:
        res = FileResult(fj.path)
        try:
            st = os.stat(fj.path)
        except OSError:
            return None  # gone, or unreadable: the whole read says which
        res.size, res.mtime_ns, res.inode, res.ctime_ns = (
            st.st_size,
            st.st_mtime_ns,
            st.st_ino,
            st.st_ctime_ns,
        )
        res.bytes_read = st.st_size
        out.files.append(res)
    try:
        main = lean_session(job.path)
    except (Declined, LoadError, OSError, EOFError, ValueError):
        return None
    if {str(f) for f in claude_subagents.sidecar_files(job.path)} != {
        fj.path for fj in job.files[1:]
    }:
        return None  # the sub-agent files changed since the walk
    for part in split(main):
        a = Analysis(part, estimates=False)
        out.parts.append(
            PartResult(
                summarize(a, prices=current_prices(), details=False).as_dict(),
                prompt_series(a.timeline),
                [],
            )
        )
    out.seconds = time.perf_counter() - t0
    return out


def _read_whole(job: Job) -> JobResult:
    t0 = time.perf_counter()
    out = JobResult(job.path, full=job.full)
    sessions: dict[str, Session] = {}
    for i, fj in enumerate(job.files):
        if not job.full:
            fj = FileJob(fj.path)  # the rows only: read whole, no state kept
        session, res = _read_file(fj, None if i == 0 else CLAUDE_CODE)
        out.files.append(res)
        if session is not None:
            sessions[fj.path] = session
        if i == 0 and session is None:  # a bad or vanished session file: nothing to list
            out.seconds = time.perf_counter() - t0
            return out
    main = sessions[job.path]
    main = get_reader(main.format).with_companions(
        main, lambda f: sessions.get(str(f)) or load(str(f), format=main.format, subagents=False)
    )
    for part in split(main):  # the rows only: the details come with the text
        a = Analysis(part)
        out.parts.append(
            PartResult(
                summarize(a, prices=current_prices(), details=job.full).as_dict(),
                prompt_series(a.timeline),
                request_texts(part.requests) if job.full else [],
            )
        )
    out.seconds = time.perf_counter() - t0
    return out


def _read_file(fj: FileJob, format: str | None) -> tuple[Session | None, FileResult]:
    res = FileResult(fj.path)
    try:
        st = os.stat(fj.path)
    except FileNotFoundError:
        res.vanished = True
        return None, res
    except OSError as e:
        res.error = f"cannot read {fj.path}: {e.strerror or e}"
        return None, res
    res.size, res.mtime_ns, res.inode, res.ctime_ns = (
        st.st_size,
        st.st_mtime_ns,
        st.st_ino,
        st.st_ctime_ns,
    )
    try:
        if fj.keep_state or fj.state:
            session = _follow(fj, format, res)
        else:
            session = load(fj.path, format=format, subagents=False)
            res.bytes_read = st.st_size
    except (LoadError, OSError, EOFError, ValueError) as e:
        if not os.path.exists(fj.path):
            res.vanished = True
        else:
            res.error = str(e) if isinstance(e, LoadError) else f"{type(e).__name__}: {e}"
        return None, res
    return session, res


def _follow(fj: FileJob, format: str | None, res: FileResult) -> Session:
    """Resume the kept reader (or start one), keep its state, finish the session."""
    follower = load_state(fj.state)
    resumed = follower is not None
    if follower is None:
        follower = Follower(fj.path, format=format)
    before, session = follower.offset, follower.session
    follower.poll()
    if follower.session is None:
        follower.finish()  # raises the LoadError that says why (empty, unknown format)
    if follower.rereads_whole:
        res.bytes_read = res.size
    else:
        whole = not resumed or follower.session is not session or follower.offset < before
        res.resumed = not whole
        res.bytes_read = follower.offset - (0 if whole else before)
        if fj.keep_state:
            res.state = dump_state(follower)
    done = follower.finish().session
    assert done is not None
    return done
