"""``tools/attribution_report.py``: the numbers #30's criteria are read from."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_report_adds_its_files_up(corpus: Path) -> None:
    """Run as a user runs it: one JSON object per file, then a total that is their sum,
    and the best estimator's MAPE over every scored step pooled."""
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "attribution_report.py"), "--json"]
        + [str(corpus / "claude-code")],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    *files, last = [json.loads(x) for x in out.splitlines()]
    total = last["total"]
    assert files and total["files"] == len(files)
    assert total["requests"] == sum(f["requests"] for f in files) > 0
    assert total["over15"] == sum(1 for f in files for s in f["shares"] if s > 15.0)
    assert total["files_of_20_steps"] == sum(1 for f in files if f["scored"] >= 20)
    # the pooled MAPE is over every file's steps, and no better than the best file's: an
    # estimator's pooled MAPE is a weighted mean of its MAPE on each file
    assert 0 < total["pooled_steps"] <= sum(f["scored"] for f in files)
    assert min(f["mape"] for f in files if f["mape"] is not None) <= total["pooled_mape"]
