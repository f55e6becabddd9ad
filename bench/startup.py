"""Start-up: how long `ctxviewer` takes to show its window, against a bare PySide6 window.

    python bench/startup.py [--repeat 7] [--display] [FILE]

Each run is a new process, timed from its launch to the first paint of its
window (a paint event of a top-level widget, caught by an event filter installed
on it as it is shown): once as ``ctxviewer``
starts (``cli.main``, no file: the library page; or FILE), once as a bare
``QApplication`` + ``QMainWindow`` (the baseline, measured in the same run, runs
interleaved). Both start the same Python with the same environment: a fresh
empty home (no sessions, no settings), offscreen unless ``--display`` (then the
current ``DISPLAY``). Prints the median and the best of each and the ratio of the
medians; the target is the window within 2x the bare window. The CPU time each
process used (user + system, its threads included) is printed beside: on a busy
machine it varies less than the time to the paint, which other processes stretch.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = 2.0

# Prints "painted" and exits at the first paint of a window: each top-level widget is
# watched from the moment it is shown (QWidget.show, wrapped). Not an event filter on
# the whole application: that one sees every event of every object, each receiver
# made a Python object first, and a receiver of a Python class still being built (the
# main window) makes PySide create every class of QtCore, QtGui and QtWidgets it had
# not made yet, with their enums: ~25 ms (a tenth of the start) that no user pays.
SPY = """
import os
from PySide6 import QtWidgets
from PySide6.QtCore import QEvent, QObject
class _Spy(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint:
            print("painted", flush=True)
            os._exit(0)
        return False
_spy = _Spy()
_show = QtWidgets.QWidget.show
def _watched_show(self):
    if self.isWindow():
        self.installEventFilter(_spy)
    _show(self)
QtWidgets.QWidget.show = _watched_show
"""

BARE = (
    SPY
    + """
from PySide6.QtWidgets import QApplication, QMainWindow
app = QApplication([])
w = QMainWindow()
w.resize(1400, 900)
w.show()
app.exec()
"""
)

# ctxviewer as `ctxviewer [FILE]` runs it (cli.main)
APP = (
    SPY
    + """
import sys
from ctxviewer.cli import main
sys.exit(main(["--new-instance", *sys.argv[1:]]))
"""
)


def run(code: str, env: dict[str, str], args: list[str]) -> tuple[float, float]:
    """(seconds to the first paint, CPU seconds the process used: user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if "painted" not in proc.stdout:
        raise SystemExit(f"no window painted (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("file", nargs="?", help="a session to open (default: none, the library)")
    p.add_argument("--repeat", type=int, default=7, help="runs of each (default 7)")
    p.add_argument("--display", action="store_true", help="the current DISPLAY, not offscreen")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ctxviewer-startup-") as home:
        # as a user runs it: Python keeps its compiled modules (a machine with
        # PYTHONDONTWRITEBYTECODE set, as CI containers often are, compiles ~120 of
        # ctxviewer's modules again at every start: ~0.15 s)
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("QT_", "XDG_", "CTXVIEWER_")) and k != "PYTHONDONTWRITEBYTECODE"
        }
        env.update(
            HOME=home,
            XDG_CONFIG_HOME=f"{home}/config",
            XDG_CACHE_HOME=f"{home}/cache",
            XDG_DATA_HOME=f"{home}/data",
            PYTHONPATH=str(ROOT),
        )
        if not args.display:
            env["QT_QPA_PLATFORM"] = "offscreen"
        files = [os.path.abspath(args.file)] if args.file else []
        run(BARE, env, [])  # warm the file cache for both
        run(APP, env, files)
        bare, app = [], []
        for _ in range(args.repeat):
            bare.append(run(BARE, env, []))
            app.append(run(APP, env, files))
    b, a = (statistics.median(s for s, _cpu in runs) for runs in (bare, app))
    b_cpu, a_cpu = (statistics.median(cpu for _s, cpu in runs) for runs in (bare, app))
    where = "on the display" if args.display else "offscreen"
    what = os.path.basename(args.file) if args.file else "no file (the library page)"
    print(
        f"start-up to the first paint, {where}, {what}; median of {args.repeat} runs each "
        f"(load average {os.getloadavg()[0]:.1f})"
    )
    print(
        f"  bare PySide6 window (baseline)  {b:6.3f} s   best {min(s for s, _ in bare):.3f} s"
        f"   CPU {b_cpu:.3f} s"
    )
    print(
        f"  ctxviewer                       {a:6.3f} s   best {min(s for s, _ in app):.3f} s"
        f"   CPU {a_cpu:.3f} s"
    )
    ratio = a / b
    print(
        f"  ratio {ratio:.2f}x the bare window  (target <= {TARGET:.0f}x: "
        f"{'OK' if ratio <= TARGET else 'MISSED'}); in CPU time {a_cpu / b_cpu:.2f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
