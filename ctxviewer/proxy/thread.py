"""Run a ``ProxyServer`` on its own event loop in a background thread.

The GUI (which owns the main thread's Qt loop) and synchronous tests use this:
``start()`` returns the bound port once the proxy is listening, ``stop()``
shuts it down and joins the thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from concurrent.futures import Future

from ctxviewer.proxy.recorder import FailureCallback, RecordCallback, default_recording_name
from ctxviewer.proxy.rewrite import Rewriter
from ctxviewer.proxy.routes import ANTHROPIC_UPSTREAM, GEMINI_UPSTREAM, OPENAI_UPSTREAM
from ctxviewer.proxy.server import CLIENT_TIMEOUT, DEFAULT_TIMEOUT, ProxyConfig, ProxyServer

START_TIMEOUT = 10.0  # seconds to bind and open the recording
STOP_TIMEOUT = 15.0


class ProxyThread:
    """A recording proxy in a daemon thread. ``port=0`` picks a free port.

    ``out`` defaults to ``./ctxviewer-recording-<timestamp>.jsonl``.

    ``on_record`` (if given) is called on the recorder's thread with each
    exchange record as it is written, ``on_failure`` once with the reason when
    the recording stops (a full disk); a GUI should hand them to its own
    thread (a Qt signal does that).
    """

    def __init__(
        self,
        port: int = 0,
        out: str | os.PathLike[str] | None = None,
        upstream: str = ANTHROPIC_UPSTREAM,
        openai_upstream: str = OPENAI_UPSTREAM,
        host: str = "127.0.0.1",
        timeout: float = DEFAULT_TIMEOUT,
        on_record: RecordCallback | None = None,
        on_failure: FailureCallback | None = None,
        rewriter: Rewriter | None = None,
        client_timeout: float = CLIENT_TIMEOUT,
        gemini_upstream: str = GEMINI_UPSTREAM,
    ) -> None:
        config = ProxyConfig(
            out=out if out is not None else default_recording_name(),
            host=host,
            port=port,
            upstream=upstream,
            openai_upstream=openai_upstream,
            timeout=timeout,
            on_record=on_record,
            on_failure=on_failure,
            rewriter=rewriter,
            client_timeout=client_timeout,
            gemini_upstream=gemini_upstream,
        )
        self.server = ProxyServer(config)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._thread: threading.Thread | None = None

    @property
    def rewriter(self) -> Rewriter | None:
        """The rewriter (thread-safe: preview, commit and undo from any thread)."""
        return self.server.config.rewriter

    @property
    def port(self) -> int | None:
        return self.server.port

    @property
    def url(self) -> str:
        """Base URL for ``ANTHROPIC_BASE_URL`` (append ``/v1`` for ``OPENAI_BASE_URL``)."""
        return self.server.url

    @property
    def out(self) -> str:
        return self.server.recorder.path

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> int:
        """Start the thread and wait until the proxy listens; returns the bound port.

        Raises what the server raised when it could not start (e.g. OSError
        for a taken port or an unwritable file).
        """
        if self._thread is not None:
            raise RuntimeError("ProxyThread already started")
        started: Future[int] = Future()
        self._thread = threading.Thread(
            target=self._run, args=(started,), name="ctxviewer-proxy", daemon=True
        )
        self._thread.start()
        try:
            return started.result(timeout=START_TIMEOUT)
        except BaseException:
            self._thread.join(timeout=STOP_TIMEOUT)
            self._thread = None
            raise

    def stop(self) -> None:
        """Stop the proxy (in-flight exchanges get a short grace period) and join the thread."""
        loop, thread, stopping = self._loop, self._thread, self._stopping
        if loop is None or thread is None or stopping is None:
            return
        with contextlib.suppress(RuntimeError):  # the loop already ended
            loop.call_soon_threadsafe(stopping.set)
        thread.join(timeout=STOP_TIMEOUT)
        self._thread = None

    def wait_for_records(self, count: int, timeout: float = 10.0) -> bool:
        """Block until ``count`` exchanges are on disk; False on timeout."""
        return self.server.recorder.wait_for(count, timeout)

    def _run(self, started: Future[int]) -> None:
        asyncio.run(self._main(started))

    async def _main(self, started: Future[int]) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        try:
            port = await self.server.start()
        except BaseException as e:  # handed to the thread that called start()
            started.set_exception(e)
            return
        started.set_result(port)
        try:
            await self._stopping.wait()
        finally:
            await self.server.stop()

    def __enter__(self) -> ProxyThread:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
