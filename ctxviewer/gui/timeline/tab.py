"""The "Timeline" tab: hosts ``TimelinePlot`` when it is available.

The plot (``plot.TimelinePlot``, a pyqtgraph ``PlotWidget``) is built the first
time it is needed: pyqtgraph and numpy take a third of a second to import, which
the window's first paint does not wait for. When it cannot be imported, the tab
shows a placeholder saying so, and the rest of the window works as usual.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from ctxviewer.gui.widgets.theme import theme_changed

if TYPE_CHECKING:
    from ctxviewer.analysis.analysis import Analysis
    from ctxviewer.gui.timeline.plot import TimelinePlot


class TimelineTab(QWidget):
    request_clicked = Signal(int)  # a request picked on the plot (when the plot reports it)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._plot: TimelinePlot | None = None
        self._analysis: Analysis | None = None  # what the plot shows (built anew: again)
        self._toggles: dict[str, bool] = {}  # set before the plot was built
        self._current: int | None = None
        self.placeholder: QLabel | None = None

    @property
    def plot(self) -> TimelinePlot | None:
        """The plot, built the first time it is needed (pyqtgraph and numpy are imported
        then: not before the window's first paint); None when it cannot be imported."""
        if self._plot is None and self.placeholder is None:
            self._build_plot()
        return self._plot

    @property
    def available(self) -> bool:
        return self.plot is not None

    def _build_plot(self) -> None:
        try:
            from ctxviewer.gui.timeline.plot import TimelinePlot
        except ImportError as e:  # pyqtgraph is missing
            self.placeholder = QLabel(
                f"The timeline is not available in this build.\n{type(e).__name__}: {e}", self
            )
            self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
            self.placeholder.setWordWrap(True)
            self._layout.addWidget(self.placeholder)
            return
        plot = self._plot = TimelinePlot(self)
        plot.request_clicked.connect(self.request_clicked)
        if self._toggles:
            plot.set_toggles(self._toggles)
        if self._analysis is not None:
            plot.set_analysis(self._analysis)
        if self._current is not None:
            plot.select_request(self._current)
        self._layout.addWidget(plot)

    def toggles(self) -> dict[str, bool]:
        """The plot's toggles (those set for it while it was not built yet)."""
        return self._plot.toggles() if self._plot is not None else dict(self._toggles)

    def set_toggles(self, toggles: dict[str, bool]) -> None:
        self._toggles = dict(toggles)
        if self._plot is not None:
            self._plot.set_toggles(toggles)

    def set_analysis(self, a: Analysis | None) -> None:
        self._analysis = a if a is not None else self._analysis
        plot = self.plot
        if plot is not None and a is not None:
            plot.set_analysis(a)

    def set_current(self, index: int) -> None:
        self._current = index
        if self._plot is not None:
            self._plot.select_request(index)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if self._plot is not None and theme_changed(event, self._plot.dark):
            self._rebuild_plot()

    def _rebuild_plot(self) -> None:
        """The theme changed: a plot in its colours, showing what the old one showed."""
        old = self._plot
        assert old is not None
        self._toggles = old.toggles()
        marks = old.budget_marks
        self._plot = None
        self._build_plot()
        new = self._plot
        assert new is not None
        new.set_budget_marks(marks)
        self._layout.removeWidget(old)
        old.hide()
        old.setParent(None)
        old.deleteLater()
