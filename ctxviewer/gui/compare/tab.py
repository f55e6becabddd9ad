"""The Compare tab: every estimator next to the API's prompt size (docs/estimators.md).

A passive view. ``set_comparison`` fills the request table (sortable), the
per-estimator summary and the error plot; ``set_table`` the per-category
table of the selected request; ``set_busy``/``set_progress`` show the worker.
Intent leaves as signals: ``estimator_chosen(name)`` (use it in the whole
window), ``request_chosen(index)``, ``anthropic_toggled(bool)``,
``recompute_clicked``, ``cancel_clicked``, ``export_clicked``.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QModelIndex, QPoint, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ctxviewer.analysis.compare.scoring import Comparison
from ctxviewer.analysis.compare.table import CategoryTable
from ctxviewer.analysis.tokens.estimators import names as local_names
from ctxviewer.fmt import plural
from ctxviewer.gui.compare.model import (
    ESTIMATOR_ROLE,
    SORT_ROLE,
    CategoryModel,
    CompareTableModel,
    SummaryModel,
    pct_text,
)
from ctxviewer.gui.compare.plot import CompareErrorPlot
from ctxviewer.gui.widgets.row_views import fit_columns, rows_view
from ctxviewer.gui.widgets.theme import replace_widget, theme_changed

ANTHROPIC_HELP = (
    "Set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL, a proxy that holds the key) "
    "before starting ctxviewer to compare with the API's exact count_tokens"
)


TABLE_ROWS = 10  # rows the request table gets first when the tab is short
SUMMARY_LEAST = 90  # the summary below it keeps at least this height
PLOT_LEAST = 110  # a plot shorter than this is folded away (its handle stays)


def split_for_rows(sizes: list[int], room: int) -> list[int] | None:
    """The split (table, summary, plot) of a short tab: the table as tall as ``room``
    (its ``TABLE_ROWS`` rows) while the summary keeps ``SUMMARY_LEAST``; the plot shares
    what is left, or folds away when that leaves it less than ``PLOT_LEAST``. None when
    the usual shares (3:2:2) give the table that already."""
    total = sum(sizes)
    if len(sizes) != 3 or total <= 0 or total * 3 // 7 >= room:
        return None
    table = max(total * 3 // 7, min(room, total - SUMMARY_LEAST))
    rest = total - table
    if rest < SUMMARY_LEAST + PLOT_LEAST:
        return [table, rest, 0]
    return [table, rest - rest // 2, rest // 2]


def _table_view(parent: QWidget, sortable: bool = False) -> QTableView:
    v = rows_view(QTableView(parent))
    v.setShowGrid(False)
    v.setSortingEnabled(sortable)
    return v


class CompareTab(QWidget):
    estimator_chosen = Signal(str)
    request_chosen = Signal(int)
    anthropic_toggled = Signal(bool)
    recompute_clicked = Signal()
    cancel_clicked = Signal()
    export_clicked = Signal()

    def __init__(self, parent: QWidget | None = None, anthropic: bool = False) -> None:
        super().__init__(parent)
        self._comparison: Comparison | None = None  # what the plot shows
        self.model = CompareTableModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.summary_model = SummaryModel(self)
        self.category_model = CategoryModel(self)
        self._guard = False
        self._build(anthropic)
        self._connect()

    # -- layout -------------------------------------------------------------------
    def _build(self, anthropic: bool) -> None:
        self.estimator_combo = QComboBox(self)
        self.estimator_combo.addItems(local_names())
        self.estimator_combo.setToolTip("Estimator to use everywhere in the window")
        # short texts: the tab shares the window's centre (1024 px windows too)
        self.use_button = QPushButton("Use it", self)
        self.use_button.setToolTip("Use this estimator everywhere in the window")
        self.anthropic_check = QCheckBox("count_tokens", self)
        self.anthropic_check.setEnabled(anthropic)
        self.anthropic_check.setToolTip(
            "Also count every request with the API's messages.count_tokens (cached on disk)"
            if anthropic
            else ANTHROPIC_HELP
        )
        self.status = QLabel(self)
        self.progress = QProgressBar(self)
        self.progress.setMaximumWidth(160)
        self.progress.setTextVisible(False)
        self.cancel_button = QPushButton("Cancel", self)
        self.recompute_button = QPushButton("Recompute", self)
        self.export_button = QPushButton("CSV…", self)
        self.export_button.setToolTip("Export the table as CSV")
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(QLabel("Estimator:", self))
        for control in (self.estimator_combo, self.use_button, self.anthropic_check):
            top.addWidget(control)
        top.addStretch(1)
        for action in (
            self.progress,
            self.cancel_button,
            self.recompute_button,
            self.export_button,
        ):
            top.addWidget(action)
        self.status.setWordWrap(True)  # its own row: the whole text at any width
        self.table = _table_view(self, sortable=True)
        self.table.setModel(self.proxy)
        self.table.horizontalHeader().setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.summary = _table_view(self, sortable=True)
        self.summary.setModel(self.summary_model)
        self.summary.setToolTip("Double-click an estimator to use it in the whole window")
        self.categories = _table_view(self)
        self.categories.setModel(self.category_model)
        self.category_title = QLabel("Categories of the selected request", self)
        self.plot = CompareErrorPlot(self)
        middle = QSplitter(Qt.Orientation.Horizontal, self)
        middle.addWidget(self._titled("Summary (held-out for calibrated)", self.summary))
        middle.addWidget(self._titled(self.category_title, self.categories))
        middle.setStretchFactor(1, 1)
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        for pane in (self.table, middle, self.plot):
            self.splitter.addWidget(pane)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setStretchFactor(2, 2)
        self._user_split = False  # the user moved a handle: the split is theirs
        self.splitter.splitterMoved.connect(self._on_splitter_moved)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.status)
        layout.addWidget(self.splitter, 1)
        self.set_busy(False)

    def _titled(self, title: str | QLabel, view: QWidget) -> QWidget:
        box = QWidget(self)
        lay = QVBoxLayout(box)
        lay.setContentsMargins(0, 2, 0, 0)
        lay.setSpacing(2)
        lay.addWidget(title if isinstance(title, QLabel) else QLabel(title, box))
        lay.addWidget(view)
        return box

    def _connect(self) -> None:
        self.use_button.clicked.connect(self._on_use_clicked)
        self.anthropic_check.toggled.connect(self.anthropic_toggled)
        self.cancel_button.clicked.connect(self.cancel_clicked)
        self.recompute_button.clicked.connect(self.recompute_clicked)
        self.export_button.clicked.connect(self.export_clicked)
        self.summary.doubleClicked.connect(self._on_summary_double_clicked)
        self.table.horizontalHeader().customContextMenuRequested.connect(
            self._on_header_menu_requested
        )
        self.table.selectionModel().currentRowChanged.connect(self._on_table_row_changed)

    def _on_splitter_moved(self, *_: object) -> None:
        self._user_split = True

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if not self._user_split:
            sizes = split_for_rows(self.splitter.sizes(), self._table_room(TABLE_ROWS))
            if sizes is not None:
                self.splitter.setSizes(sizes)

    def _table_room(self, rows: int) -> int:
        """The height that shows ``rows`` rows of the request table."""
        t = self.table
        return (
            t.horizontalHeader().sizeHint().height()
            + rows * t.verticalHeader().defaultSectionSize()
            + t.horizontalScrollBar().sizeHint().height()
            + 2 * t.frameWidth()
            + 2
        )

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if hasattr(self, "plot") and theme_changed(event, self.plot.dark):
            old, self.plot = self.plot, CompareErrorPlot(self)  # in the new theme's colours
            replace_widget(old, self.plot)
            self.plot.set_comparison(self._comparison)

    # -- setters ------------------------------------------------------------------
    def set_comparison(self, c: Comparison | None) -> None:
        self._guard = True
        try:
            self.model.set_comparison(c)
            self.summary_model.set_comparison(c)
        finally:
            self._guard = False
        self.plot.set_comparison(c)
        self._comparison = c
        self.export_button.setEnabled(c is not None and bool(c.rows))
        self._fit_columns()
        if c is None:
            self.status.setText("")
            return
        best = self.summary_model.best(local_names())  # estimators one can choose
        fitted = self.summary_model.best()
        excluded = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in c.excluded.items() if v)
        beaten = ""
        if fitted is not None and fitted != best and fitted not in local_names():
            beaten = (
                f" ({fitted}, fitted to this session's own API counts: "
                f"{pct_text(c.summary[fitted].mape, False)})"
            )
        self.status.setText(
            f"{plural(len(c.rows), 'request')} scored"
            + (f" ({excluded} excluded)" if excluded else "")
            + (
                f" · lowest MAPE: <b>{best}</b> {pct_text(c.summary[best].mape, False)}{beaten}"
                if best
                else ""
            )
        )
        self.status.setToolTip("\n".join(c.notes))

    def _fit_columns(self) -> None:
        for view in (self.table, self.summary):
            fit_columns(view)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        if self.table.columnWidth(1) > 140:
            self.table.setColumnWidth(1, 140)
        cols = sum(self.summary.columnWidth(c) for c in range(self.summary_model.columnCount()))
        self.summary.setMinimumWidth(min(cols + 2 * self.summary.frameWidth() + 4, 460))

    def set_table(self, t: CategoryTable | None) -> None:
        self.category_model.set_table(t)
        fit_columns(self.categories)
        if t is None:
            self.category_title.setText("Categories of the selected request")
            return
        api = "–" if t.api_prompt_tokens is None else f"{t.api_prompt_tokens:,}"
        self.category_title.setText(f"Categories of request {t.request} (API total {api})")

    def set_current_estimator(self, name: str) -> None:
        self.estimator_combo.setCurrentText(name)
        self.summary_model.set_current(name)

    def set_current_request(self, index: int) -> None:
        rows = [r.index for r in self.model.rows]
        if index not in rows:
            return
        src = self.model.index(rows.index(index), 0)
        proxy = self.proxy.mapFromSource(src)
        if self.table.currentIndex().row() == proxy.row():
            return
        self._guard = True
        try:
            self.table.setCurrentIndex(proxy)
            self.table.scrollTo(proxy)
        finally:
            self._guard = False

    def set_busy(self, busy: bool, message: str = "") -> None:
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)
        self.recompute_button.setEnabled(not busy)
        if busy:
            self.progress.setRange(0, 0)
            self.status.setText(message or "Comparing estimators…")

    def set_progress(self, done: int, total: int) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.status.setText(f"count_tokens {done}/{total}")

    def set_message(self, text: str) -> None:
        self.status.setText(text)

    # -- user intent --------------------------------------------------------------
    def _on_use_clicked(self) -> None:
        self.estimator_chosen.emit(self.estimator_combo.currentText())

    def _on_summary_double_clicked(self, index: QModelIndex) -> None:
        name = self.summary_model.data(index, ESTIMATOR_ROLE)
        if name in local_names():
            self.estimator_chosen.emit(name)

    def _on_header_menu_requested(self, pos: QPoint) -> None:
        section = self.table.horizontalHeader().logicalIndexAt(pos)
        name = self.model.estimator_of(section)
        if name is None:
            return
        menu = QMenu(self)
        action = menu.addAction(f"Use {name} in the whole window")
        action.setEnabled(name in local_names())
        action.triggered.connect(lambda: self.estimator_chosen.emit(name))
        menu.popup(self.table.horizontalHeader().mapToGlobal(pos))

    def _on_table_row_changed(self, current: QModelIndex, _prev: QModelIndex) -> None:
        if self._guard or not current.isValid():
            return
        row = self.proxy.data(current, Qt.ItemDataRole.UserRole)
        if row is not None:
            self.request_chosen.emit(row.index)
