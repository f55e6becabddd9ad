"""Append recording lines to a JSONL file, one flushed line at a time.

Each line is written with a single ``write`` and flushed at once, so a crash
loses at most the exchange in flight, and a reader following the file (live
attach) never sees a half-written exchange except while it is being written.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any, BinaryIO

import orjson

from ctxviewer import __version__
from ctxviewer.proxy.exchange import FORMAT_VERSION, utc_now
from ctxviewer.proxy.redact import redact_url

RecordCallback = Callable[[dict[str, Any]], None]

log = logging.getLogger("ctxviewer.proxy")


def default_recording_name() -> str:
    """``ctxviewer-recording-<local timestamp>.jsonl``: a new file per proxy run."""
    return f"ctxviewer-recording-{datetime.now():%Y%m%d-%H%M%S}.jsonl"


class Recorder:
    """Writes the meta line and then exchange lines to ``path`` (appending to an existing file).

    ``write`` is called from the proxy's event loop thread; ``wait_for`` may be
    called from any thread (tests, the GUI) to wait until lines are on disk.
    """

    def __init__(self, path: str | os.PathLike[str], on_record: RecordCallback | None = None):
        self.path = os.fspath(path)
        self._on_record = on_record
        self._file: BinaryIO | None = None
        self._count = 0
        self._cond = threading.Condition()

    @property
    def count(self) -> int:
        """Exchange lines written so far."""
        return self._count

    def open(self, upstreams: dict[str, str]) -> None:
        """Open the file and write the meta line. Raises OSError when it cannot be written."""
        self._file = open(self.path, "ab")  # noqa: SIM115 - kept open for the proxy's lifetime
        meta = {
            "ctxviewer": FORMAT_VERSION,
            "type": "meta",
            "version": __version__,
            "started": utc_now(),
            "upstreams": {k: redact_url(v) for k, v in upstreams.items()},
        }
        self._write_line(meta)

    def write(self, record: dict[str, Any]) -> None:
        """Write one exchange line, flush it, and tell the callback and waiters."""
        if self._file is None:
            raise RuntimeError("Recorder.write before open")
        self._write_line(record)
        with self._cond:
            self._count += 1
            self._cond.notify_all()
        if self._on_record is not None:
            try:
                self._on_record(record)
            except Exception:  # noqa: BLE001 - a listener's bug must not stop the recording
                log.exception("ctxviewer proxy: on_record callback failed for %s", record.get("id"))

    def wait_for(self, count: int, timeout: float) -> bool:
        """Block until at least ``count`` exchanges are written; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: self._count >= count, timeout)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _write_line(self, record: dict[str, Any]) -> None:
        assert self._file is not None
        line = orjson.dumps(record) + b"\n"
        self._file.write(line)
        self._file.flush()
