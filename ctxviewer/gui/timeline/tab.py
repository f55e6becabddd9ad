"""The "Timeline" tab: hosts ``TimelinePlot`` when it is available.

Integration point: ``plot.TimelinePlot`` (a pyqtgraph ``PlotWidget``
with ``set_timeline(...)``) is written separately. When it cannot be
imported, the tab shows a placeholder saying so, and the rest of the window
works as usual.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from ctxviewer.analysis.report import Analysis
from ctxviewer.gui.widgets.theme import replace_widget, theme_changed

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
        self._analysis: Analysis | None = None  # what the plot shows (built anew: again)
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
        self._analysis = a if a is not None else self._analysis
        if self.plot is not None and a is not None:
            self.plot.set_analysis(a)

    def set_current(self, index: int) -> None:
        if self.plot is not None:
            self.plot.select_request(index)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if self.plot is not None and theme_changed(event, self.plot.dark):
            self._rebuild_plot()

    def _rebuild_plot(self) -> None:
        """The theme changed: a plot in its colours, showing what the old one showed."""
        old = self.plot
        assert old is not None and TimelinePlot is not None
        new = TimelinePlot(self)
        new.request_clicked.connect(self.request_clicked)
        new.set_toggles(old.toggles())
        new.set_budget_marks(old.budget_marks)
        if self._analysis is not None:
            new.set_analysis(self._analysis)
        if old.selected_index is not None:
            new.select_request(old.selected_index)
        self.plot = new
        replace_widget(old, new)
