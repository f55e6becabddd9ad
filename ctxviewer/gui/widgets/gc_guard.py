"""Run Python's cyclic garbage collector on the GUI thread only.

Loading and analysis run on worker threads and allocate heavily, so the
cyclic collector can start there, in whatever thread allocates. If a cycle
it frees holds Qt objects (widgets, pyqtgraph items), their C++ destructors
then run off the GUI thread and Qt crashes. This guard turns automatic
collection off and collects from a timer on the GUI thread instead, with the
same thresholds Python would use (the well-known PyQt recipe).
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer


class GcGuard(QObject):
    """Collect garbage on the GUI thread; ``install`` it once per application."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = 500) -> None:
        super().__init__(parent)
        self.threshold = gc.get_threshold()
        gc.disable()
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.check)
        self.timer.start(interval_ms)

    def check(self) -> None:
        counts = gc.get_count()
        if counts[0] > self.threshold[0]:
            generation = 0
            if counts[1] > self.threshold[1]:
                generation = 2 if counts[2] > self.threshold[2] else 1
            gc.collect(generation)

    def stop(self) -> None:
        self.timer.stop()
        gc.enable()


_guard: GcGuard | None = None


def install(app: QObject) -> GcGuard:
    """Install the guard on ``app`` (a QCoreApplication); idempotent."""
    global _guard
    if _guard is None:
        _guard = GcGuard(app)
    return _guard
