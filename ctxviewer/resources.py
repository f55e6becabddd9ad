"""Where ctxviewer's bundled files are: the demo session, icons, desktop files.

Resources live in the top-level ``resources/`` folder of a source checkout
(editable installs) or next to the package when frozen by PyInstaller.
"""

from __future__ import annotations

import sys
from pathlib import Path


def resources_dir() -> Path:
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        return Path(frozen) / "resources"
    return Path(__file__).resolve().parent.parent / "resources"


def resource(*parts: str) -> Path:
    return resources_dir().joinpath(*parts)


def demo_session_path() -> Path:
    """The bundled demo session opened when ctxviewer starts with no file."""
    return resource("demo-session.jsonl.xz")
