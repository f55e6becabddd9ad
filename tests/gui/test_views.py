"""Single views: the bar, the content pane, exports, the palette, dark rendering."""

from __future__ import annotations

import csv
import json

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QImage, QPalette
from PySide6.QtTest import QTest

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.report import breakdown_json
from ctxviewer.gui.session import export
from ctxviewer.gui.session.bar_panel import BarPanel
from ctxviewer.gui.session.breakdown_model import BreakdownModel
from ctxviewer.gui.session.content import Content, node_content, ref_text
from ctxviewer.gui.session.content_pane import MAX_CHARS, ContentPane
from ctxviewer.gui.widgets.palette import (
    category_color,
    dark_palette,
    is_dark,
    text_on,
    tier_background,
    tier_color,
)
from ctxviewer.ingest import load
from ctxviewer.model import Block, Message, ToolDef

CATEGORIES = (
    "system_prompt",
    "unrecorded_overhead",
    "builtin_tools",
    "mcp_tools",
    "skills",
    "memory_files",
    "messages",
    "free_space",
    "autocompact_buffer",
)


@pytest.fixture
def breakdown(trace_path):
    a = Analysis(load(trace_path))
    return a.breakdown(a.resolve_index("last"))


def test_bar_segments_tooltip_and_click(qtbot, breakdown):
    panel = BarPanel()
    qtbot.addWidget(panel)
    panel.resize(900, 160)
    panel.set_breakdown(breakdown, "Request 63")
    panel.show()
    qtbot.waitExposed(panel)
    bar = panel.bar
    assert [(s.name, s.tokens) for s in bar.segments] == [
        (c.name, c.tokens) for c in breakdown.categories
    ]
    widths = [s.rect.width() for s in bar.segments]
    total = sum(widths)
    for s, c in zip(bar.segments, breakdown.categories, strict=True):
        assert s.rect.width() == pytest.approx(total * c.tokens / breakdown.window, abs=0.01)
    assert [s.rect.left() for s in bar.segments] == sorted(s.rect.left() for s in bar.segments)
    free = next(s for s in bar.segments if s.name == "free_space")
    tip = bar.tooltip_at(free.rect.center())
    assert "Free space" in tip and f"{free.tokens:,} tokens" in tip
    assert f"{breakdown.percent(free.tokens):.1f}% of the window" in tip
    assert bar.tooltip_at(QPointF(-5, -5)) == ""
    with qtbot.waitSignal(panel.category_clicked) as blocker:
        QTest.mouseClick(bar, Qt.MouseButton.LeftButton, pos=free.rect.center().toPoint())
    assert blocker.args == ["free_space"]
    legend = [lab.text() for lab in panel.legend_labels]
    assert "Free space" in legend[-2] and f"({breakdown.percent(free.tokens):.1f}%)" in legend[-2]
    # segments follow the width
    panel.resize(500, 160)
    assert sum(s.rect.width() for s in bar.segments) < total
    panel.set_breakdown(None)
    assert bar.segments == [] and panel.legend_labels == []


def test_content_texts(breakdown):
    tool = ToolDef("Read", "builtin", '{"name":"Read","input_schema":{"type":"object"}}')
    assert (
        ref_text(tool) == '{\n  "name": "Read",\n  "input_schema": {\n    "type": "object"\n  }\n}'
    )
    block = Block("text", "exact text\n  with spaces")
    assert ref_text(block) == "exact text\n  with spaces"
    message = Message("user", (Block("text", "hi"), Block("tool_result", "out", ref="t1")))
    text = ref_text(message)
    assert "── text ──\nhi" in text and "── tool_result ──\nout" in text
    assert ref_text("as is") == "as is"
    from ctxviewer.analysis.tokens.estimators import get_estimator

    est = get_estimator("qwen")
    cat = breakdown.category("builtin_tools")
    c = node_content(cat, est, breakdown)
    assert c.title == "Built-in tools" and f"{cat.tokens:,} tokens" in c.text
    c = node_content(cat.items[0], est, breakdown)
    assert c.tokens == est.tool(cat.items[0].ref)
    server = breakdown.category("mcp_tools").items[0]
    assert "mcp__ide__executeCode" in node_content(server, est, breakdown).text


def test_content_pane_sets_text_once_and_cuts_huge_texts(qtbot):
    pane = ContentPane()
    qtbot.addWidget(pane)
    pane.set_content(Content("small", "abc", 1, 1), "qwen")
    assert pane.text.toPlainText() == "abc" and not pane.truncated
    assert "1 tokens (qwen)" in pane.info.text()
    huge = "x" * (MAX_CHARS + 1000)
    pane.set_content(Content("huge", huge, 10, 10), "qwen")
    assert pane.truncated
    assert len(pane.text.toPlainText()) == MAX_CHARS
    assert "first 2 MB" in pane.info.text()
    pane.clear()
    assert pane.text.toPlainText() == "" and pane.info.text() == ""


def test_exports(qtbot, breakdown, tmp_path):
    export.write_breakdown_json(breakdown, str(tmp_path / "b.json"))
    assert json.loads((tmp_path / "b.json").read_text()) == json.loads(
        json.dumps(breakdown_json(breakdown))
    )
    export.write_breakdown_csv(breakdown, str(tmp_path / "b.csv"))
    with open(tmp_path / "b.csv", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["category", "item", "tokens", "percent", "depth", "leaf"]
    cats = [r for r in rows[1:] if r[1] == ""]
    assert [(r[0], int(r[2])) for r in cats] == [(c.name, c.tokens) for c in breakdown.categories]
    assert ["mcp_tools", "ide / mcp__ide__executeCode", "163", "0.08", "2", "True"] in rows
    # the leaves add up to the window: no token counted twice
    assert sum(int(r[2]) for r in rows[1:] if r[5] == "True") == breakdown.window
    panel = BarPanel()
    qtbot.addWidget(panel)
    panel.resize(800, 140)
    panel.set_breakdown(breakdown)
    assert export.save_png(panel, str(tmp_path / "bar.png"))
    assert QImage(str(tmp_path / "bar.png")).width() == 800


def test_export_actions_write_files(qtbot, window, open_and_wait, trace_path, tmp_path):
    open_and_wait(window, trace_path)
    answers = iter([str(tmp_path / "x.json"), str(tmp_path / "x.csv"), str(tmp_path / "x.png")])
    asked = []
    window.ask_save_path = lambda title, name, filter_: asked.append(name) or next(answers)
    window.actions_.export_json.trigger()
    window.actions_.export_csv.trigger()
    window.actions_.export_png.trigger()
    assert asked[0] == "badlogic__lemmy__apps_claude-trace_test_test-traffic-request63.json"
    assert json.loads((tmp_path / "x.json").read_text())["request"] == 63
    assert (tmp_path / "x.csv").read_text().startswith("category,item,tokens,percent")
    assert not QImage(str(tmp_path / "x.png")).isNull()
    window.ask_save_path = lambda title, name, filter_: str(tmp_path / "missing" / "x.csv")
    window.actions_.export_csv.trigger()
    assert window.errors[-1][0] == "Export failed" and "cannot write" in window.errors[-1][1]


def test_palette_covers_every_category_and_reads_in_both_themes():
    for dark in (False, True):
        colors = {category_color(name, dark).name() for name in CATEGORIES}
        assert len(colors) == len(CATEGORIES)  # every category distinct
        for tier in ("safe", "warn", "auto", "hard"):
            assert tier_color(tier, dark).isValid() and tier_background(tier, dark).isValid()
    assert is_dark(dark_palette()) and not is_dark(light_palette())
    # the free space must stand apart from the window background in both themes
    for dark, palette in ((False, light_palette()), (True, dark_palette())):
        window = palette.color(QPalette.ColorRole.Window)
        free = category_color("free_space", dark)
        assert abs(free.lightnessF() - window.lightnessF()) > 0.02 or free != window
        assert (
            text_on(category_color("messages", dark))
            in (Qt.GlobalColor.white, Qt.GlobalColor.black)
            or text_on(category_color("messages", dark)).isValid()
        )


def light_palette() -> QPalette:
    from PySide6.QtWidgets import QStyleFactory

    return QStyleFactory.create("Fusion").standardPalette()


def test_dark_palette_rendering(qtbot, qapp, window, open_and_wait, trace_path, tmp_path):
    qapp.setPalette(dark_palette())
    open_and_wait(window, trace_path)
    window.resize(1024, 700)
    image = window.grab().toImage()
    assert image.width() == 1024
    # the tree and the bar really use the dark variants
    model: BreakdownModel = window.breakdown.model
    assert model.index(0, 0).data(Qt.ItemDataRole.DecorationRole) == category_color(
        "system_prompt", dark=True
    )
    bar = window.bar_panel.bar
    seg = next(s for s in bar.segments if s.name == "free_space")
    pixel = bar.grab().toImage().pixelColor(int(seg.rect.left()) + 4, int(seg.rect.top()) + 4)
    assert pixel.lightnessF() < 0.4  # dark free space, not a light block on a dark window
    bar_img = window.bar_panel.grab().toImage()
    assert bar_img.pixelColor(2, bar_img.height() - 3).lightnessF() < 0.4
