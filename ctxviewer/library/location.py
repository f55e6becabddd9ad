"""Where the library keeps its index: the user's cache directory.

- ``$CTXVIEWER_LIBRARY_DIR`` when set (tests, or a library kept elsewhere);
- else ``$CTXVIEWER_HOME/cache/library`` when ``CTXVIEWER_HOME`` is set (as the
  other caches of ctxviewer);
- else ``<cache>/ctxviewer/library``, ``<cache>`` being ``$XDG_CACHE_HOME`` or
  ``~/.cache`` on Linux, ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows.

Everything in it can be rebuilt from the session files: deleting the folder
only costs a new first index (the folders the user added are kept there too).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

DB_NAME = "library.sqlite3"


def cache_home() -> Path:
    """The platform's per-user cache directory."""
    env = os.environ
    if sys.platform == "win32":
        local = env.get("LOCALAPPDATA")
        return Path(local) if local else Path.home() / "AppData" / "Local"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches"
    xdg = env.get("XDG_CACHE_HOME")
    return Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"


def library_dir() -> Path:
    """The folder of the index (not created here)."""
    env = os.environ
    if env.get("CTXVIEWER_LIBRARY_DIR"):
        return Path(env["CTXVIEWER_LIBRARY_DIR"]).expanduser()
    if env.get("CTXVIEWER_HOME"):
        return Path(env["CTXVIEWER_HOME"]).expanduser() / "cache" / "library"
    return cache_home() / "ctxviewer" / "library"


def db_path() -> Path:
    return library_dir() / DB_NAME
