"""The recording proxy as an asyncio server: ``ProxyServer.start()`` / ``stop()``.

One aiohttp application with a catch-all route, one upstream client session
(kept-alive connections, no automatic decompression so bodies pass through
byte-exact) and one ``Recorder``. Used directly by ``ctxviewer proxy`` and
through ``ProxyThread`` by the GUI and tests.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from dataclasses import dataclass, field

import aiohttp
import orjson
from aiohttp import web

from ctxviewer.proxy import guard
from ctxviewer.proxy.exchange import Exchange
from ctxviewer.proxy.forward import MAX_REQUEST_BYTES, Forwarder
from ctxviewer.proxy.guard import Guard, GuardedSite, OneLineLog, quiet_loop_errors
from ctxviewer.proxy.recorder import FailureCallback, RecordCallback, Recorder
from ctxviewer.proxy.rewrite import Rewriter
from ctxviewer.proxy.routes import (
    ANTHROPIC_UPSTREAM,
    GEMINI_UPSTREAM,
    OPENAI_UPSTREAM,
    upstream_base,
)

log = logging.getLogger("ctxviewer.proxy")

DEFAULT_PORT = 8787
DEFAULT_TIMEOUT = 600.0  # seconds of upstream silence (connect, or between reads)
CLIENT_TIMEOUT = guard.CLIENT_TIMEOUT  # seconds a client's request head, or a silent body
SHUTDOWN_GRACE = 1.0  # seconds in-flight exchanges get to finish on stop()


@dataclass
class ProxyConfig:
    """Everything that configures one proxy run."""

    out: str | os.PathLike[str]
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    upstream: str = ANTHROPIC_UPSTREAM
    openai_upstream: str = OPENAI_UPSTREAM
    timeout: float = DEFAULT_TIMEOUT
    # seconds a client's request head may take, and its body may stall (``guard``)
    client_timeout: float = CLIENT_TIMEOUT
    on_record: RecordCallback | None = field(default=None, repr=False)
    force: bool = False  # append to ``out`` even when it is not a ctxviewer recording
    on_failure: FailureCallback | None = field(default=None, repr=False)  # recording stopped
    # opt-in request rewriting (``proxy.rewrite``); None: every body passes through as sent
    rewriter: Rewriter | None = field(default=None, repr=False)
    gemini_upstream: str = GEMINI_UPSTREAM  # Gemini API calls (GOOGLE_GEMINI_BASE_URL)

    @property
    def upstreams(self) -> dict[str, str]:
        return {
            "anthropic": self.upstream.rstrip("/"),
            "openai": self.openai_upstream.rstrip("/"),
            "gemini": self.gemini_upstream.rstrip("/"),
        }


class ProxyServer:
    """A running (after ``start``) recording proxy bound to ``config.host``.

    ``port`` is the bound port (useful with port 0); ``url`` the base URL to
    give ``ANTHROPIC_BASE_URL``.
    """

    def __init__(self, config: ProxyConfig) -> None:
        """Raises ValueError for an upstream that is not an http(s) base URL."""
        for url in (config.upstream, config.openai_upstream, config.gemini_upstream):
            upstream_base(url)
        self.config = config
        self.recorder = Recorder(
            config.out, on_record=config.on_record, force=config.force, on_failure=config.on_failure
        )
        if config.rewriter is not None:
            rewriter = config.rewriter
            self.recorder.observe = lambda ex, record: _observe(rewriter, ex, record)
        self.port: int | None = None
        self._runner: web.AppRunner | None = None
        self._site: web.BaseSite | None = None
        # client and upstream connections: two descriptors each
        self.guard = Guard(config.client_timeout, fds_per_connection=2)
        self._forwarder: Forwarder | None = None
        self._session: aiohttp.ClientSession | None = None

    @property
    def url(self) -> str:
        """``http://host:port`` as a client on this machine reaches it."""
        if self.port is None:
            raise RuntimeError("the proxy is not started")
        return f"http://{client_host(self.config.host)}:{self.port}"

    async def start(self) -> int:
        """Bind the socket, open the recording and serve; returns the bound port.

        Raises OSError when the file cannot be written or the port is taken.
        """
        try:
            await self._serve()
            self.recorder.open(self.config.upstreams)  # after binding: no file for a taken port
        except BaseException:
            await self.stop()
            raise
        assert self.port is not None
        return self.port

    async def _serve(self) -> None:
        timeout = aiohttp.ClientTimeout(
            total=None, connect=self.config.timeout, sock_read=self.config.timeout
        )
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
            timeout=timeout,
            auto_decompress=False,
            skip_auto_headers=("User-Agent", "Content-Type", "Accept"),
            cookie_jar=aiohttp.DummyCookieJar(),
        )
        self._forwarder = Forwarder(
            self._session, self.config.upstreams, self._record, self.config.rewriter, self.guard
        )
        quiet_loop_errors("ctxviewer proxy: ")
        app = web.Application(client_max_size=MAX_REQUEST_BYTES)
        app.router.add_route("*", "/{tail:.*}", self._forwarder.handle)
        self._runner = web.AppRunner(
            app,
            access_log=None,
            handle_signals=False,
            shutdown_timeout=SHUTDOWN_GRACE,
            # request bodies reach the handler as sent (gzip, br, zstd...) and are forwarded
            # so: the recorder decodes its own copy
            auto_decompress=False,
            # a client that hangs up cancels its exchange at once, even while the
            # upstream is silent
            handler_cancellation=True,
            logger=OneLineLog(log, "ctxviewer proxy: "),  # a bad request: one line, no trace
        )
        await self._runner.setup()
        self._site = GuardedSite(self._runner, self.config.host, self.config.port, self.guard)
        await self._site.start()
        self.port = bound_port(self._runner)

    async def stop(self) -> None:
        """Stop listening, let in-flight exchanges finish briefly, close the recording.

        Exchanges still running after the grace period (a long stream) are cut
        and recorded with error kind ``proxy_stopped``.
        """
        if self._site is not None:
            await self._site.stop()
            self._site = None
        if self._forwarder is not None:
            await self._forwarder.drain(SHUTDOWN_GRACE)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._session is not None:
            await self._session.close()
            self._session = None
        # the writer thread finishes the lines still queued; the loop does not wait on it
        await asyncio.get_running_loop().run_in_executor(None, self.recorder.close)

    def _record(self, ex: Exchange) -> None:
        """Hand an ended exchange to the recorder's writer thread."""
        self.recorder.submit(ex)


def _observe(rewriter: Rewriter, ex: Exchange, record: dict[str, object]) -> None:
    """Calibrate the rewriter on the API's count of what went upstream (its compact JSON
    size: whitespace is not counted by the APIs)."""
    if ex.conversation is None or not isinstance(record.get("usage"), dict):
        return
    request = record.get("request")
    if not isinstance(request, dict):
        return
    body = request.get("upstream_body", request.get("body"))
    if isinstance(body, dict) and "_raw" not in body:
        rewriter.observe(ex.conversation, len(orjson.dumps(body)), record["usage"])


def client_host(host: str) -> str:
    """The host a local client should use for a listening address (wildcards -> loopback)."""
    if host in ("", "0.0.0.0"):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def bound_port(runner: web.AppRunner) -> int:
    for address in runner.addresses:
        if isinstance(address, tuple) and len(address) >= 2:
            return int(address[1])
    raise OSError("the proxy socket did not bind")


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach."""
    if host in ("localhost", "127.0.0.1", "::1"):
        return True
    try:
        return socket.inet_aton(host)[0] == 127
    except OSError:
        return False
