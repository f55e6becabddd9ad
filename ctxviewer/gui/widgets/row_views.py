"""What every one-row-per-thing table shares, so that big sessions stay cheap.

A session can have thousands of requests and messages. Qt sizes a column to
its contents (``resizeColumnsToContents``) by asking the model for every
role of every cell of the rows it measures, through Python: a tenth of a
second of GUI thread for 200 rows of a wide table, each time a big analysis
arrives. ``fit_columns`` measures the display text of a few dozen rows spread
over the whole table instead (numbers grow along a session, so the last rows
matter as much as the first), and every row has one fixed height.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QStyle, QTableView, QTreeView

SIZE_SAMPLE_ROWS = 200  # rows Qt measures when the user double-clicks a column edge
FIT_SAMPLE_ROWS = 16  # rows fit_columns measures, spread from the first to the last


def rows_view(view: QTableView, *, single: bool = True) -> QTableView:
    """Whole-row selection, alternating colours, no row numbers, fixed row height,
    and column widths measured on ``SIZE_SAMPLE_ROWS`` rows. One stop in the focus chain:
    Tab goes on to the next widget (a table's own Tab walked cell by cell, changing the
    row, and never left it); the arrows move within."""
    view.setTabKeyNavigation(False)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    if single:
        view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setAlternatingRowColors(True)
    view.setWordWrap(False)
    rows = view.verticalHeader()
    rows.setVisible(False)
    rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    rows.setDefaultSectionSize(view.fontMetrics().height() + 6)
    columns = view.horizontalHeader()
    columns.setHighlightSections(False)
    columns.setResizeContentsPrecision(SIZE_SAMPLE_ROWS)
    return view


def sample_rows(count: int, sample: int = FIT_SAMPLE_ROWS) -> list[int]:
    """Up to ``sample`` row numbers spread evenly from the first row to the last."""
    if count <= sample:
        return list(range(count))
    return sorted({round(i * (count - 1) / (sample - 1)) for i in range(sample)})


def fit_columns(
    view: QTableView | QTreeView, max_width: int | None = None, columns: Sequence[int] | None = None
) -> None:
    """Size each visible column (of ``columns``, default all) to its header and the
    widest display text of ``sample_rows`` (in the cell's own font, with room for its
    icon); in a tree, of its top-level rows."""
    model = view.model()
    if model is None:
        return
    header = view.header() if isinstance(view, QTreeView) else view.horizontalHeader()
    base = view.fontMetrics()
    style = view.style()
    padding = 2 * (style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view) + 1) + 6
    # a decoration (a colour swatch) is drawn at the small icon size when the view sets none
    size = view.iconSize().width()
    icon = (size if size > 0 else style.pixelMetric(QStyle.PixelMetric.PM_SmallIconSize)) + 8
    rows = sample_rows(model.rowCount())
    for col in range(model.columnCount()) if columns is None else columns:
        if header.isSectionHidden(col):
            continue
        width = header.sectionSizeHint(col)
        for row in rows:
            index = model.index(row, col)
            text = index.data(Qt.ItemDataRole.DisplayRole)
            if text is None or text == "":
                continue
            font = index.data(Qt.ItemDataRole.FontRole)
            metrics = QFontMetrics(font) if isinstance(font, QFont) else base
            cell = metrics.horizontalAdvance(str(text)) + padding
            if index.data(Qt.ItemDataRole.DecorationRole) is not None:
                cell += icon
            width = max(width, cell)
        if max_width is not None:
            width = min(width, max_width)
        if header.sectionSize(col) != width:
            header.resizeSection(col, width)
