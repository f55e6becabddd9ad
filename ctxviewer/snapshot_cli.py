"""``ctxviewer snapshot``: render the main window of a session offscreen into a PNG.

The GUI package is imported only when the command runs (the rest of the CLI
never needs Qt). Without a display, Qt's offscreen platform is used.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

from ctxviewer.commands.common import (
    UsageError,
    add_estimator_argument,
    add_file_argument,
    add_policy_argument,
    add_request_argument,
    add_window_argument,
)

HELP = "render the main window of a session offscreen to a PNG file"
VIEWS = ("main", "timeline", "bar", "tree")


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_file_argument(p, optional=True)  # left out with --demo
    p.add_argument(
        "--demo", action="store_true", help="render the bundled demo session (instead of FILE)"
    )
    p.add_argument("--out", required=True, help="PNG file to write")
    add_request_argument(p, "the request to show")
    p.add_argument("--size", default="1400x900", help="window size WxH (default 1400x900)")
    p.add_argument(
        "--view",
        default="main",
        choices=VIEWS,
        help="main window (default), timeline tab, the bar, or the tree",
    )
    add_estimator_argument(p)
    add_policy_argument(p)
    add_window_argument(p, default=0)
    p.add_argument(
        "--theme",
        default="auto",
        choices=("auto", "light", "dark"),
        help="colours: the system's (auto, the default), light or dark",
    )


def parse_size(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d+)\s*[xX×]\s*(\d+)\s*", text)
    if not m:
        raise UsageError(f"--size: expected WxH (e.g. 1400x900), got {text!r}")
    w, h = int(m.group(1)), int(m.group(2))
    if not (200 <= w <= 10000 and 150 <= h <= 10000):
        raise UsageError("--size: width must be 200..10000 and height 150..10000")
    return w, h


def _request(text: str) -> int | str:
    if text == "last":
        return text
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"--request: expected an index or 'last', got {text!r}") from None


def _use_offscreen_without_display() -> None:
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def run(args: argparse.Namespace) -> int:
    if args.demo == bool(args.file):
        raise UsageError("give a FILE or --demo (one of them)")
    if args.demo:
        from ctxviewer.resources import demo_session_path

        args.file = str(demo_session_path())
    size = parse_size(args.size)
    request = _request(args.request)
    if args.window < 0:
        raise UsageError("--window must be a positive number of tokens (0 = auto)")
    _use_offscreen_without_display()
    from ctxviewer.gui.app_state import Options  # lazy: Qt only when rendering
    from ctxviewer.gui.snapshot import render_snapshot

    options = Options(args.estimator, args.policy, args.window)
    try:
        render_snapshot(
            args.file,
            args.out,
            request,
            size,
            args.view,
            args.theme,
            options,
            args.format,
            args.session,
        )
    except IndexError as e:
        option = "--session" if "session" in str(e) else "--request"
        raise UsageError(f"{option}: {e}") from None
    except OSError as e:
        raise UsageError(f"--out: {e}") from None
    print(args.out)
    return 0
