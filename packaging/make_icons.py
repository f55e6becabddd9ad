"""Render resources/icons/ctxviewer.svg to the PNG sizes desktops want.

    python packaging/make_icons.py

Writes resources/icons/hicolor/<N>x<N>/apps/ctxviewer.png (freedesktop icon
theme layout, installed as is by `ctxviewer --install-desktop`) and
resources/icons/ctxviewer.ico for Windows builds.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QGuiApplication, QImage, QPainter  # noqa: E402
from PySide6.QtSvg import QSvgRenderer  # noqa: E402

SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICONS = Path(__file__).resolve().parents[1] / "resources" / "icons"


def render(renderer: QSvgRenderer, size: int) -> QImage:
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    return image


def main() -> int:
    app = QGuiApplication(sys.argv)  # noqa: F841 - needed for painting
    renderer = QSvgRenderer(str(ICONS / "ctxviewer.svg"))
    if not renderer.isValid():
        print("invalid SVG", file=sys.stderr)
        return 1
    for size in SIZES:
        out = ICONS / "hicolor" / f"{size}x{size}" / "apps" / "ctxviewer.png"
        out.parent.mkdir(parents=True, exist_ok=True)
        render(renderer, size).save(str(out))
        print(out.relative_to(ICONS.parent.parent))
    render(renderer, 256).save(str(ICONS / "ctxviewer.ico"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
