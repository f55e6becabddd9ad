"""The analysis panels of the main window: the Compare tab and compaction simulation.

``install(host)`` adds the Compare tab, a Tools menu with "Simulate
compaction…" (Ctrl+K, also on the context bar's context menu) and "Back to
the original session". Applying a compaction loads a *branch* (the session up
to the request, plus the compacted request) as the window's session; the
original stays here so the user can go back. A newly opened file forgets it.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.branch import compacted_branch
from ctxviewer.analysis.compaction import CompactionResult
from ctxviewer.gui.compaction.dialog import CompactionDialog
from ctxviewer.gui.compaction.runner import CompactionRunner
from ctxviewer.gui.compare.controller import CompareController
from ctxviewer.gui.host import PanelHost
from ctxviewer.model import Session


def tools_menu(host: PanelHost) -> QMenu:
    """The window's Tools menu, created (before Help, if any) when missing."""
    return host.menu("&Tools", before="Help")


class AnalysisPanels(QObject):
    def __init__(self, host: PanelHost) -> None:
        super().__init__(host.window())
        self.host = host
        self.state = host.state
        self.compare = CompareController(host)
        self.runner = CompactionRunner(parent=self)  # one API summarizer for the window
        self.dialog: CompactionDialog | None = None
        self.original: Session | None = None  # set while a branch is shown
        self.branches: list[Session] = []
        self.compact_action = QAction("Simulate &compaction…", host.window())
        self.compact_action.setShortcut(QKeySequence("Ctrl+K"))
        self.back_action = QAction("&Back to the original session", host.window())
        menu = tools_menu(host)
        menu.addAction(self.compact_action)
        menu.addAction(self.back_action)
        host.add_action(self.compact_action)
        host.add_context_bar_action(self.compact_action)  # its right-click menu
        self.compact_action.triggered.connect(self.open_compaction)
        self.back_action.triggered.connect(self.back_to_original)
        self.state.session_loaded.connect(self._on_state_session_loaded)
        host.add_quit_concern(self.quit_concern)
        host.add_request_action("Simulate compaction of this request…", self._compact_request)
        self._update_actions()

    def quit_concern(self) -> str | None:
        """A simulated compaction applied as a branch is lost when the window closes."""
        if self.original is None:
            return None
        return (
            "A simulated compaction is applied (the window shows a branch of the "
            "session): it is not saved anywhere and is lost when the window closes."
        )

    # -- compaction ---------------------------------------------------------------
    def _compact_request(self, index: int) -> None:
        """The request list's right-click: that request, then the dialog."""
        self.host.select_request(index)
        self.open_compaction()

    def open_compaction(self) -> CompactionDialog | None:
        a, i = self.state.analysis, self.state.index
        if a is None or i is None:
            return None
        if self.dialog is not None:
            self.dialog.close()
        self.dialog = CompactionDialog(
            a, i, self.host.window(), ask_save_path=self.host.ask_save_path, runner=self.runner
        )
        self.dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.dialog.apply_requested.connect(self.apply)
        self.dialog.destroyed.connect(self._on_dialog_destroyed)
        self.dialog.show()
        return self.dialog

    def _on_dialog_destroyed(self, *_: Any) -> None:
        self.dialog = None

    def apply(self, result: CompactionResult) -> None:
        """Show the session continued by ``result`` (a branch) in the whole window."""
        session = self.state.session
        if session is None:
            return
        branch = compacted_branch(session, result)
        if self.original is None:
            self.original = session
        self.branches.append(branch)
        self._show(branch)
        self.host.show_message(
            f"Compacted branch ({result.strategy}): request {len(branch.requests) - 1} is "
            f"request {result.request.index} compacted, {result.after:,} tokens (estimate)",
            8000,
        )

    def back_to_original(self) -> None:
        if self.original is not None:
            original, self.original = self.original, None
            self.branches.clear()
            self._show(original)

    def _show(self, session: Session) -> None:
        self.host.show_session_views()  # the dialog may have been opened over the library
        self.state.set_session_analysis(self.state.options.analysis(session))

    def _on_state_session_loaded(self, a: Analysis) -> None:
        s = a.session
        if s is not self.original and not any(s is b for b in self.branches):
            self.original = None  # a new file: no branch to come back from
            self.branches.clear()
        self._update_actions()

    def _update_actions(self) -> None:
        self.back_action.setEnabled(self.original is not None)
        self.compact_action.setEnabled(
            self.state.session is not None and bool(self.state.session.requests)
        )


def install(host: PanelHost) -> AnalysisPanels:
    return AnalysisPanels(host)
