"""Every view's numbers add up, on every real log (the corpus, tests/data).

For every request of every log, in both counting modes (as the agent's /context counts
and as sent): the categories fill the window (or the prompt that overflowed it), every
category is the sum of its rows and every row the sum of its own rows, no count is
negative, and the breakdown's CSV marks the rows that are leaves, which add up to the
window. The report's JSON is the same breakdown; the window's tree and bar show it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.balance import adds_up
from ctxviewer.analysis.report import breakdown_csv_rows, report_json
from ctxviewer.ingest import detect, load, read_head
from ctxviewer.ingest.base import LoadError
from ctxviewer.resources import demo_session_path

DATA = Path(__file__).resolve().parents[1] / "data"
CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
MOST = 150  # requests checked per log (the first and last of longer logs)


def _is_log(p: Path) -> bool:
    """A file some reader takes (the capture folders also hold the agents' own outputs,
    case files and databases read beside a log)."""
    try:
        detect(read_head(str(p)))
    except LoadError:
        return False
    return True


def _logs() -> list[Path]:
    found = sorted(
        p
        for p in DATA.rglob("*")
        if p.is_file()
        and p.suffix != ".md"
        and "otel-bodies" not in p.parts
        and p.name != "expected.json"
    )
    found.append(demo_session_path())
    if CORPUS.is_dir():
        found += sorted(
            p
            for p in CORPUS.rglob("*")
            if p.is_file() and p.suffix != ".md" and not p.name.endswith(".txt")
        )
    return [p for p in found if _is_log(p)]


def _label(p: Path) -> str:
    return p.name[:60]


def _check(a: Analysis, name: str) -> int:
    n = len(a.session.requests)
    picked = range(n) if n <= MOST else [*range(MOST // 2), *range(n - MOST // 2, n)]
    for i in picked:
        b = a.breakdown(i)
        assert not adds_up(b), f"{name} request {i} ({a.counts}): {adds_up(b)[:3]}"
        rows = list(breakdown_csv_rows(b))
        leaves = sum(r[2] for r in rows if r[5])
        assert leaves == sum(c.tokens for c in b.categories), f"{name} request {i}: CSV"
    return len(picked)


@pytest.mark.parametrize("path", _logs(), ids=_label)
def test_every_view_adds_up(path: Path) -> None:
    session = load(str(path))
    if not session.requests:
        pytest.skip(f"{path.name} has no requests")
    checked = 0
    for counts in ("agent", "wire"):
        a = Analysis(session, counts=counts, pct_override=None)
        checked += _check(a, path.name)
    out = report_json(Analysis(session, pct_override=None))
    total = sum(c["tokens"] for c in out["breakdown"]["categories"])
    assert total >= out["breakdown"]["window"]
    assert checked
