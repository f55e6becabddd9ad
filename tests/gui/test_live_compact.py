"""Compact a live conversation from the window: the proxy started with compaction
allowed, a real anthropic SDK agent through it, preview, apply, undo."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

anthropic = pytest.importorskip("anthropic")
pytest.importorskip("aiohttp")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "proxy"))
from live_helpers import panel_of
from strict_upstream import StrictUpstream
from test_rewrite_sdk import anthropic_agent


def _text(message: dict) -> str:
    content = message["content"]
    return (
        content
        if isinstance(content, str)
        else "\n".join(c.get("text", "") for c in content if isinstance(c, dict))
    )


def _start(panel, upstream: StrictUpstream, out: Path, rewriting: bool):  # noqa: ANN202
    dialog = panel.show_proxy_dialog()
    dialog.port.setValue(0)
    dialog.upstream.setText(upstream.url)
    dialog.openai_upstream.setText(upstream.url)
    dialog.out.setText(str(out))
    assert not dialog.rewriting.isChecked()  # off by default
    dialog.rewriting.setChecked(rewriting)
    dialog.start_button.click()
    assert panel.proxy.running and not dialog.rewriting.isEnabled()
    return dialog


def test_without_the_opt_in_nothing_can_be_compacted(
    qtbot, window, strict: StrictUpstream, tmp_path: Path
) -> None:
    panel = panel_of(window)
    qtbot.addWidget(_start(panel, strict, tmp_path / "r.jsonl", rewriting=False))
    assert not panel.compact_live.isEnabled()
    assert panel.show_compact_dialog() is None
    assert panel.proxy.proxy.rewriter is None
    panel.stop_proxy.trigger()


def test_preview_apply_and_undo_from_the_window(
    qtbot, window, strict: StrictUpstream, tmp_path: Path
) -> None:
    panel = panel_of(window)
    qtbot.addWidget(_start(panel, strict, tmp_path / "r.jsonl", rewriting=True))
    assert panel.compact_live.isEnabled()
    with anthropic.Anthropic(base_url=panel.proxy.url, api_key="sk-ant-x", max_retries=0) as client:
        history = anthropic_agent(client, turns=4, stream=False)
        dialog = panel.show_compact_dialog()
        assert dialog is not None
        qtbot.addWidget(dialog)
        assert dialog.conversation.count() == 1 and "as sent" in dialog.conversation.itemText(0)
        assert not dialog.apply_button.isEnabled()  # nothing previewed yet
        dialog.strategy.setCurrentIndex(dialog.strategy.findData("qwen"))
        n = len(strict.received)
        dialog.preview_button.click()
        plan = dialog.plan
        assert plan is not None and plan.tokens_after < plan.tokens_before
        assert len(strict.received) == n  # a preview sends nothing
        assert f"~{plan.tokens_before:,} → ~{plan.tokens_after:,}" in dialog.summary.text()
        assert "one cache write" in dialog.summary.text()
        lines = dialog.diff.toPlainText().splitlines()
        assert sum(line.startswith("- ") for line in lines) == len(plan.removed)
        assert sum(line.startswith("+ ") for line in lines) == len(plan.added)
        dialog.apply_button.click()
        assert dialog.undo_button.isEnabled() and "rewriting:" in dialog.conversation.itemText(0)
        qtbot.waitUntil(lambda: "rewriting on" in window.status.currentMessage(), timeout=5000)
        n = len(strict.received)
        anthropic_agent(client, turns=1, stream=False, messages=history)  # the agent goes on
        sent = strict.bodies("anthropic")[-(len(strict.received) - n) :]
        summary = plan.rule.summary
        assert summary and sent and all(summary in _text(b["messages"][0]) for b in sent)
        assert len(sent[0]["messages"]) < len(history)  # what went upstream is shorter
        dialog.undo_button.click()
        assert "off (undone)" in dialog.conversation.itemText(0)
        n = len(strict.received)
        anthropic_agent(client, turns=1, stream=False, messages=history)
        after = strict.bodies("anthropic")[-(len(strict.received) - n) :]
        # as the agent sent it: its whole history, from its first task
        assert after and all(b["messages"][0] == history[0] for b in after)
        assert all(b["messages"] == history[: len(b["messages"])] for b in after)
    assert [s for _a, _r, s in strict.received] == [200] * len(strict.received)
    panel.stop_proxy.trigger()
    assert not panel.compact_live.isEnabled() and panel.compact_dialog is None


def test_prune_a_tool_from_the_window(
    qtbot, window, strict: StrictUpstream, tmp_path: Path
) -> None:
    panel = panel_of(window)
    qtbot.addWidget(_start(panel, strict, tmp_path / "r.jsonl", rewriting=True))
    with anthropic.Anthropic(base_url=panel.proxy.url, api_key="sk-ant-x", max_retries=0) as client:
        history = anthropic_agent(client, turns=2, stream=False)
        dialog = panel.show_compact_dialog()
        assert dialog is not None
        qtbot.addWidget(dialog)
        names = [dialog.tools.item(i).text() for i in range(dialog.tools.count())]
        assert names == ["read_file"]  # the agent's tool list
        dialog.strategy.setCurrentIndex(dialog.strategy.findData("prune"))
        dialog.preview_button.click()
        assert dialog.plan is None and "Cannot compact" in dialog.summary.text()  # none checked
        from PySide6.QtCore import Qt

        dialog.tools.item(0).setCheckState(Qt.CheckState.Checked)
        dialog.preview_button.click()
        assert dialog.plan is not None and "tools dropped: read_file" in dialog.summary.text()
        dialog.apply_button.click()
        n = len(strict.received)
        client.messages.create(
            model="claude-test",
            max_tokens=64,
            messages=[*history, {"role": "user", "content": "thanks"}],
            tools=[
                {
                    "name": "read_file",
                    "description": "Read a file",
                    "input_schema": {"type": "object"},
                }
            ],
        )
        (sent,) = strict.bodies("anthropic")[n:]
        assert not sent.get("tools")  # the tool went, the history stayed
        assert sent["messages"][: len(history)] == history
