"""Render the README's pictures of the window from the bundled demo session.

    python tools/make_screenshots.py [--out docs/images] [NAME ...]

Each picture (NAME, default all of them) is drawn by Qt's offscreen platform at
1400x900, in a process of its own (a theme is chosen once per process), on
request 37 of the demo: the fullest one, just before its compaction. It is
saved as an 8-bit PNG of 256 colours (a window's flat colours stay exact;
shades of anti-aliasing go to the nearest kept colour), a third of the size
of a true-colour PNG.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SIZE = (1400, 900)
REQUEST = 37  # 150,919 tokens: the last main request before the compaction
# name: (theme, what it shows)
SHOTS = {
    "main-window": ("light", "the breakdown, a memory file selected"),
    "timeline": ("light", "the Timeline tab"),
    "compaction-dialog": ("light", "Tools > Simulate compaction, qwen's strategy"),
    "main-window-dark": ("dark", "the breakdown in the dark theme"),
}
# the breakdown row selected in the main window: its text fills the right-hand pane
SELECTED_ROW = ("Memory files", "/home/maya/code/shelfwise/CLAUDE.md")
# Qt's offscreen platform says this whenever a window is shown; it means nothing here.
NOISE = "This plugin does not support propagateSizeHints"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "names", nargs="*", metavar="NAME", help=f"pictures to render: {', '.join(SHOTS)}"
    )
    p.add_argument("--out", default=str(ROOT / "docs" / "images"), help="folder of the PNG files")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    unknown = [n for n in args.names if n not in SHOTS]
    if unknown:
        p.error(f"unknown picture {', '.join(unknown)} (known: {', '.join(SHOTS)})")
    out = Path(args.out)
    if args.child:  # one picture, in this process
        (name,) = args.names
        render(name, out / f"{name}.png")
        return 0
    out.mkdir(parents=True, exist_ok=True)
    for name in args.names or SHOTS:
        subprocess.run([sys.executable, __file__, "--child", "--out", str(out), name], check=True)
        path = out / f"{name}.png"
        print(f"{path}: {path.stat().st_size // 1024} KB ({SHOTS[name][1]})")
    return 0


def render(name: str, path: Path) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings, Qt, qInstallMessageHandler

    from ctxviewer.gui.app import build_main_window, create_app
    from ctxviewer.gui.app_settings import AppSettings
    from ctxviewer.gui.app_state import AppState
    from ctxviewer.resources import demo_session_path

    theme, _ = SHOTS[name]
    create_app(theme=theme)
    qInstallMessageHandler(
        lambda _mode, _context, message: (
            None if NOISE in message else sys.stderr.write(message + "\n")
        )
    )
    with tempfile.TemporaryDirectory() as tmp:  # neither the user's settings nor their layout
        settings = AppSettings(
            QSettings(str(Path(tmp) / "settings.ini"), QSettings.Format.IniFormat)
        )
        state = AppState()
        window = build_main_window(state, settings)
        analysis = window.loader.load_sync(str(demo_session_path()), state.options)
        window.show_analysis(analysis)
        state.select_request(REQUEST)
        window.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        window.resize(*SIZE)
        window.reset_pane_sizes(SIZE[0])
        window.show()
        settle()  # laid out: the views know their height
        window.requests.scrollTo(window.requests.currentIndex())
        select_breakdown_row(window, SELECTED_ROW)  # its text fills the right-hand pane
        if name == "timeline":
            window.tabs.setCurrentWidget(window.timeline)
        target = window
        if name == "compaction-dialog":
            dialog = window.panels["analysis_panels"].open_compaction()
            wait_until(lambda: dialog.result_ is not None and not dialog.runner.is_busy())
            dialog.resize(*SIZE)
            target = dialog
        settle()
        save_png(target.grab().toImage(), path)
        window.hide()  # not close(): nothing to save


def select_breakdown_row(window, names: tuple[str, ...]) -> None:
    """Make the row at ``names`` (a category, then an item) current in the breakdown tree."""
    from PySide6.QtCore import QModelIndex
    from PySide6.QtWidgets import QAbstractItemView

    panel = window.breakdown
    index = QModelIndex()
    for name in names:
        rows = (panel.proxy.index(r, 0, index) for r in range(panel.proxy.rowCount(index)))
        index = next((i for i in rows if i.data() == name), None)
        if index is None:
            raise SystemExit(f"make_screenshots: no breakdown row {' > '.join(names)} in the demo")
    panel.tree.setCurrentIndex(index)
    panel.tree.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)


def settle(seconds: float = 0.3) -> None:
    """Run the event loop a moment: layouts, deferred paints, timers."""
    end = time.monotonic() + seconds
    wait_until(lambda: time.monotonic() >= end)


def wait_until(done: Callable[[], bool], timeout: float = 60.0) -> None:
    from PySide6.QtCore import QEventLoop
    from PySide6.QtWidgets import QApplication

    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise SystemExit("make_screenshots: the window did not get ready in time")
        QApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
        time.sleep(0.01)


def save_png(image, path: Path) -> None:
    """Save ``image`` as an 8-bit PNG (see ``palette``)."""
    import numpy as np
    from PySide6.QtGui import QImage

    image = image.convertToFormat(QImage.Format.Format_RGB32)
    w, h = image.width(), image.height()
    pixels = np.frombuffer(image.constBits(), dtype=np.uint32).reshape(h, image.bytesPerLine() // 4)
    colors, inverse, counts = np.unique(
        pixels[:, :w] & 0xFFFFFF, return_inverse=True, return_counts=True
    )
    rgb = np.stack([(colors >> 16) & 255, (colors >> 8) & 255, colors & 255], axis=-1)
    chosen = palette(rgb.astype(np.int64), counts)
    distance = ((rgb[:, None, :].astype(np.int64) - rgb[chosen][None, :, :]) ** 2).sum(axis=-1)
    indices = distance.argmin(axis=1).astype(np.uint8)[inverse.ravel()].reshape(h, w)
    indexed = QImage(w, h, QImage.Format.Format_Indexed8)
    indexed.setColorTable([0xFF000000 | int(c) for c in colors[chosen]])
    rows = np.zeros((h, indexed.bytesPerLine()), dtype=np.uint8)
    rows[:, :w] = indices
    memoryview(indexed.bits())[:] = rows.tobytes()
    path.parent.mkdir(parents=True, exist_ok=True)
    if not indexed.save(str(path), "PNG", 0):  # quality 0: the strongest compression
        raise SystemExit(f"make_screenshots: cannot write {path}")


def palette(rgb, counts, size: int = 256):
    """Indices of at most ``size`` colours to keep, chosen greedily: each next one is the colour
    whose pixels would be drawn worst by those kept so far (count x squared distance).

    A window's flat colours are kept exactly, even a small swatch of a colour seen nowhere
    else; what is merged are shades of anti-aliasing close to a kept colour.
    """
    import numpy as np

    chosen = [int(np.argmax(counts))]
    nearest = ((rgb - rgb[chosen[0]]) ** 2).sum(axis=1)
    while len(chosen) < min(size, len(rgb)):
        worst = int(np.argmax(counts * nearest))
        if nearest[worst] == 0:
            break
        chosen.append(worst)
        nearest = np.minimum(nearest, ((rgb - rgb[worst]) ** 2).sum(axis=1))
    return np.array(chosen)


if __name__ == "__main__":
    sys.exit(main())
