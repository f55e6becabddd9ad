"""A model no catalogue knows: its cost is unknown (null, 'unknown'), never $0."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from ctxviewer.cli import main

ROLLOUT = (
    "codex/lanegrid__agtrace__samples-tmp_.codex_sessions_2025_12_10_rollout-"
    "2025-12-10T04-55-16-019b04ae-b1c6-7c72-a134-a4c2de66058c.jsonl"
)


@pytest.fixture
def unknown_rollout(corpus: Path, tmp_path: Path) -> Path:
    """A real Codex rollout whose model is renamed to one no price table knows."""
    raw = (corpus / ROLLOUT).read_bytes()
    assert b"gpt-5.1-codex-max" in raw
    path = tmp_path / "rollout-unknown.jsonl"
    path.write_bytes(raw.replace(b"gpt-5.1-codex-max", b"gpt-6.2-sol"))
    return path


def test_insights_json_total_is_null_with_the_priced_part(unknown_rollout, corpus, capsys):
    assert main(["insights", str(corpus / ROLLOUT), "--json"]) == 0
    known = orjson.loads(capsys.readouterr().out)["cost"]
    assert known["total_usd"] == pytest.approx(known["priced_usd"]) and known["total_usd"] > 0
    assert main(["insights", str(unknown_rollout), "--json"]) == 0
    cost = orjson.loads(capsys.readouterr().out)["cost"]
    assert cost["total_usd"] is None and cost["priced_usd"] == 0
    assert cost["unknown_models"] == ["gpt-6.2-sol"]
    assert cost["unpriced_requests"] == [r["index"] for r in cost["requests"] if r["has_usage"]]
    assert cost["by_model"][0]["total_usd"] is None and cost["by_model"][0]["source"] == ""


@pytest.mark.parametrize("command", ["insights", "findings"])
def test_text_says_unknown_and_never_zero_dollars(unknown_rollout, capsys, command):
    assert main([command, str(unknown_rollout)]) == 0
    text = capsys.readouterr().out
    assert "$0.0000" not in text and "$0.00" not in text
    if command == "insights":
        assert "total unknown (no price for gpt-6.2-sol)" in text


def test_qwen_code_default_model_has_a_price(data, capsys):
    assert main(["insights", str(data / "qwen_session.jsonl"), "--json"]) == 0
    cost = orjson.loads(capsys.readouterr().out)["cost"]
    assert cost["unknown_models"] == [] and cost["total_usd"] > 0
    (model,) = cost["by_model"]
    assert model["model"] == "qwen3-coder-plus" and "alibabacloud.com" in model["source"]
