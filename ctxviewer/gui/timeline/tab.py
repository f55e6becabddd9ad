"""The "Timeline" tab: hosts ``TimelinePlot`` when it is available.

Integration point: ``plot.TimelinePlot`` (a pyqtgraph ``PlotWidget``
with ``set_timeline(...)``) is written separately. When it cannot be
imported, the tab shows a placeholder saying so, and the rest of the window
works as usual.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from ctxviewer.analysis.analysis import Analysis

try:
    from ctxviewer.gui.timeline.plot import TimelinePlot
except ImportError as e:  # the plot module is not there (yet) or pyqtgraph is missing
    TimelinePlot = None  # type: ignore[assignment,misc]
    _WHY = f"{type(e).__name__}: {e}"
else:
    _WHY = ""


class TimelineTab(QWidget):
    request_clicked = Signal(int)  # a request picked on the plot (when the plot reports it)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.plot: TimelinePlot | None = None
        self.placeholder: QLabel | None = None
        if TimelinePlot is not None:
            self.plot = TimelinePlot(self)
            self.plot.request_clicked.connect(self.request_clicked)
            layout.addWidget(self.plot)
        else:
            self.placeholder = QLabel("The timeline is not available in this build.\n" + _WHY,
                                      self)
            self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
            self.placeholder.setWordWrap(True)
            layout.addWidget(self.placeholder)

    @property
    def available(self) -> bool:
        return self.plot is not None

    def set_analysis(self, a: Analysis | None) -> None:
        if self.plot is not None and a is not None:
            self.plot.set_analysis(a)

    def set_current(self, index: int) -> None:
        if self.plot is not None:
            self.plot.select_request(index)
