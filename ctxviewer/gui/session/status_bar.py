"""Status bar: what is open (file, format, requests, model, window, estimator),
the skipped-records button, and the load progress with its Cancel button."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton, QSizePolicy, QStatusBar, QWidget

from ctxviewer.fmt import plural

if TYPE_CHECKING:
    from ctxviewer.analysis.analysis import Analysis


def _elide(text: str, n: int = 48) -> str:
    return text if len(text) <= n else text[: n // 2 - 1] + "…" + text[-(n // 2) :]


class SessionStatusBar(QStatusBar):
    cancel_clicked = Signal()
    skipped_clicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.info = QLabel("No session", self)
        self.info.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.info.installEventFilter(self)  # elide its text to the width it gets
        self._info_text = "No session"
        self.skipped_button = QPushButton("0 skipped", self)
        self.skipped_button.setFlat(True)
        self.skipped_button.setToolTip("Records the reader could not use: click for the list")
        self.skipped_button.setEnabled(False)
        self.skipped_button.clicked.connect(self.skipped_clicked)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 1000)
        self.progress.setMaximumWidth(180)
        self.progress.setTextVisible(False)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.clicked.connect(self.cancel_clicked)
        self.addWidget(self.info, 1)
        self.addPermanentWidget(self.progress)
        self.addPermanentWidget(self.cancel_button)
        self.addPermanentWidget(self.skipped_button)
        self.hide_progress()

    def set_analysis(self, a: Analysis | None) -> None:
        if a is None:
            self._set_info("No session")
            return
        s = a.session
        name = os.path.basename(s.path) if s.path else "(unsaved)"
        parts = [
            _elide(name),
            s.format,
            a.identity.label,
            plural(len(s.requests), "request"),
            s.model or "model ?",
            f"window {a.window:,} ({a.window_source})",
            f"policy: {a.policy_label} ({a.policy_source})",
            f"estimator {a.estimator_name}",
        ]
        note = a.identity.rules_note
        if note:
            parts.insert(7, note)  # after the window and policy it concerns
        self._set_info("  ·  ".join(parts))
        tip = [
            s.path or "",
            s.format,
            f"agent: {a.identity.label}, recognised by {a.identity.evidence}",
            f"window {a.window:,} from the {a.window_source}: {a.window_info.detail}",
            f"policy {a.policy_label} (from the {a.policy_source})",
            f"estimator {a.estimator_name}",
        ]
        if note:
            tip.insert(5, note)
        self.info.setToolTip("\n".join(tip))
        count = len(s.skipped)
        self.skipped_button.setText(f"{count:,} skipped")
        self.skipped_button.setEnabled(count > 0)

    def show_session_parts(self, on: bool) -> None:
        """Show or hide what the bar says of the session (the library page hides it; its
        messages and the panels' indicators stay)."""
        self.info.setVisible(on)
        self.skipped_button.setVisible(on)
        if on:
            self.hideOrShow()  # a message shown now keeps its place until it ends

    def info_text(self) -> str:
        """The whole status text (the label may show it elided)."""
        return self._info_text

    def _set_info(self, text: str) -> None:
        self._info_text = text
        self._elide_info()

    def _elide_info(self) -> None:
        width = max(self.info.width(), 20)
        self.info.setText(
            self.info.fontMetrics().elidedText(self._info_text, Qt.TextElideMode.ElideRight, width)
        )

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.info and event.type() == QEvent.Type.Resize:
            self._elide_info()
        return super().eventFilter(watched, event)

    def show_progress(self, permille: int | None, cancellable: bool = True) -> None:
        """``permille`` of the work done; ``None`` for work of unknown length."""
        if permille is None:
            self.progress.setRange(0, 0)
        else:
            self.progress.setRange(0, 1000)
            self.progress.setValue(permille)
        self.progress.show()
        self.cancel_button.setVisible(cancellable)

    def hide_progress(self) -> None:
        self.progress.hide()
        self.cancel_button.hide()
