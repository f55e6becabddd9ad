"""Toolbar controls: estimator, threshold policy, context window override, counts.

Passive: ``set_options`` shows the current options without echoing them
back; user changes are reported as ``estimator_chosen``, ``policy_chosen``,
``window_chosen`` (0 = the window the agent uses) and ``counts_chosen``
("agent": as the agent's own /context counts; "wire": as sent).
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import QComboBox, QLabel, QToolBar, QWidget

from ctxviewer.analysis.thresholds import POLICIES, POLICY_LABELS
from ctxviewer.analysis.tokens.estimators import get_estimator, names
from ctxviewer.gui.app_state import Options
from ctxviewer.gui.session.window_spin import WindowSpinBox


class ControlsToolBar(QToolBar):
    estimator_chosen = Signal(str)
    policy_chosen = Signal(str)
    window_chosen = Signal(int)
    counts_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Analysis", parent)
        self.setObjectName("analysis_toolbar")
        self.setMovable(False)
        self.estimator_combo = QComboBox(self)
        for name in names():
            self.estimator_combo.addItem(name, name)
            i = self.estimator_combo.count() - 1
            self.estimator_combo.setItemData(
                i, get_estimator(name).label, Qt.ItemDataRole.ToolTipRole
            )
        self.estimator_combo.setToolTip("Token estimator for every local count")
        self.policy_combo = QComboBox(self)
        for policy in POLICIES:
            self.policy_combo.addItem(POLICY_LABELS[policy], policy)
        self.policy_combo.setToolTip("Compaction threshold policy")
        self.window_spin = WindowSpinBox(self)
        self.counts_combo = QComboBox(self)
        self.counts_combo.addItem("as the agent sees it", "agent")
        self.counts_combo.addItem("on the wire", "wire")
        self.counts_combo.setToolTip(
            "Count categories as the agent's own /context does, or as "
            "what was sent; the breakdown lists where the two differ"
        )
        for text, widget in (
            ("Estimator ", self.estimator_combo),
            ("  Policy ", self.policy_combo),
            ("  Window ", self.window_spin),
            ("  Counts ", self.counts_combo),
        ):
            self.addWidget(QLabel(text, self))
            self.addWidget(widget)
        self.estimator_combo.currentIndexChanged.connect(self._on_estimator_combo_changed)
        self.policy_combo.currentIndexChanged.connect(self._on_policy_combo_changed)
        self.window_spin.valueChanged.connect(self.window_chosen)
        self.counts_combo.currentIndexChanged.connect(
            lambda i: self.counts_chosen.emit(self.counts_combo.itemData(i))
        )

    def set_agent(self, agent: str, policy: str) -> None:
        """Name the agent's own policy in the policy list (e.g. "Claude Code's own")."""
        i = self.policy_combo.findData("agent")
        self.policy_combo.setItemText(i, f"{agent}'s own")
        self.policy_combo.setItemData(i, policy, Qt.ItemDataRole.ToolTipRole)

    def set_options(self, options: Options) -> None:
        with (
            QSignalBlocker(self.estimator_combo),
            QSignalBlocker(self.policy_combo),
            QSignalBlocker(self.window_spin),
            QSignalBlocker(self.counts_combo),
        ):
            self.counts_combo.setCurrentIndex(self.counts_combo.findData(options.counts))
            self.estimator_combo.setCurrentIndex(self.estimator_combo.findData(options.estimator))
            self.policy_combo.setCurrentIndex(self.policy_combo.findData(options.policy))
            self.window_spin.setValue(options.window)

    def _on_estimator_combo_changed(self, i: int) -> None:
        self.estimator_chosen.emit(self.estimator_combo.itemData(i))

    def _on_policy_combo_changed(self, i: int) -> None:
        self.policy_chosen.emit(self.policy_combo.itemData(i))
