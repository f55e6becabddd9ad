"""The stacked bar with its headline, legend (tokens and percent) and notes."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QGridLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from ctxviewer.analysis.breakdown import Breakdown
from ctxviewer.fmt import fmt_tokens as _fmt
from ctxviewer.gui.widgets.context_bar import ContextBar, shown_categories
from ctxviewer.gui.widgets.notes_line import NotesLine
from ctxviewer.gui.widgets.palette import category_color, is_dark

MAX_LEGEND_COLUMNS = 4


class BarPanel(QWidget):
    category_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._breakdown: Breakdown | None = None
        self.headline = QLabel("No session", self)
        self.headline.setTextFormat(Qt.TextFormat.RichText)
        self.headline.setWordWrap(True)  # never widens the window
        self.bar = ContextBar(self)
        self.bar.category_clicked.connect(self.category_clicked)
        self.legend = QWidget(self)
        # its columns fit the width it gets (``_arrange``), never the other way: laid out
        # for a wide centre, they held the window's panes from giving the centre back
        self.legend.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._grid = QGridLayout(self.legend)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setHorizontalSpacing(10)
        small = self.legend.font()
        small.setPointSizeF(max(7.0, small.pointSizeF() * 0.92))
        self.legend.setFont(small)
        self._grid.setVerticalSpacing(2)
        self.legend_labels: list[QLabel] = []
        self.notes = NotesLine(self)  # one line, the rest on demand (small screens)
        self.differences = QLabel(self)  # where the agent's /context and the wire differ
        self.differences.setWordWrap(True)
        self.differences.setTextFormat(Qt.TextFormat.RichText)
        self.differences.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._columns = 0
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(5)
        for w in (self.headline, self.bar, self.legend, self.differences, self.notes):
            layout.addWidget(w)

    def set_breakdown(self, b: Breakdown | None, heading: str = "") -> None:
        self._breakdown = b
        self.bar.set_breakdown(b)
        self.headline.setText(self._headline(b, heading))
        notes = self._notes(b)
        self.notes.set_notes(notes, "\n".join([*notes, *(b.source_notes if b is not None else ())]))
        self.differences.setText(self._differences(b))
        self.differences.setToolTip(
            "\n".join(f"{d.what}: {d.note}" for d in b.differences) if b is not None else ""
        )
        self.differences.setVisible(bool(self.differences.text()))
        self._fill_legend()

    @staticmethod
    def _differences(b: Breakdown | None) -> str:
        """One line per difference: the number shown first, the other view's in brackets."""
        if b is None or not b.differences:
            return ""
        shown, other = ("agent", "wire") if b.counts == "agent" else ("wire", "agent")
        head = (
            "Counted as the agent's /context does; on the wire:"
            if b.counts == "agent"
            else "Counted as sent; the agent's /context:"
        )
        rows = [
            f"{_keep(d.what)} <b>{_fmt(getattr(d, shown))}</b> "
            f"({_keep(f'{other} {_fmt(getattr(d, other))}')})"
            for d in b.differences
        ]
        return f"<i>{head}</i> " + " &nbsp;·&nbsp; ".join(rows)

    @staticmethod
    def _headline(b: Breakdown | None, heading: str) -> str:
        if b is None:
            return "No request selected"
        head = f"<b>{_keep(heading)}</b> &nbsp;·&nbsp; " if heading else ""
        if b.failure:
            head += (
                f"<b>Failed call</b>: {escape(b.failure[:160])} &nbsp;·&nbsp; "
                "the model never read this prompt"
            )
            if b.mode == "A":
                return head
            head += " &nbsp;·&nbsp; "
        if b.mode == "A":
            return (
                f"{head}No API usage: estimated overhead only "
                f"{_keep(f'(~{b.used:,} tokens, {b.estimator})')}"
            )
        used = _keep(f"<b>{b.used:,}</b> / {b.window:,} tokens (<b>{b.percent(b.used):.1f}%</b>)")
        if b.total_basis == "estimate":
            used = _keep(
                f"<b>~{b.used:,}</b> / {b.window:,} tokens "
                f"(<b>{b.percent(b.used):.1f}%</b>, estimated: no API usage)"
            )
        elif b.total_basis == "overflow":
            used += " " + _keep("(as its overflow error states)")
        if b.simulated:
            head += (
                "<b>Simulated compaction</b> (a local estimate, not an API count) &nbsp;·&nbsp; "
            )
        return f"{head}{used} &nbsp;·&nbsp; {_keep(f'auto-compaction at {b.thresholds.auto:,}')}"

    @staticmethod
    def _notes(b: Breakdown | None) -> list[str]:
        if b is None:
            return []
        notes = [f"Note: {n}" for n in b.notes]
        msgs = b.category("messages")
        if msgs is not None and msgs.note:
            notes.append(f"Messages: {msgs.note}")
        att = b.attribution  # for transcripts, whose Messages hold what the log does not
        if att and not b.complete and (att["attributed_exact"] or att["unattributed"]):
            notes.append(
                f"Prompt: {att['attributed_exact']:,} exact growth, "
                f"{att['estimated']:,} estimated, "
                f"{att['unattributed']:,} unattributed"
            )
        return notes

    def _fill_legend(self) -> None:
        """Show the categories in the legend, reusing its labels: deleting and
        re-creating them re-lays out the whole window once per label."""
        b = self._breakdown
        entries = shown_categories(b) if b is not None else []
        while len(self.legend_labels) > len(entries):
            old = self.legend_labels.pop()
            self._grid.removeWidget(old)
            old.deleteLater()
            self._columns = 0  # the rows change
        while len(self.legend_labels) < len(entries):
            lab = QLabel(self.legend)
            lab.setTextFormat(Qt.TextFormat.RichText)
            lab.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
            self.legend_labels.append(lab)
            self._columns = 0  # place the new label
        if b is None:
            return
        dark = is_dark(self.palette())
        for lab, (name, label, tokens) in zip(self.legend_labels, entries, strict=False):
            swatch = category_color(name, dark).name()
            text = (
                f"<span style='color:{swatch}; font-size:large'>■</span>&nbsp;{label}"
                f"&nbsp; <b>{_fmt(tokens)}</b>&nbsp;<span>({b.percent(tokens):.1f}%)</span>"
            )
            if lab.text() != text:
                lab.setText(text)
            lab.setToolTip(f"{label}: {tokens:,} tokens, {b.percent(tokens):.2f}% of the window")
            lab.setProperty("category", name)
        self._arrange()

    def _arrange(self) -> None:
        columns, widths = self._fitting_columns()
        if columns != self._columns:
            self._columns = columns
            rows = -(-len(self.legend_labels) // columns)
            for i, lab in enumerate(
                self.legend_labels
            ):  # down the columns, in the breakdown's order
                self._grid.removeWidget(lab)
                self._grid.addWidget(lab, i % rows, i // rows)
        for c in range(MAX_LEGEND_COLUMNS + 1):  # columns as wide as their entries
            self._grid.setColumnMinimumWidth(c, widths[c] if c < len(widths) else 0)
            self._grid.setColumnStretch(c, 1 if c == columns else 0)

    def _fitting_columns(self) -> tuple[int, list[int]]:
        """The most legend columns (up to 4) whose entries fit side by side, and their widths."""
        hints = [lab.sizeHint().width() for lab in self.legend_labels]
        spacing = self._grid.horizontalSpacing()
        available = self.width() - 4  # the layout's margins
        for columns in range(MAX_LEGEND_COLUMNS, 0, -1):
            rows = -(-len(hints) // columns) or 1
            widths = [max(hints[c * rows : (c + 1) * rows], default=0) for c in range(columns)]
            if sum(widths) + spacing * (columns - 1) <= available or columns == 1:
                return columns, widths
        return 1, []

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._arrange()


def _keep(text: str) -> str:
    """Rich text that wraps only between phrases, not inside one."""
    return text.replace(" ", "&nbsp;")
