"""Run a local server (the recording proxy, the OTLP receiver) until the user stops it."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable
from typing import Protocol

from ctxviewer.errors import UsageError


class Server(Protocol):
    async def start(self) -> int: ...

    async def stop(self) -> None: ...


def serve(server: Server, what: str, banner: Callable[[], None]) -> None:
    """Start ``server``, print ``banner()``, serve until Ctrl+C (SIGINT) or SIGTERM, then stop
    it cleanly. A port that cannot be bound is a ``UsageError`` naming ``what``."""
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl+C is how a server is stopped
        asyncio.run(_serve(server, what, banner))


async def _serve(server: Server, what: str, banner: Callable[[], None]) -> None:
    try:
        await server.start()
    except OSError as e:
        msg = " ".join(str(e).split())
        raise UsageError(f"cannot start {what}: {msg}") from None
    banner()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):  # SIGINT too when a shell ignored it for us
        with contextlib.suppress(NotImplementedError, RuntimeError):  # Windows; not main thread
            asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await server.stop()
