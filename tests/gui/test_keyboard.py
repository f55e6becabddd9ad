"""The request list is one stop in the focus chain: Tab leaves it (it walked cell by
cell, then row by row, changing the request, and never left), the arrows move in it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication


def test_tab_leaves_the_request_list(qtbot, window, open_and_wait, trace_path):
    window.resize(1200, 800)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)
    open_and_wait(window, trace_path)
    window.state.select_request(2)
    table = window.requests
    table.setFocus()
    qtbot.waitUntil(table.hasFocus, timeout=5000)
    qtbot.keyClick(table, Qt.Key.Key_Down)  # the arrows move within the list
    assert window.state.index == 3 and table.hasFocus()
    for _ in range(table.model().columnCount() + 1):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        if not table.hasFocus():
            break
    assert not table.hasFocus() and window.state.index == 3
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Backtab)  # and back to it
    assert table.hasFocus() and window.state.index == 3


def test_every_row_table_is_one_focus_stop(qtbot, window):
    from PySide6.QtWidgets import QTableView

    tables = window.findChildren(QTableView)
    assert window.requests in tables and len(tables) > 3
    assert not any(t.tabKeyNavigation() for t in tables)
