"""Connects the Compare tab to the window: ``AppState`` in, a ``CompareRunner`` below.

The comparison is computed when the session changes and the tab is shown
(lazily: a hidden tab costs nothing), the category table when the selected
request changes; choosing an estimator in the tab sets the window's.
"""

from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import QObject

from ctxviewer.analysis.compare.scoring import Comparison, write_csv
from ctxviewer.analysis.tokens.registry import ANTHROPIC, default_names, remote_available
from ctxviewer.gui.compare.runner import CompareRunner
from ctxviewer.gui.compare.tab import CompareTab
from ctxviewer.gui.host import PanelHost


class CompareController(QObject):
    def __init__(self, host: PanelHost) -> None:
        super().__init__(host.window())
        self.host = host
        self.state = host.state
        self.tab = CompareTab(host.window(), anthropic=remote_available())
        self.runner = CompareRunner(parent=self)
        self.use_anthropic = False
        self._dirty = True
        host.add_tab(self.tab, "Compare")
        self.tab.set_current_estimator(self.state.options.estimator)
        self._connect()
        if self.state.session is not None:
            self._refresh()

    def names(self) -> list[str]:
        return [*default_names(), *([ANTHROPIC] if self.use_anthropic else [])]

    def _connect(self) -> None:
        s, t, r = self.state, self.tab, self.runner
        s.session_loaded.connect(self._on_state_session_loaded)
        s.request_changed.connect(self._on_state_request_changed)
        s.options_changed.connect(self._on_state_options_changed)
        self.host.tab_changed.connect(self._on_tabs_current_changed)
        t.estimator_chosen.connect(s.set_estimator)
        t.request_chosen.connect(s.select_request)
        t.anthropic_toggled.connect(self._on_tab_anthropic_toggled)
        t.recompute_clicked.connect(self._run)
        t.cancel_clicked.connect(r.cancel)
        t.export_clicked.connect(self._on_tab_export_clicked)
        r.finished.connect(self._on_runner_finished)
        r.table_ready.connect(t.set_table)
        r.progressed.connect(t.set_progress)
        r.failed.connect(self._on_runner_failed)
        r.cancelled.connect(self._on_runner_cancelled)

    def shown(self) -> bool:
        return self.host.current_tab() is self.tab

    def _refresh(self) -> None:
        if not (self.shown() and self._dirty):
            return
        if self.state.loading:  # a first part: the whole file comes in a moment
            self.tab.set_message("Waiting for the whole file…")
        else:
            self._run()

    def _run(self) -> None:
        if self.state.session is None:
            return
        self._dirty = False
        self.tab.set_busy(True, "Counting with the API…" if self.use_anthropic else "")
        self.runner.run(self.state.session, self.names(), self.state.index)

    # -- state -> tab ---------------------------------------------------------------
    def _on_state_session_loaded(self, _a: object) -> None:
        self._dirty = True
        self.runner.cancel()
        self.tab.set_comparison(None)
        self.tab.set_table(None)
        self._refresh()

    def _on_state_request_changed(self, index: int) -> None:
        self.tab.set_current_request(index)
        self.runner.table(index)

    def _on_state_options_changed(self, options: Any) -> None:
        self.tab.set_current_estimator(options.estimator)

    def _on_tabs_current_changed(self, _i: int) -> None:
        self._refresh()

    def _on_tab_anthropic_toggled(self, on: bool) -> None:
        self.use_anthropic = on
        self._dirty = True
        self._refresh()

    # -- runner -> tab ---------------------------------------------------------------
    def _on_runner_finished(self, c: Comparison) -> None:
        self.tab.set_busy(False)
        self.tab.set_comparison(c)
        if self.state.index is not None:
            self.tab.set_current_request(self.state.index)
            self.runner.table(self.state.index)

    def _on_runner_failed(self, reason: str) -> None:
        self.tab.set_busy(False)
        self.tab.set_message(f"Comparison failed: {reason}")
        self._dirty = True

    def _on_runner_cancelled(self) -> None:
        self.tab.set_busy(False)
        self.tab.set_message("Comparison cancelled (Recompute to start again)")
        self._dirty = True

    def _on_tab_export_clicked(self) -> None:
        c = self.runner.comparison
        if c is None:
            return
        session = self.state.session
        shown = session.path if session is not None else None
        base = os.path.splitext(os.path.basename(shown or "session"))[0]
        path = self.host.ask_save_path(
            "Export comparison as CSV", f"{base}-compare.csv", "CSV (*.csv)"
        )
        if not path:
            return
        try:
            with open(path, "w", newline="", encoding="utf-8") as f:
                write_csv(c, f)
        except OSError as e:
            self.host.show_error("Export failed", f"cannot write {path}: {e.strerror or e}")
        else:
            self.host.show_message(f"Saved {path}", 5000)
