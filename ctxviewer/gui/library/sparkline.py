"""A small curve of a session's prompt sizes, drawn in a table cell."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QStyledItemDelegate, QWidget

if TYPE_CHECKING:  # what painting needs: imported when the first row is painted
    from PySide6.QtGui import QPainter
    from PySide6.QtWidgets import QStyleOptionViewItem

SERIES_ROLE = Qt.ItemDataRole.UserRole + 2  # list[int]: the prompt sizes
SCALE_ROLE = Qt.ItemDataRole.UserRole + 3  # int: the window (the peak's colour)
WARN, HIGH = 0.6, 0.85  # shares of the window where the peak turns amber, red


def peak_colour(share: float | None) -> QColor:
    if share is None:
        return QColor("#8a8f98")
    if share >= HIGH:
        return QColor("#d64545")
    if share >= WARN:
        return QColor("#d9902f")
    return QColor("#3f9c5a")


class SparklineDelegate(QStyledItemDelegate):
    """Paints ``SERIES_ROLE`` as a line from 0 to its own peak (the shape of the session),
    the peak as a dot coloured by its share of the window (``SCALE_ROLE``)."""

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        from PySide6.QtGui import QPainter, QPainterPath, QPen
        from PySide6.QtWidgets import QStyle, QStyleOptionViewItem

        series = index.data(SERIES_ROLE)
        if not series:  # a session without requests: its cell says so
            super().paint(painter, option, index)
            return
        style = option.widget.style() if isinstance(option.widget, QWidget) else None
        if style is not None:  # selection and hover backgrounds, as the other cells
            opt = QStyleOptionViewItem(option)
            self.initStyleOption(opt, index)
            opt.text = ""
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, option.widget)
        scale = max(max(series), 1)
        window = int(index.data(SCALE_ROLE) or 0)
        rect = QRectF(option.rect).adjusted(5, 5, -6, -5)  # room for the peak dot
        if rect.width() < 8 or rect.height() < 6:
            return
        n = len(series)
        step = rect.width() / max(n - 1, 1)

        def at(i: int) -> QPointF:
            return QPointF(
                rect.left() + i * step, rect.bottom() - rect.height() * series[i] / scale
            )

        path = QPainterPath(at(0))
        for i in range(1, n):
            path.lineTo(at(i))
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        line = (
            option.palette.highlightedText().color() if selected else option.palette.text().color()
        )
        line.setAlphaF(0.75)
        painter.setPen(QPen(line, 1.3))
        painter.drawPath(path)
        top = max(range(n), key=lambda i: series[i])
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(peak_colour(series[top] / window if window else None))
        painter.drawEllipse(at(top), 2.6, 2.6)
        painter.restore()

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        return QSize(110, 22)
