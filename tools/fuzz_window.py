"""Open damaged real logs in the real window (offscreen) while a good session is open.

    .venv/bin/python tools/fuzz_window.py [--cases 60] [--seed 1] [--corpus DIR]
        [--only cycle,flip] [--timeout 60] [--shot DIR]

The damaged copies are those of tools/fuzz_logs.py (tools/fuzz_damage.py). Each is
opened with ``MainWindow.open_file``, as File > Open does, after a good session
(a real claude-trace recording) is shown. The window's dialogs are answered by this
script (``show_error`` records its title and message; a session chooser is closed).
A failure is: the error dialog says "internal error" or "Analysis failed", its
message is not one line, the good session is gone after a file that could not be
opened, nothing happens within ``--timeout``, or Qt reports an exception raised in
a slot. ``--shot DIR`` saves the window after the first refused file and the first
damaged file that opened, at 1024x700 and 1400x900.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzz_damage import DAMAGES, pick  # noqa: E402
from fuzz_logs import CORPUS, sources  # noqa: E402

GOOD = "claude-trace/badlogic__lemmy__apps_claude-trace_test_test-traffic.jsonl"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=int, default=60)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--corpus", type=Path, default=CORPUS, help="the folder of real logs")
    p.add_argument("--only", help="comma-separated damages (default: all but huge-line)")
    p.add_argument("--timeout", type=float, default=60, help="seconds per file")
    p.add_argument("--shot", type=Path, help="save screenshots here")
    args = p.parse_args(argv)
    only = (
        [d.strip() for d in args.only.split(",")]
        if args.only
        else [d for d in DAMAGES if d != "huge-line"]
    )
    if unknown := [d for d in only if d not in DAMAGES]:
        p.error(f"--only: unknown damage {', '.join(unknown)} (known: {', '.join(DAMAGES)})")
    if not (args.corpus / GOOD).is_file():
        p.error(f"no corpus at {args.corpus} (--corpus DIR)")

    from PySide6.QtWidgets import QApplication, QDialog

    from ctxviewer.gui.app import build_main_window

    app = QApplication.instance() or QApplication([])
    raised: list[str] = []

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        raised.append("".join(traceback.format_exception(kind, exc, tb))[-600:])

    sys.excepthook = hook  # an exception in a slot comes here
    w = build_main_window()
    errors: list[tuple[str, str]] = []
    w.show_error = lambda title, message: errors.append((title, message))
    w.confirm = lambda title, message: False
    w.resize(1400, 900)
    w.show()

    def wait(done: Callable[[], bool], seconds: float) -> bool:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            app.processEvents()
            if done() and not w.loader.is_busy():
                app.processEvents()
                return True
            time.sleep(0.01)
        return False

    def close_dialogs() -> None:
        for d in w.findChildren(QDialog):
            if d.isVisible():
                d.reject()
        app.processEvents()

    def open_good() -> None:
        w.open_file(str(args.corpus / GOOD))
        if not wait(
            lambda: w.state.session is not None and w.state.session.path == str(args.corpus / GOOD),
            args.timeout,
        ):
            raise SystemExit("the good session did not open")
        close_dialogs()

    rnd = random.Random(args.seed)
    logs = sources(args.corpus)
    failures: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    shots: set[str] = set()
    open_good()
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ctxviewer-fuzz-window-") as tmp:
        for n in range(args.cases):
            name, data = rnd.choice(logs)
            damage = pick(rnd, only)
            damaged = DAMAGES[damage](rnd, data)
            if damaged is None:
                damage, damaged = "truncate", data[: rnd.randrange(max(len(data), 1))]
            path = Path(tmp) / f"case-{n:04d}{Path(name).suffix}"
            path.write_bytes(damaged)
            good, errors[:], raised[:] = w.state.session, [], []
            took = time.perf_counter()
            w.open_file(str(path))
            done = wait(lambda good=good: bool(errors) or w.state.session is not good, args.timeout)
            took = time.perf_counter() - took
            close_dialogs()
            found: list[str] = []
            if not done:
                found.append(f"nothing within {args.timeout:.0f} s")
            if raised:
                found.append("exception in a slot: " + raised[0].strip().splitlines()[-1])
            if errors:
                title, message = errors[0]
                outcomes["refused"] += 1
                if title != "Cannot open file" or "internal error" in message:
                    found.append(f"{title}: {message[:150]}")
                if "\n" in message or not message:
                    found.append(f"not one line: {message[:150]!r}")
                if w.state.session is not good:
                    found.append("the good session is gone")
                kind = "refused"
            elif done:
                outcomes["opened"] += 1
                kind = "opened"
            else:
                kind = "hang"
            if args.shot and kind not in shots and not found:
                shots.add(kind)
                args.shot.mkdir(parents=True, exist_ok=True)
                for size in ((1024, 700), (1400, 900)):
                    w.resize(*size)
                    app.processEvents()
                    w.grab().save(str(args.shot / f"{kind}-{size[0]}x{size[1]}.png"))
                w.resize(1400, 900)
            for f in found:
                failures[f.split(":")[0]] += 1
                print(f"FAIL case {n} ({damage} of {name}): {f}", flush=True)
            print(
                f"case {n:3d} {took:5.2f} s {kind:8s} {damage} of {name[:60]}"
                + (f": {errors[0][1][:90]}" if errors else ""),
                flush=True,
            )
            if kind == "opened" or w.state.session is not good:
                open_good()
    print(
        f"\nseed {args.seed}: {args.cases} damaged files opened in the window in "
        f"{time.monotonic() - start:.0f} s: {outcomes['opened']} opened, "
        f"{outcomes['refused']} refused with a dialog, {sum(failures.values())} failures "
        f"{dict(failures)}"
    )
    w.close()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
