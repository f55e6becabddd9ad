"""Append recording lines to a JSONL file, off the event loop, one whole line at a time.

Exchanges are turned into lines (bodies parsed, streams reassembled) and
written by one writer thread, in the order they ended, so a 30 MB answer
being recorded never holds up the streams being forwarded. Each line goes to
the file in one unbuffered ``write``: nothing of it waits in a buffer to be
written later, after an error, glued to another line.

What can go wrong with the file:

- a proxy killed mid-write leaves a half line: the next run starts on a fresh
  line, so its meta line is whole (the reader skips the half one);
- a full disk or a vanished file stops the recording, said once in one line;
  forwarding goes on, and the exchanges not written are counted (``dropped``);
- ``--out`` naming a file that is not a ctxviewer recording (a transcript,
  anything else) is refused unless forced, so nothing is appended to it.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any, BinaryIO

import orjson

from ctxviewer import __version__
from ctxviewer.proxy.exchange import FORMAT_VERSION, Exchange, utc_now
from ctxviewer.proxy.redact import redact_line, redact_url
from ctxviewer.special_files import pseudo_root, write_refusal

RecordCallback = Callable[[dict[str, Any]], None]
FailureCallback = Callable[[str], None]

log = logging.getLogger("ctxviewer.proxy")

SNIFF_BYTES = 1 << 16  # how much of an existing file is read to tell a recording


class NotARecording(OSError):
    """``--out`` names an existing file that is not a ctxviewer recording."""


def default_recording_name() -> str:
    """``ctxviewer-recording-<local timestamp>.jsonl``: a new file per proxy run."""
    return f"ctxviewer-recording-{datetime.now():%Y%m%d-%H%M%S}.jsonl"


def check_regular(path: str) -> None:
    """Raise ``NotARecording`` when ``path`` exists and is not a regular file (a FIFO
    would block the proxy's start until a reader came, a device swallow the recording)
    or lies in /proc, /sys or /dev (/proc/kmsg is "regular" and its read blocks)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        raise NotARecording(
            f"{path} is not a regular file (a pipe, a device or a folder): "
            "the recording must go to a file"
        )
    if pseudo_root(path) is not None:
        raise NotARecording(write_refusal(path))


def check_appendable(path: str) -> None:
    """Raise ``NotARecording`` unless ``path`` is absent, empty, or a ctxviewer recording."""
    try:
        with open(path, "rb") as f:
            head = f.read(SNIFF_BYTES)
    except FileNotFoundError:
        return
    if not head.strip():
        return
    first = head.lstrip().split(b"\n", 1)[0]
    try:
        record = orjson.loads(first)
    except orjson.JSONDecodeError:
        record = None
    if isinstance(record, dict) and "ctxviewer" in record and record.get("type") == "meta":
        return
    raise NotARecording(
        f"{path} exists and is not a ctxviewer recording: not appending to "
        "it (choose another file, or force it)"
    )


def _ends_a_line(path: str) -> bool:
    """True when ``path`` is empty or its last byte ends a line (or it cannot be read
    back, as a device)."""
    try:
        with open(path, "rb") as f:
            if f.seek(0, os.SEEK_END) == 0:
                return True
            f.seek(-1, os.SEEK_END)
            return f.read(1) == b"\n"
    except OSError:
        return True


class Recorder:
    """Writes the meta line and then exchange lines to ``path`` (appending to a recording).

    ``submit`` is called from the proxy's event loop; the line is written by the
    writer thread. ``wait_for`` may be called from any thread (tests, the GUI)
    to wait until lines are on disk. ``on_record`` is called on the writer
    thread after each line.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        on_record: RecordCallback | None = None,
        *,
        force: bool = False,
        on_failure: FailureCallback | None = None,
    ) -> None:
        self.path = os.fspath(path)
        self.force = force
        self._on_record = on_record
        self._on_failure = on_failure  # called once, on the writer thread, with the reason
        self._file: BinaryIO | None = None
        self._count = 0
        self.dropped = 0  # exchanges not written after the recording stopped
        self.failure: str | None = None  # why the recording stopped
        self._cond = threading.Condition()
        self._writer: ThreadPoolExecutor | None = None
        # called on the writer thread with each exchange and its record, before it is written
        self.observe: Callable[[Exchange, dict[str, Any]], None] | None = None

    @property
    def count(self) -> int:
        """Exchange lines written so far."""
        return self._count

    def open(self, upstreams: dict[str, str]) -> None:
        """Open the file and write the meta line. Raises OSError when it cannot be written
        (``NotARecording`` for a file that is not a recording, unless forced)."""
        check_regular(self.path)
        if not self.force:
            check_appendable(self.path)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._file = os.fdopen(fd, "ab", buffering=0)
        if not _ends_a_line(self.path):
            self._file.write(b"\n")  # a run killed mid-line: start on a fresh one
        meta = {
            "ctxviewer": FORMAT_VERSION,
            "type": "meta",
            "version": __version__,
            "started": utc_now(),
            "upstreams": {k: redact_url(v) for k, v in upstreams.items()},
        }
        self._write_line(redact_line(orjson.dumps(meta)) + b"\n")
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="ctxviewer-recorder")

    def submit(self, ex: Exchange) -> None:
        """Record ``ex`` on the writer thread (in submission order)."""
        if self._writer is None:  # a call in the instant between binding and opening
            self.dropped += 1
            return
        self._writer.submit(self._record, ex)

    def write(self, record: dict[str, Any]) -> None:
        """Write one exchange line now, on the calling thread, and tell the listeners."""
        if self._file is None:
            raise RuntimeError("Recorder.write before open")
        if self.failure is not None:
            self.dropped += 1
            return
        try:
            self._write_line(redact_line(orjson.dumps(record)) + b"\n")
        except OSError as e:
            self._stop(e)
            return
        with self._cond:
            self._count += 1
            self._cond.notify_all()
        if self._on_record is not None:
            try:
                self._on_record(record)
            except Exception as e:  # noqa: BLE001 - a listener's bug must not stop the recording
                log.error(
                    "ctxviewer proxy: on_record failed for %s: %s: %s",
                    record.get("id"),
                    type(e).__name__,
                    e,
                )

    def wait_for(self, count: int, timeout: float) -> bool:
        """Block until at least ``count`` exchanges are written; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: self._count >= count, timeout)

    def close(self) -> None:
        """Write what is queued, then close the file."""
        if self._writer is not None:
            self._writer.shutdown(wait=True)
            self._writer = None
        if self._file is not None:
            try:
                self._file.close()
            except OSError as e:  # the failure that stopped the recording, or a late one
                if self.failure is None:
                    self.failure = f"{self.path}: {e.strerror or e}"
            self._file = None

    def _record(self, ex: Exchange) -> None:
        try:
            record = ex.to_record()
        except Exception as e:  # noqa: BLE001 - a bug turning one exchange into a line
            log.error("ctxviewer proxy: could not record %s: %s: %s", ex.id, type(e).__name__, e)
            return
        if self.observe is not None:
            try:
                self.observe(ex, record)
            except Exception as e:  # noqa: BLE001 - as for on_record
                log.error("ctxviewer proxy: observe failed for %s: %s", ex.id, e)
        self.write(record)

    def _stop(self, error: OSError) -> None:
        self.failure = f"{self.path}: {error.strerror or error}"
        self.dropped += 1
        log.error(
            "ctxviewer proxy: recording stopped (%s); forwarding goes on, "
            "exchanges are no longer recorded",
            self.failure,
        )
        if self._on_failure is not None:
            try:
                self._on_failure(self.failure)
            except Exception as e:  # noqa: BLE001 - as for on_record
                log.error("ctxviewer proxy: on_failure failed: %s: %s", type(e).__name__, e)

    def _write_line(self, line: bytes) -> None:
        assert self._file is not None
        write_all(self._file, line)


def write_all(f: BinaryIO, data: bytes) -> None:
    """Write all of ``data`` to an unbuffered file, which may take part of it per call."""
    view = memoryview(data)
    while view:
        written = f.write(view)
        if not written:
            raise OSError(f"wrote nothing of a {len(view)}-byte line")
        view = view[written:]
