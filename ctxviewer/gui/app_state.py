"""What the window shows: the analysed session, the selected request, the options.

``AppState`` holds data and emits ``*_changed`` signals; it computes nothing
beyond asking the core ``Analysis`` for the breakdown of the selected request.
Recomputing an analysis after an option change is the owner's job (it runs
on the thread pool): ``recompute_requested`` asks for it and ``update_analysis``
brings the result back. ``options_changed`` only says the options changed (the
controls and the views that show them follow).

A growing session (a progressive load's partial analyses, live follow's polls)
takes one path: a sequence of snapshots, each a ``Session`` of its own that
nothing changes once it is shown, with its ``Analysis``. The first is published
by ``set_session_analysis``, each next one by ``grow_analysis``. A view holding
the previous step's analysis keeps it whole; ``update_analysis`` takes analyses
of the step shown only (one of an earlier step is stale).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from ctxviewer.analysis.tokens.estimators import DEFAULT

if TYPE_CHECKING:  # the analysis is imported with the first session (not at the start)
    from ctxviewer.analysis.analysis import Analysis
    from ctxviewer.analysis.breakdown import Breakdown
    from ctxviewer.model import Session


@dataclass(frozen=True)
class Options:
    """How a session is analysed: estimator, threshold policy, window override (0 = auto),
    and whose counting rules (the agent's own ``/context`` or what was sent on the wire)."""

    estimator: str = DEFAULT
    policy: str = "agent"
    window: int = 0
    counts: str = "agent"

    @staticmethod
    def of(a: Analysis) -> Options:
        return Options(a.estimator_name, a.policy, a.window_override or 0, a.counts)

    def analysis(self, session: Session) -> Analysis:
        """A new ``Analysis`` of ``session`` with these options."""
        from ctxviewer.analysis.analysis import Analysis

        return Analysis(
            session, self.estimator, self.policy, self.window or None, counts=self.counts
        )


class AppState(QObject):
    """The single source of truth of the main window."""

    session_loaded = Signal(object)  # Analysis of a new session
    analysis_changed = Signal(object)  # Analysis (new session or new options)
    request_changed = Signal(int)  # index of the selected request
    breakdown_changed = Signal(object)  # Breakdown of the selected request, or None
    options_changed = Signal(object)  # Options: the user changed an option
    recompute_requested = Signal(object)  # Options: the analysis shown is not of these

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.analysis: Analysis | None = None
        self.options = Options()
        self.index: int | None = None
        self.loading = False  # the session is the first part of a file still being read
        self._breakdown: Breakdown | None = None

    @property
    def session(self) -> Session | None:
        return self.analysis.session if self.analysis is not None else None

    @property
    def breakdown(self) -> Breakdown | None:
        return self._breakdown

    # -- analyses -----------------------------------------------------------------
    def set_session_analysis(self, analysis: Analysis, loading: bool = False) -> None:
        """A newly loaded session: select its last main request. ``loading``: it is
        the first part of a file still being read (analyses of the whole session,
        such as Compare and Insights, wait for the rest)."""
        self.loading = loading
        self.analysis = analysis
        # the window it was opened with (no override carried over from the last file);
        # other options chosen during the load stay, and are applied when it is done
        self.options = replace(self.options, window=analysis.window_override or 0)
        reqs = analysis.session.requests
        self.index = analysis.resolve_index("last") if reqs else None
        self.session_loaded.emit(analysis)
        self._publish()

    def update_analysis(self, analysis: Analysis) -> None:
        """The current session analysed with other options; stale sessions (another
        file, an earlier step of a growing one) are ignored."""
        if self.analysis is None or analysis.session is not self.analysis.session:
            return
        self.analysis = analysis
        self._publish()

    def grow_analysis(self, analysis: Analysis) -> None:
        """The session shown, one step further: ``analysis`` of a new snapshot (a longer
        copy of the one shown, read further by a progressive load or live follow). Keeps
        the selected request, or follows the last one when that was selected."""
        if self.analysis is None:
            self.set_session_analysis(analysis)
            return
        tail = self.in_tail()
        self.analysis = analysis
        if tail and analysis.session.requests:
            self.index = analysis.resolve_index("last")
        self._publish()

    def in_tail(self) -> bool:
        """Whether nothing or the last main request is selected."""
        a, i = self.analysis, self.index
        return a is None or i is None or not a.session.requests or i >= a.resolve_index("last")

    def _publish(self) -> None:
        assert self.analysis is not None
        self.analysis_changed.emit(self.analysis)
        if Options.of(self.analysis) != self.options:  # changed while it was computed
            self.recompute_requested.emit(self.options)
        self._set_index(self.index, force=True)

    # -- selection ----------------------------------------------------------------
    def select_request(self, index: int) -> None:
        self._set_index(index)

    def step_request(self, delta: int) -> None:
        if self.index is not None:
            self._set_index(self.index + delta)

    def select_first(self) -> None:
        self._set_index(0)

    def select_last(self) -> None:
        if self.session is not None:
            self._set_index(len(self.session.requests) - 1)

    def _set_index(self, index: int | None, force: bool = False) -> None:
        if self.analysis is None or not self.analysis.session.requests or index is None:
            self._breakdown = None
            self.breakdown_changed.emit(None)
            return
        index = max(0, min(index, len(self.analysis.session.requests) - 1))
        if index == self.index and not force:
            return
        self.index = index
        self._breakdown = self.analysis.breakdown(index)
        self.request_changed.emit(index)
        self.breakdown_changed.emit(self._breakdown)

    # -- options ------------------------------------------------------------------
    def set_estimator(self, name: str) -> None:
        self._set_options(replace(self.options, estimator=name))

    def set_policy(self, name: str) -> None:
        self._set_options(replace(self.options, policy=name))

    def set_counts(self, counts: str) -> None:
        self._set_options(replace(self.options, counts=counts))

    def set_window_override(self, window: int) -> None:
        self._set_options(replace(self.options, window=max(0, int(window))))

    def _set_options(self, options: Options) -> None:
        if options == self.options:
            return
        self.options = options
        self.options_changed.emit(options)
        self.recompute_requested.emit(options)
