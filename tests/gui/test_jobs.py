"""LatestJob (gui/widgets/jobs.py): jobs on the real thread pool, only the newest reported.

Every job here runs on a QThreadPool thread; waits on the GUI side go through
pytest-qt (the results come back as queued signals), waits in a job are bounded.
"""

from __future__ import annotations

import threading
import time

import pytest
import shiboken6
from PySide6.QtCore import QThreadPool

from ctxviewer.errors import Cancelled, LoadError
from ctxviewer.gui.widgets.jobs import LatestJob

WAIT_S = 10  # the longest a job waits for the test


@pytest.fixture
def jobs(qtbot):
    runner = LatestJob()
    runner.log = []  # what it emitted, in order
    runner.finished.connect(lambda r: runner.log.append(("finished", r)))
    runner.failed.connect(lambda r: runner.log.append(("failed", r)))
    runner.cancelled.connect(lambda: runner.log.append(("cancelled",)))
    runner.progressed.connect(lambda d, t: runner.log.append(("progressed", d, t)))
    runner.partial.connect(lambda v: runner.log.append(("partial", v)))
    runner.busy_changed.connect(lambda b: runner.log.append(("busy", b)))
    yield runner
    runner.drop()


def settle_pool(qtbot) -> None:
    """Every job done and every queued report delivered."""
    assert QThreadPool.globalInstance().waitForDone(WAIT_S * 1000)
    qtbot.wait(50)


def blocked(gate: threading.Event, result: object):
    """A job that waits for ``gate`` (or its cancel flag), then returns ``result``."""

    def job(_progress, cancelled):
        deadline = time.monotonic() + WAIT_S
        while not gate.wait(0.01) and time.monotonic() < deadline:
            pass
        return result

    return job


def test_a_job_reports_its_result_and_the_busy_state(jobs, qtbot):
    thread = []
    with qtbot.waitSignal(jobs.finished, timeout=WAIT_S * 1000) as got:
        jobs.start(lambda _p, _c: thread.append(threading.current_thread()) or 42)
        assert jobs.is_busy()
    assert got.args == [42]
    assert thread[0] is not threading.main_thread()  # it ran on a pool thread
    assert not jobs.is_busy()
    assert jobs.log == [("busy", True), ("finished", 42), ("busy", False)]


def test_a_newer_job_makes_the_older_stale_and_cancels_it(jobs, qtbot):
    gate = threading.Event()
    old = jobs.start(blocked(gate, "old"))
    with qtbot.waitSignal(jobs.finished, timeout=WAIT_S * 1000):
        new = jobs.start(lambda _p, _c: "new")
    assert old.cancelled() and not new.cancelled()
    assert new.generation == old.generation + 1 == jobs.generation
    gate.set()  # the old job ends now, with a result nobody wants
    settle_pool(qtbot)
    assert jobs.log == [("busy", True), ("finished", "new"), ("busy", False)]


def test_cancel_ends_a_job_that_checks(jobs, qtbot):
    started = threading.Event()

    def job(_progress, cancelled):
        started.set()
        deadline = time.monotonic() + WAIT_S
        while not cancelled() and time.monotonic() < deadline:
            time.sleep(0.01)
        raise Cancelled()

    jobs.start(job)
    assert started.wait(WAIT_S)
    with qtbot.waitSignal(jobs.cancelled, timeout=WAIT_S * 1000):
        jobs.cancel()
    assert not jobs.is_busy()
    assert jobs.log == [("busy", True), ("cancelled",), ("busy", False)]


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (LoadError("not a session log"), "not a session log"),
        (ValueError("boom"), "internal error: ValueError: boom"),
    ],
)
def test_a_failure_comes_as_one_line(jobs, qtbot, error, reason):
    def job(_progress, _cancelled):
        raise error

    with qtbot.waitSignal(jobs.failed, timeout=WAIT_S * 1000) as got:
        jobs.start(job)
    assert got.args == [reason]
    assert not jobs.is_busy()


def test_progress_and_partial_results_of_the_newest_job_only(jobs, qtbot):
    gate = threading.Event()
    stale = jobs.begin()

    def old(progress, _cancelled):
        deadline = time.monotonic() + WAIT_S
        while not gate.wait(0.01) and time.monotonic() < deadline:
            pass
        progress(1, 9)
        stale.partial("stale")
        return "old"

    jobs.run(stale, old)
    ticket = jobs.begin()

    def job(progress, _cancelled):
        progress(1, 2)
        ticket.partial("half")
        progress(2, 2)
        return "whole"

    with qtbot.waitSignal(jobs.finished, timeout=WAIT_S * 1000):
        jobs.run(ticket, job)
    gate.set()
    settle_pool(qtbot)
    assert jobs.log == [
        ("busy", True),
        ("progressed", 1, 2),
        ("partial", "half"),
        ("progressed", 2, 2),
        ("finished", "whole"),
        ("busy", False),
    ]


def test_drop_forgets_the_running_job_at_once(jobs, qtbot):
    gate = threading.Event()
    ticket = jobs.start(blocked(gate, "late"))
    jobs.drop()
    assert ticket.cancelled() and not jobs.is_busy()
    gate.set()
    settle_pool(qtbot)
    assert jobs.log == [("busy", True), ("busy", False)]  # nothing of the job itself


def test_soon_starts_after_this_pass_of_the_event_loop(jobs, qtbot):
    ran = threading.Event()
    with qtbot.waitSignal(jobs.finished, timeout=WAIT_S * 1000):
        jobs.start(lambda _p, _c: ran.set() or "late", soon=True)
        time.sleep(0.1)  # no event handled: the job cannot have started
        assert not ran.is_set() and jobs.is_busy()
    assert ran.is_set()


def test_a_job_started_soon_does_not_start_once_its_owner_is_gone(qtbot):
    ran = threading.Event()
    jobs = LatestJob()
    jobs.start(lambda _p, _c: ran.set(), soon=True)
    shiboken6.delete(jobs)  # the window closed within START_SOON_MS
    qtbot.wait(100)
    settle_pool(qtbot)
    assert not ran.is_set()


@pytest.mark.parametrize("done_when_ended", [False, True])
def test_done_when_ended_drops_busy_before_the_result_arrives(qtbot, done_when_ended):
    jobs = LatestJob(done_when_ended=done_when_ended)
    jobs.start(lambda _p, _c: 1)
    assert QThreadPool.globalInstance().waitForDone(WAIT_S * 1000)  # no event handled yet
    assert jobs.is_busy() is not done_when_ended
    with qtbot.waitSignal(jobs.finished, timeout=WAIT_S * 1000):
        pass
    assert not jobs.is_busy()


def test_run_takes_the_ticket_of_the_last_begin(jobs):
    first = jobs.begin()
    jobs.begin()
    with pytest.raises(ValueError, match="last begin"):
        jobs.run(first, lambda _p, _c: None)
    assert first.cancelled() and not jobs.is_busy()
