"""One kind of background job of which only the newest counts: ``LatestJob``.

The window starts jobs of one kind again and again (load this file, analyse with
this estimator, poll the followed file, compare, compute insights, search for
sessions) and only the newest one matters. ``LatestJob`` holds what each owner
of such jobs wrote around ``worker.Worker`` before:

- a generation number: a new job makes the results of every earlier one stale,
  and they are dropped here, never emitted;
- a cancel flag per job: starting a new job, ``cancel()`` and ``drop()`` set it
  (a job checks ``cancelled()`` between steps);
- a busy flag: from a start until the newest job's end has been handled;
  ``busy_changed`` says when it changes.

Results arrive on the owner's thread: ``finished`` (the job's return value),
``failed`` (one line), ``cancelled``, with ``progressed`` and ``partial`` on the
way. ``start(fn)`` does it all; ``begin()`` then ``run(ticket, fn)`` lets a job
know its own ``Ticket`` first (to report a partial result, or to hand its cancel
flag to an API client).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from PySide6.QtCore import QObject, QThreadPool, Signal

from ctxviewer.gui.widgets.worker import Job, Worker, WorkerSignals, start, start_soon


@dataclass(frozen=True)
class Ticket:
    """One job of a ``LatestJob``: its generation and its cancel flag."""

    generation: int
    cancel: threading.Event
    signals: WorkerSignals

    def cancelled(self) -> bool:
        return self.cancel.is_set()

    def partial(self, value: object) -> None:
        """Report an early result, from the job's thread (dropped once the job is stale)."""
        try:
            self.signals.partial.emit(self.generation, value)
        except RuntimeError:  # "Signal source has been deleted": nobody to tell
            pass


class LatestJob(QObject):
    """Runs jobs of one kind on a thread pool; only the newest one's results are emitted."""

    progressed = Signal(object, object)  # done, total (may exceed 2**31)
    partial = Signal(object)  # an early result (``Ticket.partial``)
    finished = Signal(object)  # the job's result
    failed = Signal(str)  # one-line reason
    cancelled = Signal()
    busy_changed = Signal(bool)

    def __init__(
        self,
        pool: QThreadPool | None = None,
        parent: QObject | None = None,
        *,
        done_when_ended: bool = False,
    ) -> None:
        """``done_when_ended``: a job whose worker has left ``run()`` no longer counts as
        busy, even before its result is handled (a result lost on the way, its owner
        going away, must not leave the owner busy for good)."""
        super().__init__(parent)
        self._pool = pool or QThreadPool.globalInstance()
        self._done_when_ended = done_when_ended
        self._gen = 0
        self._cancel = threading.Event()
        self._worker: Worker | None = None  # the newest job's, while it runs
        self._announced = False  # the busy state busy_changed said last
        self._signals = WorkerSignals()  # no parent: running workers keep it alive
        self._signals.progressed.connect(self._on_progressed)
        self._signals.partial.connect(self._on_partial)
        self._signals.finished.connect(self._on_finished)
        self._signals.failed.connect(self._on_failed)
        self._signals.cancelled.connect(self._on_cancelled)

    @property
    def generation(self) -> int:
        """The newest job's generation (0: none yet)."""
        return self._gen

    def is_busy(self) -> bool:
        w = self._worker
        return w is not None and not (self._done_when_ended and w.done.is_set())

    # -- starting and stopping ------------------------------------------------------------
    def begin(self) -> Ticket:
        """Cancel the running job and make it stale; the ticket of the next one."""
        self._cancel.set()
        self._gen += 1
        self._cancel = threading.Event()
        return Ticket(self._gen, self._cancel, self._signals)

    def run(self, ticket: Ticket, fn: Job, *, soon: bool = False) -> None:
        """Start ``fn`` as ``ticket``'s job (the last one begun); ``soon``: a moment from
        now, after the paints the caller's update asked for (``worker.start_soon``)."""
        if ticket.generation != self._gen or ticket.signals is not self._signals:
            raise ValueError("run() takes the ticket of this runner's last begin()")
        worker = Worker(fn, ticket.generation, self._signals, ticket.cancel)
        self._worker = worker
        if soon:
            start_soon(self._pool, worker, self)
        else:
            start(self._pool, worker)
        self._settle(started=True)  # busy, even if the worker is already done

    def start(self, fn: Job, *, soon: bool = False) -> Ticket:
        """``run(begin(), fn)``: the newest job is now ``fn``."""
        ticket = self.begin()
        self.run(ticket, fn, soon=soon)
        return ticket

    def cancel(self) -> None:
        """Ask the running job to stop; it ends as ``cancelled`` if it checks in time
        (or ``finished``/``failed`` if it ends first)."""
        self._cancel.set()

    def drop(self) -> None:
        """Cancel the running job and forget it at once: nothing more of it is emitted."""
        self._cancel.set()
        self._gen += 1
        self._worker = None
        self._settle()

    # -- the worker's reports -------------------------------------------------------------
    def _settle(self, started: bool = False) -> None:
        busy = started or self.is_busy()
        if busy != self._announced:
            self._announced = busy
            self.busy_changed.emit(busy)

    def _ended(self, gen: int) -> bool:
        """The newest job ended (it is no longer busy when its end is handled)."""
        if gen != self._gen or self._worker is None:
            return False
        self._worker = None
        return True

    def _on_progressed(self, gen: int, done: object, total: object) -> None:
        if gen == self._gen and self._worker is not None:
            self.progressed.emit(done, total)

    def _on_partial(self, gen: int, value: object) -> None:
        if gen == self._gen and self._worker is not None:
            self.partial.emit(value)

    def _on_finished(self, gen: int, result: object) -> None:
        if self._ended(gen):
            self.finished.emit(result)
            self._settle()

    def _on_failed(self, gen: int, reason: str) -> None:
        if self._ended(gen):
            self.failed.emit(reason)
            self._settle()

    def _on_cancelled(self, gen: int) -> None:
        if self._ended(gen):
            self.cancelled.emit()
            self._settle()
