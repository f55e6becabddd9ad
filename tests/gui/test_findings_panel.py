"""The Findings tab: the core's findings in its order, picking one selects its request
and its items in the breakdown; rendered light and dark."""

from __future__ import annotations

import os

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from ctxviewer.analysis.breakdown import Item
from ctxviewer.analysis.findings import findings
from ctxviewer.fmt import fmt_tokens
from ctxviewer.gui.findings.panel import FindingsPanel
from ctxviewer.gui.widgets.theme import apply_theme


def open_findings(window, qtbot, open_and_wait, path) -> FindingsPanel:
    panel = window.panels["findings_panel"]
    assert [window.tabs.tabText(i) for i in range(window.tabs.count())].count("Findings") == 1
    window.tabs.setCurrentWidget(panel)
    window.show()
    qtbot.waitExposed(window)
    open_and_wait(window, path)
    qtbot.waitUntil(lambda: panel.found is not None, timeout=30000)
    return panel


def pick(qtbot, panel, code: str, item: str | None = None) -> object:
    table = panel.table
    for row in range(table.proxy.rowCount()):
        f = table.record_at(row)
        if f.code == code and (item is None or f.items[0] == item):
            index = table.proxy.index(row, 2)
            table.view.scrollTo(index)
            qtbot.mouseClick(
                table.view.viewport(),
                Qt.MouseButton.LeftButton,
                pos=table.view.visualRect(index).center(),
            )
            return f
    raise AssertionError(f"no {code} {item or ''} row")


def test_rows_are_the_core_findings_in_order(window, qtbot, open_and_wait, trace_path):
    panel = open_findings(window, qtbot, open_and_wait, trace_path)
    want = findings(window.state.analysis)
    shown = [panel.table.record_at(r) for r in range(panel.table.proxy.rowCount())]
    assert [(f.code, f.title) for f in shown] == [(f.code, f.title) for f in want]
    assert "17 findings" in panel.table.summary.text()
    # the Insights tab's results, once there, are reused: the same findings
    window.tabs.setCurrentWidget(window.panels["insights_panel"])
    qtbot.waitUntil(lambda: window.panels["insights_panel"].insights is not None, timeout=30000)
    panel.recompute()
    qtbot.waitUntil(lambda: panel.table.proxy.rowCount() == len(want), timeout=30000)


def test_picking_selects_request_and_items(window, qtbot, open_and_wait, trace_path):
    panel = open_findings(window, qtbot, open_and_wait, trace_path)
    f = pick(qtbot, panel, "unused-mcp-server")
    assert window.state.index == f.shown == f.requests[0]
    assert window.requests.current_row() == f.shown
    obj = window.breakdown.current_object()
    assert isinstance(obj, Item) and obj.name == "ide" and obj.kind == "server"
    assert "ide" in panel.table.detail.text() and "/mcp" in panel.table.detail.text()
    f = pick(qtbot, panel, "unused-tool", "MultiEdit")
    obj = window.breakdown.current_object()
    assert isinstance(obj, Item) and obj.name == "MultiEdit"
    f = pick(qtbot, panel, "repeated-content")
    assert window.state.index == f.shown
    obj = window.breakdown.current_object()
    assert isinstance(obj, Item) and obj.kind == "message" and obj.index == f.messages[0]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_render(window, qtbot, open_and_wait, trace_path, theme, tmp_path):
    apply_theme(QApplication.instance(), theme)
    window.resize(1400, 900)
    panel = open_findings(window, qtbot, open_and_wait, trace_path)
    pick(qtbot, panel, "unused-mcp-server")
    window.tabs.setCurrentWidget(panel)
    qtbot.wait(200)
    out = os.environ.get("CTXVIEWER_PNG_DIR", str(tmp_path))
    path = os.path.join(out, f"findings-{theme}.png")
    assert window.grab().save(path)
    assert os.path.getsize(path) > 10_000


def test_unused_tools_of_an_unpriced_model_are_counted_in_tokens(
    window, qtbot, open_and_wait, trace_path, tmp_path
):
    raw = open(trace_path, "rb").read()  # noqa: PTH123
    path = tmp_path / "trace-unknown.jsonl"
    path.write_bytes(
        raw.replace(b"claude-sonnet-4-20250514", b"gpt-6.2-sol").replace(
            b"claude-3-5-haiku-20241022", b"gpt-6.2-sol"
        )
    )
    panel = open_findings(window, qtbot, open_and_wait, str(path))
    unused = [f for f in panel.found if f.code == "unused-tool"]
    assert unused and all(f.usd is None for f in unused)
    tokens = sum(f.tokens_carried for f in unused)
    summary = panel.table.summary.text()
    assert "$0" not in summary
    assert f"unused tools carried {fmt_tokens(tokens)} tokens (no price for the model)" in summary
