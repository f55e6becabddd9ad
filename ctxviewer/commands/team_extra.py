"""The optional ``team`` extra (pyarrow, DuckDB): imported by ``export`` and ``query``
only, when they run, so the base install and every other command never need it."""

from __future__ import annotations

import importlib
from types import ModuleType

from ctxviewer.errors import UsageError

INSTALL = "pip install 'ctxviewer[team]'"


def require(module: str, command: str) -> ModuleType:
    """``module`` imported, or a ``UsageError`` saying how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        top = module.split(".")[0]
        raise UsageError(f"{command} needs {top}, which is not installed: {INSTALL}") from None
