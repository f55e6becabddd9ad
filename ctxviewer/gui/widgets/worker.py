"""A generic background job for the thread pool, reporting through Qt signals.

The job is a plain function ``fn(progress, cancelled) -> result``: it calls
``progress(done, total)`` now and then and checks ``cancelled()`` between
records (``ctxviewer.ingest.load`` takes exactly these two callbacks). Each
worker carries a generation number so that its owner can drop results that a
newer job made stale: the window's parts own their workers through
``jobs.LatestJob``, which does that.

The signals object belongs to the owner, not to the worker, so that queued
signals never outlive their sender. Python owns the runnable (no auto-delete:
a pool deleting the C++ side under a live Python wrapper crashes the garbage
collector); ``start`` keeps every started worker referenced until it has
surely left ``run()``, whatever happens to its owner meanwhile.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal

from ctxviewer.errors import Cancelled, LibraryError, LoadError

Job = Callable[[Callable[[int, int], None], Callable[[], bool]], Any]


class WorkerSignals(QObject):
    """Signals of a ``Worker`` (a QRunnable is not a QObject)."""

    progressed = Signal(int, object, object)  # generation, done, total (may exceed 2**31)
    partial = Signal(int, object)  # generation, an early result (emitted by the job itself)
    finished = Signal(int, object)  # generation, result
    failed = Signal(int, str)  # generation, one-line reason
    cancelled = Signal(int)  # generation


class Worker(QRunnable):
    """Runs one job on a ``QThreadPool`` thread; emits progressed/finished/failed
    through ``signals`` (owned by the caller); stops early once ``cancel`` is set."""

    def __init__(
        self, fn: Job, generation: int, signals: WorkerSignals, cancel: threading.Event
    ) -> None:
        super().__init__()
        self.setAutoDelete(False)
        self.fn = fn
        self.generation = generation
        self.signals = signals
        self._cancel = cancel
        self.done = threading.Event()  # set as the very last step of run()

    def _progress(self, done: int, total: int) -> None:
        self._emit("progressed", self.generation, done, total)

    def run(self) -> None:
        try:
            self._run()
        finally:
            self.done.set()

    def _run(self) -> None:
        gen = self.generation
        try:
            result = self.fn(self._progress, self._cancel.is_set)
        except Cancelled:
            self._emit("cancelled", gen)
        except (LoadError, LibraryError) as e:  # one line for users: no internal error
            self._emit("failed", gen, str(e))
        except Exception as e:  # noqa: BLE001 - reported to the user, never lost in a thread
            self._emit("failed", gen, f"internal error: {type(e).__name__}: {e}")
        else:
            self._emit("finished", gen, result)

    def _emit(self, name: str, *args: object) -> None:
        """Report to the owner, unless it is gone (a window closed, the app quitting,
        while the job ran): then there is nobody to tell."""
        try:
            getattr(self.signals, name).emit(*args)
        except RuntimeError:  # "Signal source has been deleted"
            pass


_running: list[Worker] = []  # started workers, referenced until surely finished
_finished: list[Worker] = []  # done at the previous start: dropped at the next


def start(pool: QThreadPool, worker: Worker) -> None:
    """Start ``worker`` on ``pool``, keeping it (and its signals) alive while it runs."""
    _finished[:] = [w for w in _running if w.done.is_set()]
    _running[:] = [w for w in _running if not w.done.is_set()]
    _running.append(worker)
    pool.start(worker)


START_SOON_MS = 20  # see start_soon


def start_soon(pool: QThreadPool, worker: Worker, context: QObject) -> None:
    """Start ``worker`` ``START_SOON_MS`` from now (not if ``context`` is gone by then).

    For analyses a view update asks for: started at once, a CPU-bound job takes
    the GIL from the paint of that very update at each call from Qt into Python
    (a window that paints in 50 ms alone took 150 ms beside one). The window
    paints a new session from a 1 ms timer (``MainWindow._paint_soon``); these
    jobs start after it.
    """
    QTimer.singleShot(START_SOON_MS, context, lambda: start(pool, worker))
