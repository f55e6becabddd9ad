"""A session in one row agrees with ``report`` on every number both show."""

from __future__ import annotations

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.report import report_json
from ctxviewer.analysis.session_summary import summarize
from ctxviewer.ingest.loader import load
from ctxviewer.resources import demo_session_path

SPOTTER = "claude-code/marot__spotter__test_fixtures_transcripts_fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"


def _pair(path: str) -> tuple[dict, dict]:
    a = Analysis(load(path))
    return summarize(a).as_dict(), report_json(a)


def test_demo_summary_agrees_with_report() -> None:
    row, rep = _pair(str(demo_session_path()))
    assert row["requests"] == rep["source"]["requests"] > 0
    assert row["peak_prompt_tokens"] == rep["peak_prompt_tokens"]
    assert row["window"] == rep["window"]
    assert row["peak_share"] == round(rep["peak_prompt_tokens"] / rep["window"], 4)
    assert row["compactions_observed"] == len(rep["compactions"]["observed"]) >= 1
    assert row["agent"] == rep["agent"]["id"]
    assert [r["peak_prompt_tokens"] for r in row["subagent_runs"]]
    names = [c["name"] for c in row["top_categories"]]
    assert names and "free_space" not in names and "autocompact_buffer" not in names
    tokens = [c["tokens"] for c in row["top_categories"]]
    assert tokens == sorted(tokens, reverse=True)


def test_spotter_subagents_have_id_and_type(corpus) -> None:
    row, rep = _pair(str(corpus / SPOTTER))
    assert row["requests"] == rep["source"]["requests"]
    explore = [r for r in row["subagent_runs"] if r["agent_type"] == "Explore"]
    assert {r["agent_id"] for r in explore} == {"a93ccab", "aa84377"}
    assert all(r["cost_usd"] and r["cost_usd"] > 0 for r in explore)


def test_top_sources_are_the_insights_costliest(corpus) -> None:
    from ctxviewer.analysis.insights import insights

    a = Analysis(load(str(corpus / SPOTTER)))
    row = summarize(a).as_dict()
    want = insights(a.session, a.estimator).sources.top(3)
    assert row["top_sources"] == [
        {"kind": s.kind, "name": s.name, "token_requests": s.token_requests, "cost_usd": s.cost_usd}
        for s in want
    ]
    assert row["top_sources"][0]["cost_usd"] >= row["top_sources"][-1]["cost_usd"] > 0
