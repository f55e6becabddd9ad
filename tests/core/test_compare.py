from __future__ import annotations

import csv
import io
import json

import pytest

from ctxviewer.analysis.compare.scoring import compare, comparison_json
from ctxviewer.analysis.tokens import calibrate
from ctxviewer.analysis.tokens.registry import default_names
from ctxviewer.cli import main
from ctxviewer.ingest import load
from ctxviewer.model import Block, Message, Request, Session, Usage

LEMMY = "claude-trace/badlogic__lemmy__apps_claude-trace_test_test-traffic.jsonl"
CAPTURED = "captured/claude-code-2.1.197-tui.claude-trace.jsonl"


def _req(i: int, text: str, api: int | None, complete: bool = True) -> Request:
    msg = Message("user", (Block("text", text),))
    usage = None if api is None else Usage(input_tokens=api)
    return Request(i, "m", None, (), (), (msg,), usage, complete)


def test_rows_errors_and_exclusions():
    s = Session(
        "x",
        "test",
        [
            _req(0, "a" * 400, 110),
            _req(1, "b" * 400, 0),
            _req(2, "c" * 800, None),
            _req(3, "d" * 40, 9, complete=False),
            _req(4, "e" * 800, 190),
        ],
    )
    c = compare(s, ["chars4"])
    assert [r.index for r in c.rows] == [0, 4]
    assert c.excluded == {"no_usage": 2, "transcript_only": 1}
    assert c.rows[0].error("chars4") == -10 and c.rows[1].error("chars4") == 10
    st = c.summary["chars4"]
    assert st.n == 2 and st.mape == pytest.approx((10 / 110 + 10 / 190) / 2)
    assert st.bias == pytest.approx((-10 / 110 + 10 / 190) / 2)
    assert st.max_abs_pct == pytest.approx(10 / 110)
    assert any(n.startswith("1 transcript request without a clean step") for n in c.notes)


def test_transcripts_are_scored_on_their_exact_growth(corpus):
    """Every clean step of a real transcript is a row: the API's delta against the
    estimate of what was added; a step with thinking whose response the API counted,
    its delta less that count against the estimate of the rest."""
    from ctxviewer.analysis.attribution import clean_steps
    from ctxviewer.analysis.tokens.estimators import get_estimator
    from ctxviewer.ingest import load

    s = load(
        str(
            corpus
            / "claude-code"
            / (
                "marot__spotter__test_fixtures_transcripts_fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
            )
        )
    )
    c = compare(s, ["qwen", "cl100k", "calibrated"])
    want = {st.index: st for st in clean_steps(s, get_estimator("qwen"))}
    assert len(want) > 100 and [r.index for r in c.rows] == sorted(want)
    for r in c.rows:
        st = want[r.index]
        rest = st.added if st.clean else [m for m in st.added if m.role != "assistant"]
        api = st.delta if st.clean else st.delta - st.output
        assert r.kind == "delta" and r.api_prompt_tokens == api > 0
        assert r.estimates["qwen"] == get_estimator("qwen").messages(rest)
    assert sum(1 for st in want.values() if not st.clean) > 10  # thinking, counted
    assert c.summary["qwen"].n == len(want) and c.summary["calibrated"].n > 0
    assert c.summary["calibrated"].mape < c.summary["qwen"].mape
    assert c.excluded["transcript_only"] == len(s.requests) - len(want)


def test_held_out_uses_only_earlier_requests():
    pts = [calibrate.Point("g", 100 * (k + 1), {"b": 50 * (k + 1)}) for k in range(4)]
    preds = calibrate.held_out(pts, ["b"], how="ratio")
    assert preds[0].estimate is None
    assert [p.estimate for p in preds[1:]] == [200, 300, 400]
    # a change after request k cannot affect the prediction of k
    changed = pts[:2] + [calibrate.Point("g", 10, {"b": 150}), pts[3]]
    assert calibrate.held_out(changed, ["b"], how="ratio")[2].estimate == 300
    # a new group starts unfitted (ratio 1.0)
    other = calibrate.held_out(pts + [calibrate.Point("h", 7, {"b": 5})], ["b"])
    assert other[-1].estimate == 5 and not other[-1].fitted


@pytest.mark.parametrize("name", [LEMMY, CAPTURED])
def test_calibrated_beats_best_uncalibrated_on_held_out_requests(corpus, name):
    """The done-when of the compare issue, on every claude-trace log with held-out requests."""
    c = compare(load(str(corpus / name)), default_names())
    held = c.calibration["held_out_mape"]
    best = min(v for k, v in held.items() if k != "calibrated" and v is not None)
    assert held["calibrated"] < best


def test_calibrated_details_on_lemmy(corpus):
    c = compare(load(str(corpus / LEMMY)), default_names())
    held = c.calibration["held_out_mape"]
    best = min(v for k, v in held.items() if k != "calibrated")
    assert held["calibrated"] < best  # 0.045 vs shannon's 0.090 when written
    assert c.summary["calibrated"].n == len(c.rows) - 1  # the first request is not predicted
    # the pure ratio (per model and role) is reported too; it does not win here
    r = compare(load(str(corpus / LEMMY)), default_names(), calibrate_fit="ratio")
    assert r.calibration["held_out_mape"]["calibrated"] > best * 0.9


@pytest.mark.parametrize("name", [LEMMY, CAPTURED])
def test_compare_json_contract(corpus, capsys, name):
    assert main(["compare", str(corpus / name), "--json", "--request", "last"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["estimators"] == [*default_names()]
    assert {"qwen", "chars4", "shannon", "heuristic", "cl100k", "o200k", "calibrated"} <= set(
        out["estimators"]
    )
    row = out["rows"][0]
    assert set(row) >= {"index", "api_prompt_tokens", "estimates"}
    for n in out["estimators"]:
        assert set(out["summary"][n]) >= {"mape", "bias", "max_abs_pct", "n"}
        assert out["summary"][n]["mape"] is not None
    assert out["excluded"]["transcript_only"] == 0
    cats = out["categories"]
    assert set(cats["estimates"]["qwen"]) >= {
        "system_prompt",
        "builtin_tools",
        "mcp_tools",
        "skills",
        "memory_files",
        "messages",
    }
    assert cats["messages_by_subtraction"]["qwen"] is not None


def test_compare_text_and_csv(corpus, capsys):
    assert (
        main(["compare", str(corpus / LEMMY), "--estimators", "qwen,cl100k", "--request", "5"]) == 0
    )
    text = capsys.readouterr().out
    assert "MAPE" in text and "Categories of request 5" in text
    assert "messages (API - overhead)" in text
    assert main(["compare", str(corpus / LEMMY), "--estimators", "qwen", "--csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 64 and rows[0]["index"] == "0" and rows[0]["qwen"]


def test_transcript_only_is_excluded(corpus, capsys):
    spotter = next((corpus / "claude-code").glob("marot__spotter__*.jsonl"), None)
    if spotter is None:
        pytest.skip("no spotter transcript in the corpus")
    c = compare(load(str(spotter)), ["qwen"])
    assert c.rows == () and c.excluded["transcript_only"] > 0
    assert comparison_json(c)["excluded"]["transcript_only"] == c.excluded["transcript_only"]


@pytest.mark.parametrize(
    "argv", [["--estimators", "nope"], ["--calibrate-base", "nope"], ["--request", "999"]]
)
def test_bad_input_is_one_line_exit_2(corpus, capsys, argv):
    assert main(["compare", str(corpus / LEMMY), *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ctxviewer:")


def test_the_affine_fit_weighs_relative_errors():
    """MAPE scores relative errors, so the fit minimizes them: a few large requests do
    not set the line for the many small ones (a transcript's steps)."""
    # small steps of 100-400 estimated tokens that cost 60 + 1.5x, and two large ones
    # that cost 1.2x: plain squares follow the large ones
    small = [calibrate.Point("g", round(60 + 1.5 * e), {"b": e}) for e in range(100, 420, 40)]
    large = [calibrate.Point("g", round(1.2 * e), {"b": e}) for e in (20_000, 30_000)]
    f = calibrate.affine(small + large, "b")
    assert f is not None
    errs = [abs(f.apply(p.estimates["b"] or 0) - p.api) / p.api for p in small + large]
    assert sum(errs) / len(errs) < 0.12
    assert all(e < 0.12 for e in errs[: len(small)])


@pytest.mark.parametrize(
    "name",
    [
        "claude-code/d-kimuson__claude-code-viewer__mock-global-claude-dir_projects_"
        "sample-project_fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
        "claude-code/chiphuyen__sniffly__tests_mock-data_-Users-chip-dev-ai-music_"
        "d3ad4cdc-5657-435d-98fa-0035d53e383d.jsonl",
        "claude-code/marot__spotter__test_fixtures_transcripts_"
        "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl",
    ],
)
def test_calibrated_beats_best_uncalibrated_on_transcript_steps(corpus, name):
    """Real transcripts scored on their exact steps, most of a few hundred tokens."""
    c = compare(load(str(corpus / name)), default_names())
    held = c.calibration["held_out_mape"]
    best = min(v for k, v in held.items() if k != "calibrated" and v is not None)
    assert held["calibrated"] < best
