"""The Qt item models, without a view: structure, roles, and qtmodeltester."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QSortFilterProxyModel, Qt

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.breakdown import Category, Item
from ctxviewer.gui.session.breakdown_model import REF_ROLE, SORT_ROLE, BreakdownModel
from ctxviewer.gui.session.request_model import (
    COL_PROMPT,
    RequestListModel,
    short_model,
    short_time,
)
from ctxviewer.ingest import load

USER = Qt.ItemDataRole.UserRole


def _tree_rows(model, parent=None, depth=0):
    parent = parent if parent is not None else QModelIndex()
    for row in range(model.rowCount(parent)):
        index = model.index(row, 0, parent)
        yield depth, index
        yield from _tree_rows(model, index, depth + 1)


def test_breakdown_model_mirrors_the_core(qtmodeltester, corpus, trace_path):
    a = Analysis(load(trace_path))
    b = a.breakdown(a.resolve_index("last"))
    model = BreakdownModel()
    model.set_breakdown(b)
    qtmodeltester.check(model)
    assert model.rowCount() == len(b.categories)
    for row, c in enumerate(b.categories):
        index = model.index(row, 0)
        assert index.data() == c.label
        assert index.data(USER) is c
        assert model.index(row, 1).data() == f"{c.tokens:,}"
        assert model.index(row, 1).data(SORT_ROLE) == float(c.tokens)
        assert model.rowCount(index) == len(c.items)
        for i, item in enumerate(c.items):
            child = model.index(i, 0, index)
            assert child.data(USER) is item
            ref = child.data(REF_ROLE)  # a text (a row's explanation) comes back as a copy
            assert ref is item.ref or (isinstance(item.ref, str) and ref == item.ref)
            assert child.parent() == index
            assert model.rowCount(child) == len(item.items)


def test_breakdown_model_shows_rows_outside_the_total(qtmodeltester):
    """Claude Code 2.1.332's deferred tools: rows after the categories, no share of the used
    tokens (its print-mode capture, with its own count_tokens answers)."""
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "data" / "agents" / "claude-code-2.1.332"
    a = Analysis(load(str(folder / "print" / "recording.rec.jsonl.xz")))
    b = a.breakdown(a.resolve_index("last"))
    model = BreakdownModel()
    model.set_breakdown(b)
    qtmodeltester.check(model)
    assert b.outside and model.rowCount() == len(b.categories) + len(b.outside)
    for row, c in enumerate(b.outside, start=len(b.categories)):
        assert model.index(row, 0).data() == f"{c.label} (not in the total)"
        assert model.index(row, 0).data(USER) is c
        assert model.index(row, 1).data() == f"{c.tokens:,}" and c.tokens > 0
        assert model.index(row, 3).data() == ""  # no share of the tokens in use
        assert model.rowCount(model.index(row, 0)) == len(c.items)


def test_breakdown_model_mcp_server_then_tools_and_message_blocks(trace_path):
    a = Analysis(load(trace_path))
    b = a.breakdown(a.resolve_index("last"))
    model = BreakdownModel()
    model.set_breakdown(b)
    rows = {index.data(): (depth, index) for depth, index in _tree_rows(model)}
    depth, server = rows["ide"]
    assert depth == 1 and server.data(USER).kind == "server"
    tools = [model.index(r, 0, server).data() for r in range(model.rowCount(server))]
    assert tools == ["mcp__ide__executeCode", "mcp__ide__getDiagnostics"]
    messages = model.index([c.name for c in b.categories].index("messages"), 0)
    first = model.index(0, 0, messages)
    assert first.data(USER).kind == "message"
    assert all(
        isinstance(model.index(r, 0, first).data(USER), Item) for r in range(model.rowCount(first))
    )


def test_breakdown_model_percent_columns_and_reset(qtmodeltester, transcript_path):
    a = Analysis(load(transcript_path))
    model = BreakdownModel()
    qtmodeltester.check(model)  # empty
    for i in (0, 60, a.resolve_index("last")):
        b = a.breakdown(i)
        model.set_breakdown(b)
        qtmodeltester.check(model)
        for row, c in enumerate(b.categories):
            assert model.index(row, 2).data() == f"{100 * c.tokens / b.window:.1f}%"
            used = model.index(row, 3).data()
            if c.name in ("free_space", "autocompact_buffer"):
                assert used == ""
            else:
                assert used == f"{100 * c.tokens / b.used:.1f}%"
    assert isinstance(model.index(0, 0).data(USER), Category)
    model.set_breakdown(None)
    assert model.rowCount() == 0


def test_proxy_filter_keeps_parents_and_sorts_numerically(qtmodeltester, trace_path):
    from ctxviewer.gui.session.breakdown_panel import BreakdownPanel

    a = Analysis(load(trace_path))
    panel = BreakdownPanel()
    panel.set_breakdown(a.breakdown(a.resolve_index("last")))
    proxy: QSortFilterProxyModel = panel.proxy
    qtmodeltester.check(proxy)
    panel.filter_edit.setText("getdiagnostics")
    qtmodeltester.check(proxy)
    assert [proxy.index(r, 0).data() for r in range(proxy.rowCount())] == ["MCP tools"]
    server = proxy.index(0, 0, proxy.index(0, 0))
    assert server.data() == "ide"
    assert proxy.rowCount(server) == 1
    assert proxy.index(0, 0, server).data() == "mcp__ide__getDiagnostics"
    panel.filter_edit.clear()
    proxy.sort(1, Qt.SortOrder.AscendingOrder)
    builtin = next(
        proxy.index(r, 0)
        for r in range(proxy.rowCount())
        if proxy.index(r, 0).data() == "Built-in tools"
    )
    tokens = [proxy.index(r, 0, builtin).data(USER).tokens for r in range(proxy.rowCount(builtin))]
    assert tokens == sorted(tokens) and len(tokens) > 10
    top = [proxy.index(r, 0).data(USER).tokens for r in range(proxy.rowCount())]
    assert top == sorted(top)  # numbers, not strings ("9,562" < "33,000" as text)
    panel.deleteLater()


def test_request_list_model(qtmodeltester, transcript_path):
    a = Analysis(load(transcript_path))
    model = RequestListModel()
    qtmodeltester.check(model)
    model.set_timeline(a.timeline)
    qtmodeltester.check(model)
    assert model.rowCount() == len(a.session.requests) == len(a.timeline)
    for row, p in enumerate(a.timeline):
        assert model.index(row, 0).data() == str(p.index)
        assert model.index(row, 0).data(USER) is p
        prompt = model.index(row, COL_PROMPT).data()
        if p.api_prompt_tokens is None:
            assert prompt == f"~{p.estimated_prompt_tokens:,}"
        else:
            assert prompt == f"{p.api_prompt_tokens:,}"
    events = [model.index(r, 5).data() for r in range(model.rowCount())]
    boundary = next(r.index for r in a.session.requests if r.events)
    assert "compaction" in events[boundary]


def test_request_model_marks_estimates_and_roles(trace_path):
    a = Analysis(load(trace_path))
    model = RequestListModel()
    model.set_timeline(a.timeline)
    roles = {model.index(r, 4).data() for r in range(model.rowCount())}
    assert {"main", "aux"} <= roles
    assert short_model("claude-sonnet-4-20250514") == "sonnet-4"
    assert short_model("openrouter/anthropic/claude-opus-4-6") == "opus-4-6"
    assert short_time("2025-05-29T21:38:24.293Z") == "21:38:24"
