"""Walk the window on a real X server, the way a new user would, and take screenshots.

    python bench/window_walk.py [FILE ...] [--out DIR] [--display :78]
                                [--sizes 1024x700,1400x900,1600x1000] [--themes light,dark]

Starts Xvfb and openbox on ``--display`` (installing Xvfb, openbox, xdotool and
ImageMagick with apt-get only when one is missing and this runs as root), then
for every theme, size and file (the bundled demo session without FILE) runs
the app (Qt's xcb platform, its own empty settings) and drives it with real X
input from ``xdotool``: the tabs by their shortcuts, the timeline's hover
readout on the last request and its right-click menu, the prompt-cache view,
a Window size typed in the spin box, the request list's right-click menu,
Help > About, and File > Export bar as PNG with ``/proc/kmsg`` typed into the
dialog. Each step is a screenshot of the window (menus and dialogs included)
in ``--out``; a contact sheet per run joins them. The event loop is timed all
along: a step during which the app stopped answering for more than a second
is reported (a freeze), and one that never comes back ends the run.

The screenshots are for looking at; the behaviour is asserted by the test
suite (tests/gui), which needs none of this.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOOLS = {"Xvfb": "xvfb", "openbox": "openbox", "xdotool": "xdotool", "import": "imagemagick"}

DRIVER = r'''
import json, os, subprocess, sys, threading, time
from PySide6.QtCore import QPoint, QPointF, QTimer
from PySide6.QtWidgets import QApplication
from ctxviewer.gui.app import build_main_window, create_app

path, width, height, theme, out, prefix = sys.argv[1:7]
width, height = int(width), int(height)
app = create_app([], theme)
window = build_main_window()
window.resize(width, height)
window.move(0, 0)
window.show()
ticks = [time.perf_counter()]
timer = QTimer()
timer.setInterval(10)
timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
timer.start()
last_tick = [time.perf_counter()]

def watchdog():  # the app does not come back: say so and end the run
    while True:
        time.sleep(1)
        if time.perf_counter() - ticks[-1] > 30:
            print(json.dumps({"frozen": True, "step": current[0]}), flush=True)
            os._exit(3)
current = ["start"]
threading.Thread(target=watchdog, daemon=True).start()

def pump(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        app.processEvents()
        time.sleep(0.01)

def xdo(*args):
    subprocess.run(["xdotool", *args], check=False)

def at(widget, point=None):  # a widget's point (its centre by default) on the screen
    p = widget.mapToGlobal(point if point is not None else widget.rect().center())
    return str(p.x()), str(p.y())

steps = []
frame = window.frameGeometry()

def shot(name, wait=0.6):
    """A screenshot of the window's part of the screen. From the GUI thread it first
    lets the app paint; from a helper thread (a modal dialog runs its own loop on the
    GUI thread) it waits ``wait`` seconds."""
    if threading.current_thread() is threading.main_thread():
        pump(wait)
    else:
        time.sleep(wait)
    file = os.path.join(out, f"{prefix}-{len(steps):02d}-{name}.png")
    subprocess.run(["import", "-window", "root", "-crop",
                    f"{frame.width() + 40}x{frame.height() + 40}+0+0", "+repage", file],
                   check=False)
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    steps.append({"step": name, "png": file, "longest_stall_s": round(max(gaps or [0]), 3)})
    ticks[:] = [ticks[-1]]


def modal(steps_fn):
    """Run ``steps_fn`` (xdotool and screenshots only) on a helper thread while the GUI
    thread runs: what it opens may be a modal dialog, whose loop would hold ours."""
    t = threading.Thread(target=steps_fn)
    t.start()
    while t.is_alive():
        pump(0.05)

window.open_file(path)
start = time.perf_counter()
while (window.state.analysis is None or window.loader.is_busy()) and \
        time.perf_counter() - start < 60:
    pump(0.05)
xdo("windowactivate", "--sync", str(int(window.winId())))
pump(0.3)
current[0] = "breakdown"; shot("breakdown")
current[0] = "timeline"; xdo("key", "ctrl+2"); shot("timeline")
plot = window.timeline.plot
vb = plot.getPlotItem().vb
def point_on_screen(i):
    d = plot.data
    scene = vb.mapViewToScene(QPointF(float(d.main.x[i]), float(d.main.y[i])))
    return plot.viewport().mapToGlobal(plot.mapFromScene(scene))
if len(plot.data.main):
    current[0] = "hover"
    p = point_on_screen(-1)
    xdo("mousemove", str(p.x()), str(p.y()))
    pump(0.3)
    xdo("mousemove", str(p.x() + 1), str(p.y()))
    shot("timeline-hover-last")
    k = int(plot.data.main.y.argmax())
    p = point_on_screen(k)
    xdo("mousemove", str(p.x()), str(p.y())); pump(0.3)
    xdo("mousemove", str(p.x() + 1), str(p.y()))
    shot("timeline-hover-highest")
current[0] = "timeline menu"
corner = vb.sceneBoundingRect()
empty = plot.viewport().mapToGlobal(plot.mapFromScene(QPointF(corner.right() - 30,
                                                              corner.top() + corner.height() / 2)))
xdo("mousemove", str(empty.x()), str(empty.y()))
xdo("click", "3")
shot("timeline-right-click")
xdo("key", "Escape")
current[0] = "cache view"
plot.menu_actions["cache"].trigger()
if len(plot.data.main):
    p = point_on_screen(-1)
    xdo("mousemove", str(p.x()), str(p.y())); pump(0.3)
    xdo("mousemove", str(p.x() + 1), str(p.y()))
shot("timeline-cache-view")
plot.menu_actions["cache"].trigger()
current[0] = "window size"
spin = window.controls.window_spin
x, y = at(spin)
xdo("mousemove", x, y); xdo("click", "--repeat", "3", "1")
xdo("type", "--delay", "40", "64000"); xdo("key", "Return")
pump(1.0)
shot("timeline-window-64000")
current[0] = "compare"; xdo("key", "ctrl+3"); pump(1.5); shot("compare")
current[0] = "insights"; xdo("key", "ctrl+4"); pump(1.5); shot("insights")
current[0] = "list menu"
table = window.requests
x, y = at(table.viewport(), QPoint(60, 30))
xdo("mousemove", x, y); xdo("click", "3")
shot("list-right-click")
xdo("key", "Escape")
current[0] = "about"; xdo("key", "ctrl+1"); pump(0.3)
modal(lambda: (xdo("key", "alt+h"), time.sleep(0.4), xdo("key", "a"), shot("about", 1.0),
               xdo("key", "Escape"), time.sleep(0.3)))
current[0] = "shortcuts"
modal(lambda: (xdo("key", "F1"), shot("shortcuts", 1.0), xdo("key", "Escape"), time.sleep(0.3)))

def export_proc():
    xdo("key", "alt+f"); time.sleep(0.4); xdo("key", "p"); time.sleep(1.0)
    xdo("key", "ctrl+a"); xdo("type", "--delay", "50", "/proc/km")
    shot("export-typing-proc", 1.5)
    xdo("type", "--delay", "50", "sg"); xdo("key", "Return")
    shot("export-refused", 1.0)
    xdo("key", "Return"); time.sleep(0.3); xdo("key", "Escape"); time.sleep(0.3)
current[0] = "export /proc"; modal(export_proc)
current[0] = "after export"; xdo("key", "ctrl+2"); shot("timeline-after-export")
window.loader.cancel()
print(json.dumps({"frozen": False, "steps": steps}), flush=True)
os._exit(0)
'''


def ensure_tools() -> None:
    missing = [pkg for tool, pkg in TOOLS.items() if shutil.which(tool) is None]
    if not missing:
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        sys.exit(f"window_walk: install {' '.join(missing)} first")
    subprocess.run(["apt-get", "install", "-y", "-q", *missing], check=True)


def start_display(display: str) -> list[subprocess.Popen]:
    xvfb = subprocess.Popen(
        ["Xvfb", display, "-screen", "0", "1920x1200x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(1.0)
    env = dict(os.environ, DISPLAY=display)
    wm = subprocess.Popen(
        ["openbox"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    time.sleep(1.0)
    return [wm, xvfb]


def run(path: str, size: str, theme: str, out: Path, display: str) -> dict:
    width, height = size.split("x")
    prefix = f"{Path(path).name.split('.')[0][:24]}-{size}-{theme}"
    home = Path(tempfile.mkdtemp(prefix="walk-home-"))
    env = dict(
        os.environ,
        DISPLAY=display,
        QT_QPA_PLATFORM="xcb",
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        CTXVIEWER_HOME=str(home / ".ctxviewer"),
        CTXVIEWER_INSTANCE=f"walk-{home.name}",
    )
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, path, width, height, theme, str(out), prefix],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    shutil.rmtree(home, ignore_errors=True)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    result = json.loads(lines[-1]) if lines else {"frozen": None, "error": done.stderr[-2000:]}
    result.update(file=path, size=size, theme=theme)
    pngs = [s["png"] for s in result.get("steps", [])]
    if pngs and shutil.which("montage"):
        sheet = out / f"{prefix}-sheet.png"
        subprocess.run(
            ["montage", *pngs, "-tile", "4x", "-geometry", "640x+4+4", str(sheet)], check=False
        )
        result["sheet"] = str(sheet)
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--out", default="/tmp/ctxviewer-walk")
    ap.add_argument("--display", default=":78")
    ap.add_argument("--sizes", default="1024x700,1400x900,1600x1000")
    ap.add_argument("--themes", default="light,dark")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from ctxviewer.resources import demo_session_path

    files = args.files or [str(demo_session_path())]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    ensure_tools()
    procs = start_display(args.display)
    frozen = 0
    try:
        for path in files:
            for theme in args.themes.split(","):
                for size in args.sizes.split(","):
                    r = run(path, size, theme, out, args.display)
                    stalls = [s for s in r.get("steps", []) if s["longest_stall_s"] > 1.0]
                    frozen += bool(r.get("frozen")) or bool(stalls)
                    print(
                        json.dumps(
                            {
                                k: r.get(k)
                                for k in ("file", "size", "theme", "frozen", "sheet", "error")
                            }
                            | {"stalls": stalls, "steps": len(r.get("steps", []))}
                        ),
                        flush=True,
                    )
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=10)
    return 1 if frozen else 0


if __name__ == "__main__":
    sys.exit(main())
