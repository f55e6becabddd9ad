"""Recording proxy: forwards LLM API calls upstream and writes one JSONL line per exchange.

The file format is ``docs/recording-format.md``; ``ctxviewer.ingest`` reads it
back. This layer may import ``ctxviewer.ingest`` (for SSE reassembly),
``aiohttp`` and ``orjson``; never Qt. The GUI runs the proxy through
``ProxyThread``; the CLI through ``ProxyServer`` on its own event loop.
"""

from __future__ import annotations

from ctxviewer.proxy.recorder import Recorder
from ctxviewer.proxy.server import ProxyConfig, ProxyServer
from ctxviewer.proxy.thread import ProxyThread

__all__ = ["ProxyConfig", "ProxyServer", "ProxyThread", "Recorder"]
