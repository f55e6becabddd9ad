"""Simulate a compaction of one request (docs/compaction.md): preview, edit, apply, export.

Strategy and its parameters, summarizer (local, or anthropic when a key or
base URL is set), before/after stacked bars, the messages kept / summarized /
dropped, the summary (editable, with its title) and the new context as the
model would receive it. The simulation runs in a ``CompactionRunner``.
``apply_requested(result)`` hands the (edited) result to the owner, which
branches the session; the dialog itself changes nothing in the window.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QStandardItemModel
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.balance import balanced
from ctxviewer.analysis.branch import estimated_request, with_summary
from ctxviewer.analysis.breakdown import Breakdown, breakdown
from ctxviewer.analysis.compaction import LABELS, STRATEGIES, CompactionResult
from ctxviewer.gui.compaction.model import CompactionMessagesModel
from ctxviewer.gui.compaction.params import ParamsForm
from ctxviewer.gui.compaction.runner import CompactionRunner, anthropic_configured
from ctxviewer.gui.compaction.text import context_text, summary_markdown
from ctxviewer.gui.widgets.context_bar import ContextBar
from ctxviewer.gui.widgets.row_views import fit_columns, rows_view

ANTHROPIC_HELP = "Set ANTHROPIC_API_KEY or ANTHROPIC_BASE_URL to summarize with the real API"


def _fmt(n: int) -> str:
    return f"{n:,}"


class CompactionDialog(QDialog):
    apply_requested = Signal(object)  # CompactionResult (with the edited summary)

    def __init__(
        self,
        analysis: Analysis,
        index: int,
        parent: QWidget | None = None,
        ask_save_path: Callable[[str, str, str], str] | None = None,
        runner: CompactionRunner | None = None,
    ) -> None:
        super().__init__(parent)
        self.analysis = analysis
        self.index = index
        self.request = analysis.session.requests[index]
        self.before_breakdown: Breakdown = analysis.breakdown(index)
        unrec = self.before_breakdown.category("unrecorded_overhead")
        self.inferred = unrec.estimated if unrec else None
        self.ask_save_path = ask_save_path or (lambda t, n, f: "")
        self.runner = runner or CompactionRunner(parent=self)
        self.result_: CompactionResult | None = None
        self.messages_model = CompactionMessagesModel(self)
        self._edit_timer = QTimer(self)
        self._edit_timer.setSingleShot(True)
        self._edit_timer.setInterval(250)
        self.setWindowTitle(f"Simulate compaction — request {index}")
        self.resize(1100, 780)
        self._build()
        self._connect()
        self.before_bar.set_breakdown(self.before_breakdown)
        self.strategy_combo.setCurrentText("qwen")
        self._on_strategy_changed()

    # -- layout -------------------------------------------------------------------
    def _build(self) -> None:
        self.strategy_combo = QComboBox(self)
        for name in STRATEGIES:
            self.strategy_combo.addItem(name)
            self.strategy_combo.setItemData(
                self.strategy_combo.count() - 1, LABELS[name], Qt.ItemDataRole.ToolTipRole
            )
        self.strategy_label = QLabel(self)
        self.summarizer_combo = QComboBox(self)
        self.summarizer_combo.addItems(["local", "anthropic"])
        if not anthropic_configured():
            item = self.summarizer_combo.model()
            assert isinstance(item, QStandardItemModel)
            item.item(1).setEnabled(False)
            self.summarizer_combo.setItemData(1, ANTHROPIC_HELP, Qt.ItemDataRole.ToolTipRole)
            self.summarizer_combo.setToolTip(ANTHROPIC_HELP)
        self.params_form = ParamsForm(self)
        self.run_button = QPushButton("Simulate", self)
        self.force_button = QPushButton("Force summary", self)
        self.force_button.setVisible(False)
        self.cancel_button = QPushButton("Cancel", self)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 0)
        self.progress.setMaximumWidth(140)
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.before_bar, self.after_bar = ContextBar(self), ContextBar(self)
        self.before_label, self.after_label = QLabel(self), QLabel(self)
        self.totals = QLabel(self)
        self.totals.setTextFormat(Qt.TextFormat.RichText)
        self.messages_view = rows_view(QTableView(self), single=False)
        self.messages_view.setModel(self.messages_model)
        self.messages_view.horizontalHeader().setStretchLastSection(True)
        self.title_edit = QLineEdit(self)
        self.summary_edit = QPlainTextEdit(self)
        self.summary_info = QLabel(self)
        self.context_view = QPlainTextEdit(self)
        self.context_view.setReadOnly(True)
        self.context_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.apply_button = QPushButton("Apply as a branch", self)
        self.apply_button.setToolTip(
            "Continue the session with the compacted request as a new "
            "last request (Tools > Back to the original session)"
        )
        self.export_md_button = QPushButton("Export Markdown…", self)
        self.export_json_button = QPushButton("Export JSON…", self)
        self.copy_button = QPushButton("Copy summary", self)
        self.close_button = QPushButton("Close", self)
        self._lay_out()

    def _lay_out(self) -> None:
        top = QFormLayout()
        row = QHBoxLayout()
        row.addWidget(self.strategy_combo)
        row.addWidget(self.strategy_label, 1)
        row.addWidget(QLabel("Summarizer:", self))
        row.addWidget(self.summarizer_combo)
        top.addRow("Strategy:", row)
        top.addRow("Parameters:", self.params_form)
        run = QHBoxLayout()
        for w in (self.run_button, self.force_button, self.progress, self.cancel_button):
            run.addWidget(w)
        run.addWidget(self.status, 1)
        bars = QFormLayout()
        bars.addRow("Before:", self.before_bar)
        bars.addRow("", self.before_label)
        bars.addRow("After:", self.after_bar)
        bars.addRow("", self.after_label)
        summary = QWidget(self)
        s = QVBoxLayout(summary)
        title_row = QHBoxLayout()
        title_row.addWidget(QLabel("Title:", summary))
        title_row.addWidget(self.title_edit, 1)
        s.addLayout(title_row)
        s.addWidget(self.summary_edit, 1)
        s.addWidget(self.summary_info)
        self.tabs = QTabWidget(self)
        self.tabs.addTab(self.messages_view, "Messages")
        self.tabs.addTab(summary, "Summary")
        self.tabs.addTab(self.context_view, "New context")
        buttons = QHBoxLayout()
        buttons.addWidget(self.apply_button)
        buttons.addStretch(1)
        for w in (
            self.export_md_button,
            self.export_json_button,
            self.copy_button,
            self.close_button,
        ):
            buttons.addWidget(w)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(run)
        layout.addLayout(bars)
        layout.addWidget(self.totals)
        layout.addWidget(self.tabs, 1)
        layout.addLayout(buttons)
        self._set_busy(False)
        self._set_result_actions(False)

    def _connect(self) -> None:
        self.strategy_combo.currentTextChanged.connect(self._on_strategy_changed)
        self.summarizer_combo.currentTextChanged.connect(self._on_summarizer_changed)
        self.params_form.changed.connect(self._on_params_changed)
        self.run_button.clicked.connect(lambda: self.simulate())
        self.force_button.clicked.connect(lambda: self.simulate(force=True))
        self.cancel_button.clicked.connect(self.runner.cancel)
        self.runner.finished.connect(self._on_runner_finished)
        self.runner.failed.connect(self._on_runner_failed)
        self.runner.cancelled.connect(self._on_runner_cancelled)
        self.runner.busy_changed.connect(self._set_busy)
        self.summary_edit.textChanged.connect(self._edit_timer.start)
        self.title_edit.textEdited.connect(self._edit_timer.start)
        self._edit_timer.timeout.connect(self._on_summary_edited)
        self.apply_button.clicked.connect(self._on_apply_clicked)
        self.export_md_button.clicked.connect(self._on_export_md_clicked)
        self.export_json_button.clicked.connect(self._on_export_json_clicked)
        self.copy_button.clicked.connect(self.copy_summary)
        self.close_button.clicked.connect(self.reject)

    # -- running ------------------------------------------------------------------
    def strategy(self) -> str:
        return self.strategy_combo.currentText()

    def summarizer(self) -> str:
        return self.summarizer_combo.currentText()

    def simulate(self, force: bool | None = None) -> None:
        """Run the strategy; an API summary is forced only when asked (breaker semantics)."""
        a = self.analysis
        if force is None:
            force = self.summarizer() == "local"
        self.force_button.setVisible(False)
        self.status.setText(
            "Summarizing with the API (streamed)…"
            if self.summarizer() == "anthropic"
            else "Simulating…"
        )
        self.runner.run(
            self.request,
            self.strategy(),
            a.estimator,
            self.before_breakdown.thresholds,
            self.params_form.params(),
            self.summarizer(),
            self.inferred,
            force,
        )

    def _auto(self) -> bool:
        return self.summarizer() == "local"

    def _on_strategy_changed(self, *_: Any) -> None:
        self.strategy_label.setText(LABELS.get(self.strategy(), ""))
        self.params_form.set_strategy(self.strategy())
        if self._auto():
            self.simulate()

    def _on_summarizer_changed(self, *_: Any) -> None:
        if self._auto():
            self.simulate()
        else:
            self.status.setText("Click Simulate to ask the API for a summary")

    def _on_params_changed(self) -> None:
        if self._auto():
            self.simulate()

    def _set_busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)
        self.run_button.setEnabled(not busy)

    def _set_result_actions(self, on: bool) -> None:
        has_summary = on and bool(self.result_ and self.result_.summary)
        self.apply_button.setEnabled(on)
        self.export_md_button.setEnabled(on)
        self.export_json_button.setEnabled(on)
        self.copy_button.setEnabled(has_summary)
        self.summary_edit.setReadOnly(not has_summary)
        self.title_edit.setReadOnly(not has_summary)

    # -- results ------------------------------------------------------------------
    def _on_runner_finished(self, r: CompactionResult) -> None:
        self.result_ = r
        self.status.setText("; ".join(r.notes))
        self.messages_model.set_result(self.request.messages, r, self.analysis.estimator)
        fit_columns(self.messages_view)
        self.summary_edit.blockSignals(True)
        self.summary_edit.setPlainText(r.summary)
        self.summary_edit.blockSignals(False)
        self.title_edit.setText(r.title)
        self._show_result(r)
        self._set_result_actions(True)

    def _show_result(self, r: CompactionResult) -> None:
        """Bars, totals, summary info and new context of ``r`` (possibly edited)."""
        b = self.before_breakdown
        # the before bar is the API's count: the after bar is projected to the same
        # scale, so the estimator's error does not show as a saving
        self.after_breakdown = balanced(
            breakdown(
                estimated_request(r, r.projected_after),
                self.analysis.estimator,
                b.window,
                b.thresholds,
                self.inferred,
            )
        )
        self.after_bar.set_breakdown(self.after_breakdown)

        def pct(n: int) -> str:
            return f"{100 * n / b.window:.1f}%" if b.window else "?"

        api = self.request.api_prompt_tokens is not None and not self.request.simulated
        src = "API count" if api else "estimate"
        self.before_label.setText(
            f"{_fmt(r.before)} tokens ({src}, {pct(r.before)} of "
            f"{_fmt(b.window)}) · local estimate {_fmt(r.before_estimate)}"
        )
        if api:
            self.after_label.setText(
                f"~{_fmt(r.projected_after)} tokens projected ({pct(r.projected_after)}): "
                f"local estimate {_fmt(r.after)} × {r.ratio:.2f}, the API/estimate ratio before"
            )
        else:
            self.after_label.setText(f"{_fmt(r.after)} tokens (estimate, {pct(r.after)})")
        saved = r.saved
        share = 100 * saved / r.before_estimate if r.before_estimate else 0.0
        self.totals.setText(
            f"<b>{_fmt(r.before_estimate)} → {_fmt(r.after)}</b> tokens (local estimates) · "
            f"saved ~{_fmt(saved)} ({share:.0f}%) · kept {len(r.kept)}, summarized "
            f"{len(r.summarized)}, dropped {len(r.dropped)}"
            + (f", slimmed {len(r.slimmed)}" if r.slimmed else "")
            + f" · {len(r.request.messages)} messages after"
        )
        info = f"{_fmt(r.summary_tokens)} tokens · {r.summarizer or 'no summary'}"
        if r.usage:
            cost = r.usage.get("cost_usd")
            info += (
                f" · {r.usage.get('model')}: {_fmt(r.usage.get('input_tokens', 0))} in, "
                f"{_fmt(r.usage.get('output_tokens', 0))} out"
                + (f" · ${cost:.4f}" if cost is not None else " · cost unknown")
            )
        self.summary_info.setText(info if r.summary else "This strategy writes no summary")
        self.context_view.setPlainText(context_text(r.request))

    def current_result(self) -> CompactionResult | None:
        """The result with the summary and title as edited."""
        r = self.result_
        if r is None or not r.summary:
            return r
        return with_summary(
            r,
            self.summary_edit.toPlainText(),
            self.title_edit.text(),
            self.analysis.estimator,
            self.inferred,
        )

    def _on_summary_edited(self) -> None:
        r = self.current_result()
        if r is not None:
            self._show_result(r)

    def _on_runner_failed(self, message: str, stopped: bool) -> None:
        text = message
        if stopped:
            text = (
                f"Automatic summaries stopped after 3 consecutive failures: {message}. "
                "Use Force summary to try once more."
            )
        self.status.setText(f"<span style='color:#d03b3b'>{text}</span>")
        self.force_button.setVisible(self.summarizer() == "anthropic")

    def _on_runner_cancelled(self) -> None:
        self.status.setText("Cancelled")

    # -- actions ------------------------------------------------------------------
    def _on_apply_clicked(self) -> None:
        r = self.current_result()
        if r is not None:
            self.apply_requested.emit(r)
            self.accept()

    def _save(self, title: str, suffix: str, filter_: str, text: str) -> str:
        r = self.current_result()
        if r is None:
            return ""
        path = self.ask_save_path(
            title, f"compaction-{r.strategy}-request{self.index}.{suffix}", filter_
        )
        if path:
            try:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
            except OSError as e:
                self.status.setText(f"cannot write {path}: {e.strerror or e}")
                return ""
            self.status.setText(f"Saved {path}")
        return path

    def _on_export_md_clicked(self) -> None:
        r = self.current_result()
        if r is not None:
            self._save("Export summary as Markdown", "md", "Markdown (*.md)", summary_markdown(r))

    def _on_export_json_clicked(self) -> None:
        r = self.current_result()
        if r is not None:
            self._save(
                "Export compaction as JSON",
                "json",
                "JSON (*.json)",
                json.dumps(r.as_json(), indent=2, ensure_ascii=False) + "\n",
            )

    def copy_summary(self) -> None:
        QGuiApplication.clipboard().setText(self.summary_edit.toPlainText())
        self.status.setText("Summary copied to the clipboard")

    def done(self, code: int) -> None:
        self.runner.cancel()
        super().done(code)
