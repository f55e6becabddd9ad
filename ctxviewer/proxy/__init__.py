"""Recording proxy: forwards LLM API calls upstream and writes one JSONL line per exchange.

The file format is ``docs/recording-format.md``; ``ctxviewer.ingest`` reads it
back. This layer may import ``ctxviewer.ingest`` (for SSE reassembly),
``aiohttp`` and ``orjson``; never Qt. The GUI runs the proxy through
``ProxyThread``; the CLI through ``ProxyServer`` on its own event loop.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxviewer.proxy.recorder import Recorder
    from ctxviewer.proxy.server import ProxyConfig, ProxyServer
    from ctxviewer.proxy.thread import ProxyThread

__all__ = ["ProxyConfig", "ProxyServer", "ProxyThread", "Recorder"]
_HOMES = {
    "Recorder": "recorder",
    "ProxyConfig": "server",
    "ProxyServer": "server",
    "ProxyThread": "thread",
}


def __getattr__(name: str) -> Any:
    """Import on first use: aiohttp takes a tenth of a second to import, and the
    window only needs it when the user starts the proxy (``ctxviewer.proxy.routes``
    is imported at start-up)."""
    if name in _HOMES:
        return getattr(importlib.import_module(f"ctxviewer.proxy.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
