"""The stacked bar of a breakdown: one coloured segment per category.

Mode B (API usage known): the bar is the whole context window and every
category of the breakdown is a segment. Mode A (no usage): only the
estimated overhead is known, so the bar shows the overhead categories
scaled to their sum, with no free space (there is no total to measure
against). ``segments`` exposes (name, tokens, rect) for tests and tooltips;
clicking a segment emits ``category_clicked(name)``.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QHelpEvent,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPen,
)
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from ctxviewer.analysis.breakdown import SPACE, Breakdown
from ctxviewer.fmt import fmt_tokens as _fmt
from ctxviewer.gui.widgets.palette import category_color, is_dark, text_on

RADIUS = 5.0


@dataclass(frozen=True)
class Segment:
    """One coloured segment of the context bar."""

    name: str
    label: str
    tokens: int
    rect: QRectF


def shown_categories(b: Breakdown) -> list[tuple[str, str, int]]:
    """(name, label, tokens) of the categories the bar draws for ``b``."""
    cats = b.categories if b.mode == "B" else [c for c in b.categories if c.name not in SPACE]
    return [(c.name, c.label, c.tokens) for c in cats]


class ContextBar(QWidget):
    category_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._breakdown: Breakdown | None = None
        self.segments: list[Segment] = []
        self.setMouseTracking(True)
        self.setMinimumHeight(26)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setCursor(Qt.CursorShape.PointingHandCursor)

    def sizeHint(self) -> QSize:
        return QSize(600, 30)

    def set_breakdown(self, b: Breakdown | None) -> None:
        self._breakdown = b
        self._layout_segments()
        self.update()

    # -- geometry -----------------------------------------------------------------
    def _bar_rect(self) -> QRectF:
        return QRectF(self.rect()).adjusted(1, 1, -1, -1)

    def _layout_segments(self) -> None:
        self.segments = []
        b = self._breakdown
        if b is None:
            return
        if b.failure and b.mode == "A":  # a failed call of no known size: no segments
            return
        cats = shown_categories(b)
        scale = b.window if b.mode == "B" else sum(t for _, _, t in cats)
        bar = self._bar_rect()
        x = bar.left()
        for name, label, tokens in cats:
            w = bar.width() * tokens / scale if scale else 0.0
            self.segments.append(
                Segment(name, label, tokens, QRectF(x, bar.top(), w, bar.height()))
            )
            x += w

    def resizeEvent(self, event: object) -> None:
        self._layout_segments()
        super().resizeEvent(event)  # type: ignore[arg-type]

    def segment_at(self, pos: QPointF) -> Segment | None:
        return next((s for s in self.segments if s.rect.width() > 0 and s.rect.contains(pos)), None)

    # -- painting -----------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        dark = is_dark(self.palette())
        bar = self._bar_rect()
        clip = QPainterPath()
        clip.addRoundedRect(bar, RADIUS, RADIUS)
        p.fillPath(clip, category_color("free_space", dark))
        p.setClipPath(clip)
        for seg in self.segments:
            color = category_color(seg.name, dark)
            p.fillRect(seg.rect, color)
            if seg.name == "autocompact_buffer":  # hatched: space the agent never fills
                p.fillRect(seg.rect, _hatch(color, dark))
            self._draw_label(p, seg, text_on(color))
        p.setClipping(False)
        p.setPen(QPen(self.palette().color(self.palette().ColorRole.Mid), 1))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRoundedRect(bar, RADIUS, RADIUS)
        if self._breakdown is not None and self._breakdown.failure and not self.segments:
            p.setPen(self.palette().color(self.palette().ColorRole.PlaceholderText))
            p.drawText(bar, Qt.AlignmentFlag.AlignCenter, "failed call: no context to show")
        p.end()

    def _draw_label(self, p: QPainter, seg: Segment, color: QColor) -> None:
        text = _fmt(seg.tokens)
        fm = p.fontMetrics()
        if fm.horizontalAdvance(text) + 8 > seg.rect.width():
            return
        p.setPen(color)
        p.drawText(seg.rect, Qt.AlignmentFlag.AlignCenter, text)

    # -- interaction --------------------------------------------------------------
    def event(self, e: object) -> bool:
        if isinstance(e, QHelpEvent) and e.type() == QHelpEvent.Type.ToolTip:
            text = self.tooltip_at(QPointF(e.pos()))
            if text:
                QToolTip.showText(e.globalPos(), text, self)
            else:
                QToolTip.hideText()
            return True
        return super().event(e)  # type: ignore[arg-type]

    def tooltip_at(self, pos: QPointF) -> str:
        seg = self.segment_at(pos)
        if seg is None or self._breakdown is None:
            return ""
        pct = self._breakdown.percent(seg.tokens)
        return f"<b>{seg.label}</b><br>{seg.tokens:,} tokens<br>{pct:.1f}% of the window"

    def mousePressEvent(self, event: QMouseEvent) -> None:
        seg = self.segment_at(event.position())
        if seg is not None and event.button() == Qt.MouseButton.LeftButton:
            self.category_clicked.emit(seg.name)
        super().mousePressEvent(event)


def _hatch(color: QColor, dark: bool) -> QBrush:
    return QBrush(color.lighter(118) if dark else color.darker(112), Qt.BrushStyle.BDiagPattern)
