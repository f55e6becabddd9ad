"""Where ctxviewer's bundled files are: the demo session, icons, desktop files.

Resources live in the top-level ``resources/`` folder of a source checkout,
reached through the ``ctxviewer/_resources`` link, which a wheel turns into a
folder of the installed package; next to the program when frozen by
PyInstaller.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def resources_dir() -> Path:
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        return Path(frozen) / "resources"
    packaged = Path(__file__).resolve().parent / "_resources"
    if packaged.is_dir():  # a wheel's copy, or the checkout's link
        return packaged
    return Path(__file__).resolve().parent.parent / "resources"  # a checkout without links


def resource(*parts: str) -> Path:
    return resources_dir().joinpath(*parts)


def demo_session_path() -> Path:
    """The bundled demo session opened when ctxviewer starts with no file."""
    return resource("demo-session.jsonl.xz")


def is_demo(path: str) -> bool:
    """Whether ``path`` is the bundled demo session (kept out of Open Recent)."""
    try:
        return os.path.samefile(path, demo_session_path())
    except OSError:
        return False
