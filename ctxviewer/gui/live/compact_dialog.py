"""Compact a live conversation through the proxy: pick, preview, apply, undo.

The proxy was started with rewriting allowed (the proxy dialog's opt-in); its
``Rewriter`` (``ctxviewer.proxy.rewrite``, thread-safe) knows each
conversation that went through it. This dialog asks it for a ``Plan`` on the
conversation's last request and shows what the next request would look like:
the items that go and come, the tokens before and after, and what the one
cache write the change causes costs. Apply installs the rule (every later
request of that conversation carries the summary instead of the history it
replaces); Undo stops rewriting that conversation for good.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ctxviewer.fmt import plural, short_text

if TYPE_CHECKING:
    from ctxviewer.analysis.pricing import PriceTable
    from ctxviewer.proxy.rewrite import Rewriter
    from ctxviewer.proxy.rewrite_plan import Plan

STRATEGIES = {
    "qwen": "qwen: summarize the older history, keep the recent 30%",
    "shannon": "shannon: keep the first and the recent messages, summarize the middle",
    "trim": "trim: drop the oldest rounds down to the budget",
    "slim": "slim: shorten the tool results sent so far",
    "prune": "prune: only drop the tools checked below",
}


def _text(content: Any) -> str:
    """The readable text of a message's content (Anthropic blocks, OpenAI parts)."""
    if not isinstance(content, list):
        return "" if content is None else str(content)
    parts = []
    for c in content:
        if not isinstance(c, dict):
            parts.append(str(c))
        elif c.get("type") == "tool_use":
            parts.append(f"[tool_use {c.get('name', '')}]")
        elif c.get("type") == "tool_result":
            parts.append(f"[tool_result] {_text(c.get('content'))}")
        else:
            parts.append(str(c.get("text", c.get("type", ""))))
    return " ".join(parts)


def item_line(sign: str, item: dict[str, Any]) -> str:
    """One history item as a diff line: its role or type, its size as sent, and the start
    of its text."""
    what = item.get("role") or item.get("type") or "item"
    content = item.get("content", item.get("output", item.get("arguments", "")))
    if item.get("tool_calls"):
        content = f"{_text(content)} [tool_calls]"
    size = len(orjson.dumps(item))
    return f"{sign} {what} ({size:,} bytes): {short_text(_text(content), 100)}"


def cache_write_text(plan: Plan, prices: PriceTable | None) -> str:
    """What the one cache write after the change costs, at the model's prices."""
    model = plan.body.get("model") if isinstance(plan.body, dict) else None
    price = prices.lookup(str(model)) if prices is not None and model else None
    if price is None:
        return f"one cache write of ~{plan.tokens_after:,} tokens (no price for {model or '?'})"
    write = plan.tokens_after * price.cache_write_5m / 1e6
    read = plan.tokens_after * price.cache_read / 1e6
    return (
        f"one cache write of ~{plan.tokens_after:,} tokens: ${write:.4f} "
        f"(a cached request would have read them for ${read:.4f})"
    )


class LiveCompactDialog(QDialog):
    def __init__(
        self, rewriter: Rewriter, prices: PriceTable | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Compact a live conversation")
        self.rewriter = rewriter
        self.prices = prices
        self.plan: Plan | None = None
        self.conversation = QComboBox(self)
        self.refresh_button = QPushButton("Refresh", self)
        self.refresh_button.clicked.connect(self.refresh)
        row = QHBoxLayout()
        row.addWidget(self.conversation, 1)
        row.addWidget(self.refresh_button)
        self.strategy = QComboBox(self)
        for name, label in STRATEGIES.items():
            self.strategy.addItem(label, name)
        form = QFormLayout()
        form.addRow("Conversation:", row)
        form.addRow("Strategy:", self.strategy)
        self.tools = QListWidget(self)  # checkable: tool definitions to drop as well
        self.tools.setMaximumHeight(self.fontMetrics().lineSpacing() * 5 + 8)
        self.tools.setToolTip(
            "Checked tools are removed from the requests' tool list "
            "(with any strategy; alone with prune)"
        )
        self.tools.itemChanged.connect(self._on_changed)
        form.addRow("Drop tools:", self.tools)
        self.summary = QLabel("Pick a conversation and preview its next request.", self)
        self.summary.setWordWrap(True)
        self.diff = QPlainTextEdit(self)
        self.diff.setReadOnly(True)
        self.diff.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.diff.setPlaceholderText("What goes (-) and what comes (+) in the next request")
        self.buttons = QDialogButtonBox(self)
        self.preview_button = self.buttons.addButton(
            "Preview", QDialogButtonBox.ButtonRole.ActionRole
        )
        self.apply_button = self.buttons.addButton("Apply", QDialogButtonBox.ButtonRole.ActionRole)
        self.undo_button = self.buttons.addButton("Undo", QDialogButtonBox.ButtonRole.ActionRole)
        close = self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.preview_button.clicked.connect(self.preview)
        self.apply_button.clicked.connect(self.apply)
        self.undo_button.clicked.connect(self.undo)
        close.clicked.connect(self.reject)
        self.conversation.currentIndexChanged.connect(self._fill_tools)
        self.conversation.currentIndexChanged.connect(self._on_changed)
        self.strategy.currentIndexChanged.connect(self._on_changed)
        box = QVBoxLayout(self)
        box.addLayout(form)
        box.addWidget(self.summary)
        box.addWidget(self.diff, 1)
        box.addWidget(self.buttons)
        self.resize(760, 480)
        self.refresh()

    def key(self) -> str | None:
        data = self.conversation.currentData()
        return data if isinstance(data, str) else None

    def dropped(self) -> list[str]:
        """The tools checked to be dropped."""
        return [
            self.tools.item(i).text()
            for i in range(self.tools.count())
            if self.tools.item(i).checkState() == Qt.CheckState.Checked
        ]

    def _fill_tools(self) -> None:
        key = self.key()
        checked = set(self.dropped())
        self.tools.blockSignals(True)
        self.tools.clear()
        for name in self.rewriter.tool_names(key) if key else []:
            item = QListWidgetItem(name, self.tools)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(
                Qt.CheckState.Checked if name in checked else Qt.CheckState.Unchecked
            )
        self.tools.blockSignals(False)

    def refresh(self) -> None:
        """List the conversations the proxy has seen (with their rule, if any)."""
        current = self.key()
        self.conversation.blockSignals(True)
        self.conversation.clear()
        for c in self.rewriter.conversations():
            state = (
                f"rewriting: {c['rule']}"
                if c["rule"]
                else f"off ({c['off']})"
                if c["off"]
                else "as sent"
            )
            self.conversation.addItem(
                f"{c['conversation']} · {c['api']} · {plural(c['requests'], 'request')} · {state}",
                c["conversation"],
            )
        index = self.conversation.findData(current) if current else -1
        self.conversation.setCurrentIndex(max(index, 0) if self.conversation.count() else -1)
        self.conversation.blockSignals(False)
        self._fill_tools()
        if not self.conversation.count():
            self.summary.setText(
                "No conversation has gone through the proxy yet: point an "
                "agent at it, then Refresh."
            )
        self._on_changed()

    def preview(self) -> Plan | None:
        """Ask the proxy's rewriter what the strategy would do to the next request."""
        from ctxviewer.proxy.rewrite_plan import CannotRewrite

        key = self.key()
        self.plan = None
        if key is None:
            return None
        try:
            plan = self.rewriter.preview(
                key, str(self.strategy.currentData()), drop_tools=tuple(self.dropped())
            )
        except CannotRewrite as e:
            self.summary.setText(f"<span style='color:#d03b3b'>Cannot compact: {e}</span>")
            self.diff.clear()
            self._enable()
            return None
        self.plan = plan
        basis = "from the API's last count" if plan.calibrated else "local estimate"
        share = plan.saved / plan.tokens_before if plan.tokens_before else 0.0
        self.summary.setText(
            f"Next request: <b>~{plan.tokens_before:,} → ~{plan.tokens_after:,}</b> tokens "
            f"({basis}), saves ~{plan.saved:,} ({share:.0%}) · {plural(len(plan.removed), 'item')}"
            f" go, {plural(len(plan.added), 'item')} come · "
            f"{cache_write_text(plan, self.prices)}. Rule: {plan.rule.describe()}"
            + (f"<br>{'; '.join(plan.notes)}" if plan.notes else "")
        )
        self.diff.setPlainText(
            "\n".join(
                [
                    *(item_line("-", i) for i in plan.removed),
                    *(item_line("+", i) for i in plan.added),
                ]
            )
        )
        self._enable()
        return plan

    def apply(self) -> None:
        """Install the previewed rule: the conversation's next requests carry the summary."""
        if self.plan is None:
            return
        self.rewriter.commit(self.plan)
        self.summary.setText(
            f"Rewriting on: {self.plan.rule.describe()}. The agent's next "
            "request goes upstream compacted; Undo stops it."
        )
        self.plan = None
        self.refresh_keep_text()

    def undo(self) -> None:
        key = self.key()
        if key is None:
            return
        self.rewriter.undo(key)
        self.plan = None
        self.summary.setText("Rewriting undone: the conversation's requests go as sent.")
        self.refresh_keep_text()

    def refresh_keep_text(self) -> None:
        text = self.summary.text()
        self.refresh()
        self.summary.setText(text)

    def _on_changed(self) -> None:
        self.plan = None
        self.diff.clear()
        self._enable()

    def _enable(self) -> None:
        key = self.key()
        rule = self.rewriter.rule(key) if key else None
        self.preview_button.setEnabled(key is not None)
        self.apply_button.setEnabled(self.plan is not None)
        self.undo_button.setEnabled(rule is not None)
