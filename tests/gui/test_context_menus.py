"""Right-click menus on the request list and the breakdown tree; View > Timeline."""

from __future__ import annotations

import json

from PySide6.QtGui import QGuiApplication

from ctxviewer.gui.session.content import node_content
from ctxviewer.gui.session.context_menus import actions_of


def test_request_list_menu_copies_and_simulates(qtbot, window, open_and_wait, trace_path):
    a = open_and_wait(window, trace_path)
    menus = window.context_menus
    model = window.requests.request_model
    row = 20
    menu = menus.requests_menu(model.index(row, 0))
    acts = actions_of(menu)
    assert list(acts) == [
        "Copy row",
        "Copy request as JSON",
        "Simulate compaction of this request…",
    ]
    acts["Copy row"].trigger()
    cells = QGuiApplication.clipboard().text().split("\t")
    assert cells[0] == str(a.timeline[row].index) and len(cells) == model.columnCount()
    acts["Copy request as JSON"].trigger()
    data = json.loads(QGuiApplication.clipboard().text())
    assert data["index"] == a.timeline[row].index
    assert data["api_prompt_tokens"] == a.timeline[row].api_prompt_tokens
    acts["Simulate compaction of this request…"].trigger()
    dialog = window.panels["analysis_panels"].dialog
    qtbot.addWidget(dialog)
    assert window.state.index == a.timeline[row].index and dialog.request.index == row


def test_breakdown_tree_menu_copies_the_exact_text(qtbot, window, open_and_wait, trace_path):
    open_and_wait(window, trace_path)
    menus = window.context_menus
    tree = window.breakdown.tree
    system = next(
        tree.model().index(r, 0)
        for r in range(tree.model().rowCount())
        if tree.model().index(r, 0).data() == "System prompt"
    )
    acts = actions_of(menus.tree_menu(system))
    assert {
        "Copy text",
        "Copy name and tokens",
        "Expand all",
        "Collapse all",
        "Export breakdown as &JSON…",
    } <= set(acts)
    acts["Copy text"].trigger()
    b = window.state.breakdown
    cat = b.category("system_prompt")
    shown = node_content(cat, window.state.analysis.estimator, b).text  # the content pane's
    assert shown and QGuiApplication.clipboard().text() == shown
    acts["Copy name and tokens"].trigger()
    assert QGuiApplication.clipboard().text() == f"System prompt\t{cat.tokens:,}"
    acts["Expand all"].trigger()
    assert tree.isExpanded(system)
    acts["Collapse all"].trigger()
    assert not tree.isExpanded(system)
    empty = actions_of(menus.tree_menu(tree.model().index(-1, -1)))
    assert "Copy text" not in empty and "Expand all" in empty


def test_view_timeline_menu_holds_the_plot_toggles(qtbot, window, open_and_wait, trace_path):
    open_and_wait(window, trace_path)
    view = next(a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "View")
    sub = next(a.menu() for a in view.actions() if a.menu() is not None)
    texts = [a.text() for a in sub.actions()]
    assert "Prompt-cache view" in texts and "Show side calls" in texts
    plot = window.timeline.plot
    cache = next(a for a in sub.actions() if a.text() == "Prompt-cache view")
    cache.trigger()
    assert cache is plot.menu_actions["cache"] and cache.isChecked()
