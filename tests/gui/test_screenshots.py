"""tools/make_screenshots.py: the README's pictures, drawn from the demo session."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
from PySide6.QtGui import QImage

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "make_screenshots.py"


def _script():
    spec = importlib.util.spec_from_file_location("make_screenshots", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_palette_keeps_a_small_swatch_and_merges_near_shades():
    rng = np.random.default_rng(1)
    grey = np.array([[v, v, v] for v in range(250)])  # many shades, 40 px each
    swatch = np.array([[230, 120, 20]])  # one orange square, 100 px
    rgb = np.concatenate([grey, swatch]).astype(np.int64)
    counts = np.concatenate([rng.integers(30, 50, len(grey)), [100]])
    kept = _script().palette(rgb, counts, size=16)
    assert len(kept) == 16
    assert len(grey) in kept  # the orange, although 240 greys are more numerous
    # the greys kept are spread over the range, so every shade has a near one
    kept_greys = sorted(rgb[i][0] for i in kept if i != len(grey))
    assert max(np.diff([0, *kept_greys, 249])) <= 40


def test_renders_the_compaction_dialog_at_1400x900(tmp_path):
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(tmp_path), "compaction-dialog"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 0, run.stderr
    path = tmp_path / "compaction-dialog.png"
    assert str(path) in run.stdout
    image = QImage(str(path))
    assert (image.width(), image.height()) == (1400, 900)
    assert image.format() == QImage.Format.Format_Indexed8
    assert 64 < image.colorCount() <= 256  # a real picture, not a blank window
    assert path.stat().st_size < 400_000


def test_an_unknown_picture_is_a_usage_error(tmp_path):
    out = tmp_path / "images"
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(out), "nope"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert "unknown picture nope" in run.stderr
    assert not out.exists()
