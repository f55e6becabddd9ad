"""Background jobs: results reach their owner, and a gone owner is no error."""

from __future__ import annotations

import threading

import shiboken6

from ctxviewer.gui.widgets.worker import Worker, WorkerSignals


def test_a_finished_job_reports_its_result(qtbot):
    signals = WorkerSignals()
    got: list[tuple[int, object]] = []
    signals.finished.connect(lambda gen, result: got.append((gen, result)))
    Worker(lambda _p, _c: 42, 7, signals, threading.Event()).run()
    assert got == [(7, 42)]


def test_a_job_whose_owner_is_gone_ends_quietly(qtbot, capsys):
    """A window closed (or the app quitting) while its job ran: nobody to tell."""
    signals = WorkerSignals()
    worker = Worker(lambda progress, _c: progress(1, 2) or 42, 1, signals, threading.Event())
    shiboken6.delete(signals)
    worker.run()  # would raise "Signal source has been deleted" in the pool thread
    assert worker.done.is_set()
    assert "Traceback" not in capsys.readouterr().err
