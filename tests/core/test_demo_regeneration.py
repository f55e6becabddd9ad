"""tools/make_demo_session.py gives the bundled demo session byte for byte.

The demo is generated and checked in; this keeps the two together: a change to
the generator or to its texts (tools/demo_session/) comes with the regenerated
resources/demo-session.jsonl.xz, and the file is never edited by hand.
"""

from __future__ import annotations

import lzma
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "resources" / "demo-session.jsonl.xz"


def _first_difference(old: bytes, new: bytes) -> str:
    old_lines, new_lines = old.split(b"\n"), new.split(b"\n")
    for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=False), 1):
        if a != b:
            at = next(
                (k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                min(len(a), len(b)),
            )
            return (
                f"line {i}, byte {at}: bundled {a[max(0, at - 60) : at + 60]!r}, "
                f"generated {b[max(0, at - 60) : at + 60]!r}"
            )
    return f"bundled {len(old_lines)} lines, generated {len(new_lines)}"


def test_regenerating_the_demo_gives_the_same_bytes(tmp_path):
    out = tmp_path / "demo-session.jsonl.xz"
    run = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "make_demo_session.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    bundled, generated = BUNDLED.read_bytes(), out.read_bytes()
    old, new = lzma.decompress(bundled), lzma.decompress(generated)
    assert old == new, (
        "the generator no longer gives the bundled demo: run "
        "`python tools/make_demo_session.py` and check in the result; "
        + _first_difference(old, new)
    )
    assert generated == bundled, "same JSONL, compressed differently (another liblzma?)"
