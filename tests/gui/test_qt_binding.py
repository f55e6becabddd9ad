"""The Qt binding in use must not corrupt Python's reference counts.

PySide6-Essentials 6.12.0 drops a reference to None on every call of a void
method (QPen.setWidth, QPainter.drawLine...). On Python < 3.12 the interpreter
then aborts with "none_dealloc" after a few thousand paints; pyproject.toml
excludes that release there. Run in a subprocess: a bad binding kills it.
"""

from __future__ import annotations

import subprocess
import sys

CHECK = """
import os, sys
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtGui import QGuiApplication, QPen
app = QGuiApplication([])
pen = QPen()
before = sys.getrefcount(None)
for _ in range(20000):
    pen.setWidth(2)
print(sys.getrefcount(None) - before)
"""


def test_void_calls_keep_none_alive():
    proc = subprocess.run(
        [sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-500:]
    assert abs(int(proc.stdout.strip().splitlines()[-1])) < 100
