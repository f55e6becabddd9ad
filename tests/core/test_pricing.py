"""Prices: the genai-prices catalogue as ctxviewer reads it, its own table, the gateways."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from genai_prices import Usage as GUsage
from genai_prices import calc_price
from genai_prices.data_snapshot import get_snapshot

from ctxviewer.analysis.insights import request_cost
from ctxviewer.analysis.pricing import load_prices
from ctxviewer.analysis.pricing.catalogue import Catalogue, build, cache_dir, data_file, snapshot
from ctxviewer.analysis.pricing.table import current_prices
from ctxviewer.model import Request, Usage


def req(model: str, usage: Usage, at: str = "2026-01-02T00:00:00Z") -> Request:
    return Request(0, model, at, (), (), (), usage, False)


def genai_usd(model: str, u: Usage, at: str, provider: str | None = None) -> float:
    """What genai-prices itself bills for ``u``: its input counts every prompt token."""
    w1h = u.cache_creation_1h_tokens
    gu = GUsage(
        input_tokens=u.prompt_tokens,
        cache_read_tokens=u.cache_read_input_tokens,
        cache_write_tokens=u.cache_creation_input_tokens,
        output_tokens=u.output_tokens,
        **({"cache_write_1h_tokens": w1h} if w1h else {}),
    )
    when = datetime.fromisoformat(at)
    return float(
        calc_price(gu, model, provider_id=provider, genai_request_timestamp=when).total_price
    )


# the models the issue found at $0, and the shapes of usage each agent reports
CASES = [
    ("gpt-5.3-codex", Usage(3_828, 0, 22_912, 408), "2026-02-20T10:00:00Z"),
    ("gpt-5.5", Usage(40_000, 0, 120_000, 2_000), "2026-08-01T10:00:00Z"),
    ("gpt-5.5", Usage(200_000, 0, 150_000, 2_000), "2026-08-01T10:00:00Z"),  # long context
    ("gemini-3.1-pro-preview-customtools", Usage(40_238, 0, 0, 718), "2026-04-23T12:53:00Z"),
    ("gemini-3.1-pro-preview", Usage(150_000, 0, 60_000, 900), "2026-04-23T12:53:00Z"),
    ("gemini-3-flash-preview", Usage(64_446, 0, 48_951, 3_575), "2026-04-23T12:53:00Z"),
    ("gemini-3-pro-preview", Usage(10_000, 0, 5_000, 300), "2025-12-01T00:00:00Z"),
    ("claude-opus-4-6", Usage(3, 2_414, 166_873, 6, 1_000), "2026-02-10T00:00:00Z"),
    ("claude-opus-4-6", Usage(3, 40_000, 166_873, 6), "2026-02-10T00:00:00Z"),  # > 200k
    ("claude-opus-4-6", Usage(3, 40_000, 166_873, 6), "2026-04-10T00:00:00Z"),  # no tier then
    ("claude-sonnet-4-5-20250929", Usage(74, 5_158, 93_553, 844), "2025-11-01T00:00:00Z"),
    ("claude-opus-4-7", Usage(39, 85_894, 430_337, 6_475, 85_894), "2026-05-01T00:00:00Z"),
    ("claude-3-5-haiku-20241022", Usage(5_853, 0, 0, 8_225), "2025-07-01T00:00:00Z"),
    ("deepseek-chat", Usage(1_000, 0, 9_000, 500), "2026-01-02T02:00:00Z"),  # off-peak hours
    ("deepseek-chat", Usage(1_000, 0, 9_000, 500), "2026-01-02T18:00:00Z"),
]


@pytest.mark.parametrize(("model", "usage", "at"), CASES)
def test_request_cost_is_what_genai_prices_bills(model, usage, at):
    c = request_cost(req(model, usage, at), load_prices())
    assert c.total_usd is not None
    assert c.total_usd == pytest.approx(genai_usd(model, usage, at), rel=1e-9, abs=1e-12)
    assert load_prices().lookup(model, at).source.startswith("genai-prices ")


def test_long_prompts_cost_more_and_old_prices_stay_old():
    t = load_prices()
    small, big = Usage(0, 0, 150_000, 0), Usage(0, 0, 250_000, 0)
    per_token = [
        request_cost(req("claude-sonnet-4-5", u), t).total_usd / u.prompt_tokens
        for u in (small, big)
    ]
    assert per_token[1] == pytest.approx(2 * per_token[0])  # over 200k: $0.60 not $0.30
    # Opus 4.6 billed long prompts higher until 2026-03-13 and not after
    early = t.lookup("claude-opus-4-6", "2026-03-01T00:00:00Z")
    late = t.lookup("claude-opus-4-6", "2026-03-20T00:00:00Z")
    assert early.at(250_000).input == 2 * early.input and late.at(250_000).input == late.input


def test_every_catalogue_model_is_found_as_genai_prices_finds_it():
    cat, snap = Catalogue(snapshot()), get_snapshot()
    names = {m.id for p in snap.providers for m in p.models}
    names |= {
        "claude-sonnet-4-5-20250929",
        "gpt-5.1-codex-max",
        "gpt-5-codex",
        "aide-gpt-5",
        "gemini-3.1-pro-preview-customtools",
        "gpt-5.2-20251211",
        "qwen3-coder-plus",
    }
    for name in sorted(names):
        try:
            provider, model = snap.find_provider_model(name, None, None, None)
            theirs: tuple[str, str] | None = (provider.id, model.id)
        except LookupError:
            theirs = None
        ours = cat.find(name)
        assert (ours and (ours.provider, ours.id)) == theirs, name


def test_ctxviewer_table_prices_what_the_catalogue_lacks():
    t = load_prices()
    assert Catalogue(snapshot()).find("qwen3-coder-plus") is None
    q = t.lookup("qwen3-coder-plus")
    assert q.key == "qwen3-coder-plus" and "alibabacloud.com" in q.source
    # a 40k prompt is in the 32k-128k tier: $1.80 in, $9 out per million
    c = request_cost(req("qwen3-coder-plus", Usage(10_000, 0, 30_000, 1_000)), t)
    assert c.total_usd == pytest.approx((10_000 * 1.8 + 30_000 * 0.18 + 1_000 * 9) / 1e6)
    assert t.lookup("gpt-6.2-sol") is None and t.lookup("aide-gpt-5") is None


@pytest.mark.parametrize(
    ("name", "same_as"),
    [
        ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("openai/gpt-5.3-codex", "gpt-5.3-codex"),
        ("models/gemini-2.5-pro", "gemini-2.5-pro"),
        ("claude-opus-4-1@20250805", "claude-opus-4-1"),
        ("claude-opus-4-6[1m]", "claude-opus-4-6"),
    ],
)
def test_gateway_names_price_as_the_model(name, same_as):
    t = load_prices()
    assert t.lookup(name) == t.lookup(same_as)


def test_bedrock_ids_get_bedrock_prices():
    p = load_prices().lookup("us.anthropic.claude-sonnet-4-5-20250929-v1:0")
    theirs = get_snapshot().find_provider_model(
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0", None, "aws", None
    )[1]
    assert p is not None and p.key == theirs.id and "Bedrock" in p.source


def test_snapshot_is_built_once_then_read_without_genai_prices(tmp_path):
    env = {"CTXVIEWER_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    code = (
        "import sys; from ctxviewer.analysis.pricing import load_prices; "
        "p = load_prices().lookup('gpt-5.3-codex'); "
        "print(p.input, 'genai_prices' in sys.modules)"
    )
    first = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    second = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert first == ["1.75", "True"]  # built from the package
    assert second == ["1.75", "False"]  # read from the snapshot: the package is not imported
    assert len(list((tmp_path / "cache").glob("genai-prices-*.json"))) == 1


def test_a_damaged_snapshot_is_built_again(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXVIEWER_HOME", str(tmp_path))
    from ctxviewer.analysis.pricing import catalogue

    monkeypatch.setattr(catalogue, "_MEMO", {})
    snapshot()
    (file,) = cache_dir().glob("genai-prices-*.json")
    file.write_bytes(b"{broken")
    monkeypatch.setattr(catalogue, "_MEMO", {})
    data = snapshot()
    assert data is not None and data == build(data_file())
    assert file.read_bytes().startswith(b"{")


def test_now_is_the_default_time():
    t = load_prices()
    assert t.lookup("claude-opus-4-6") == t.lookup("claude-opus-4-6", datetime.now(tz=UTC))


def test_current_prices_follow_the_user_s_file_as_it_is_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process's reads (the library's) share one price table (the catalogue read
    once), made again when the user's prices file appears, changes or goes."""
    from ctxviewer.analysis.pricing import table

    monkeypatch.setenv("CTXVIEWER_HOME", str(tmp_path))
    monkeypatch.setattr(table, "_current", None)
    shipped = current_prices()
    assert current_prices() is shipped and shipped.lookup("my-model") is None
    mine = tmp_path / "prices.json"
    mine.write_text(json.dumps({"models": {"my-model": {"input": 2.0, "output": 4.0}}}))
    first = current_prices()
    assert first is not shipped and first.lookup("my-model").input == 2.0
    mine.write_text(json.dumps({"models": {"my-model": {"input": 3.0, "output": 6.0}}}))
    os.utime(mine, ns=(1, 1))  # whatever the clock's grain: the stamp differs
    assert current_prices().lookup("my-model").input == 3.0
    mine.unlink()
    assert current_prices().lookup("my-model") is None
