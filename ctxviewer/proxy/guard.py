"""Keep a local server (the proxy, the OTLP receiver) serving whatever its clients do.

A hostile or broken local client can open thousands of connections and send
half a request on each, send a body one byte a minute, or make the server log a
traceback per bad request line. ``Guard`` watches every connection of a
server's listening socket (``GuardedSite``):

- a request whose head does not arrive whole within ``timeout`` seconds of its
  first byte (or of the connection), and a body that stalls ``timeout`` seconds
  (``read_body``: answered 408), are closed;
- the open connections are capped below the process's descriptor limit
  (``connection_cap``): at the cap, the connection that has been silent longest
  among those not being answered is closed to make room, so a flood of
  half-sent connections can never keep a real client out;
- a keep-alive connection idle for ``IDLE_TIMEOUT`` seconds is closed;
- connections are accepted a few at a time (``Listener``), so the evictions
  they cause have closed their descriptors before more are taken, and a process out of
  descriptors anyway waits ``ACCEPT_RETRY`` seconds and tries again, counted in
  ``counts["accept_waits"]``, instead of logging an error per attempt.

``OneLineLog`` turns aiohttp's per-request error logs into one line each, with
no traceback; ``quiet_loop_errors`` does the same for the event loop's.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import socket
import sys
import time
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from ctxviewer.proxy.redact import redact_text

CLIENT_TIMEOUT = 20.0  # seconds a request's head may take, and a body may stall
IDLE_TIMEOUT = 60.0  # seconds a kept-alive connection may wait for its next request
BACKLOG = 64  # connections the kernel queues before they are accepted: no descriptors yet
RESERVED_FDS = 128  # descriptors kept for the files, the loop, connections being closed
FALLBACK_CAP = 512  # connections, where the descriptor limit cannot be read
ACCEPT_RETRY = 0.2  # seconds to wait when the process is out of descriptors
ACCEPT_BATCH = 16  # connections accepted before the guard sees them (< RESERVED_FDS)
_OUT_OF = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}

READING, BODY, BUSY, IDLE = "reading", "body", "busy", "idle"
STALLED = "stalled"  # answered 408: closed at the next sweep, not lingered on


def connection_cap(fds_per_connection: int) -> int:
    """Connections a server may hold open: its descriptor limit, less a reserve,
    over the descriptors each connection takes (2 for the proxy: the client's and
    the upstream's)."""
    try:
        import resource
    except ImportError:  # Windows
        return FALLBACK_CAP
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft > 1 << 16:
        soft = 1 << 16
    return max(8, (soft - RESERVED_FDS) // fds_per_connection)


class BodyError(Exception):
    """A request body that could not be read: ``status`` is the answer to give."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(slots=True)
class _Conn:
    """One watched connection: what it is doing, since when, and its last byte."""

    transport: asyncio.Transport
    state: str
    since: float  # when the state began
    last: float  # when the last byte came


class Guard:
    """Watches the connections of one server; ``counts`` says what it closed."""

    def __init__(
        self,
        timeout: float = CLIENT_TIMEOUT,
        fds_per_connection: int = 1,
        cap: int | None = None,
        idle_timeout: float = IDLE_TIMEOUT,
    ) -> None:
        self.timeout = timeout
        self.idle_timeout = idle_timeout
        self.cap = cap if cap is not None else connection_cap(fds_per_connection)
        self.counts = {"timed_out": 0, "evicted": 0, "refused": 0, "accept_waits": 0}
        self._conns: dict[object, _Conn] = {}  # by the connection's aiohttp protocol
        self._sweep: asyncio.TimerHandle | None = None

    @property
    def open(self) -> int:
        return len(self._conns)

    def start(self) -> None:
        self._schedule()

    def stop(self) -> None:
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None

    def protocol_factory(
        self, inner: Callable[[], asyncio.Protocol]
    ) -> Callable[[], asyncio.Protocol]:
        """``inner`` (aiohttp's ``Server``) with each connection watched."""
        return lambda: _Watched(self, inner())

    @contextlib.contextmanager
    def serving(self, request: web.BaseRequest) -> Iterator[None]:
        """Around a request handler: its body is being read until ``read_body``
        returns; after the handler, the connection is idle."""
        conn = self._conns.get(request.protocol)
        self._set(conn, BODY)
        try:
            yield
        finally:
            if conn is not None and conn.state != STALLED:
                self._set(conn, IDLE)

    async def read_body(self, request: web.BaseRequest, limit: int) -> bytes:
        """The request's whole body. Raises ``BodyError``: 408 when it stalls
        ``timeout`` seconds, 413 past ``limit`` bytes, 400 when cut or malformed."""
        chunks: list[bytes] = []
        size = 0
        while True:
            try:
                chunk = await asyncio.wait_for(request.content.readany(), self.timeout)
            except TimeoutError:
                self._set(self._conns.get(request.protocol), STALLED)
                raise BodyError(
                    408, f"the request body stalled ({self.timeout:g} s without a byte)"
                ) from None
            except (ConnectionError, HttpProcessingError) as e:
                raise BodyError(
                    400, f"the request body was cut or malformed ({_one_line(e)})"
                ) from None
            if not chunk:
                break
            size += len(chunk)
            if size > limit:
                raise BodyError(413, f"the request body is over {limit} bytes")
            chunks.append(chunk)
        self._set(self._conns.get(request.protocol), BUSY)
        return b"".join(chunks)

    # -- the watched connections --------------------------------------------------

    def _opened(self, key: object, transport: asyncio.Transport) -> bool:
        if len(self._conns) >= self.cap and not self._evict():
            self.counts["refused"] += 1
            transport.abort()
            return False
        now = time.monotonic()
        self._conns[key] = _Conn(transport, READING, now, now)
        return True

    def _heard(self, key: object) -> None:
        conn = self._conns.get(key)
        if conn is not None:
            conn.last = time.monotonic()
            if conn.state == IDLE:
                conn.state, conn.since = READING, conn.last

    def _closed(self, key: object) -> None:
        self._conns.pop(key, None)

    def _set(self, conn: _Conn | None, state: str) -> None:
        if conn is not None:
            conn.state, conn.since = state, time.monotonic()

    def _evict(self) -> bool:
        """Close the connection silent longest among those not being answered."""
        idle = [c for c in self._conns.values() if c.state != BUSY]
        if not idle:
            return False
        victim = min(idle, key=lambda c: c.last)
        self.counts["evicted"] += 1
        victim.transport.abort()
        for key, conn in list(self._conns.items()):  # abort() tells the protocol later
            if conn is victim:
                del self._conns[key]
        return True

    def _schedule(self) -> None:
        loop = asyncio.get_running_loop()
        self._sweep = loop.call_later(min(1.0, self.timeout / 4), self._sweep_now)

    def _sweep_now(self) -> None:
        now = time.monotonic()
        for conn in list(self._conns.values()):
            if (
                conn.state == READING
                and now - conn.since > self.timeout
                or conn.state == BODY
                and now - conn.last > 2 * self.timeout
            ):
                self.counts["timed_out"] += 1
                conn.transport.abort()
            elif (
                conn.state == STALLED or conn.state == IDLE and now - conn.since > self.idle_timeout
            ):
                conn.transport.close()  # what was answered is sent first
        self._schedule()


class _Watched(asyncio.Protocol):
    """An aiohttp connection, as the guard sees it: what arrives is noted, then
    handed on unchanged."""

    def __init__(self, guard: Guard, inner: asyncio.Protocol) -> None:
        self._guard = guard
        self._inner = inner
        self._admitted = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._admitted = self._guard._opened(self._inner, transport)
        if self._admitted:
            self._inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self._admitted:
            self._guard._heard(self._inner)
            self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received() if self._admitted else None

    def connection_lost(self, exc: Exception | None) -> None:
        if self._admitted:
            self._guard._closed(self._inner)
            self._inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()


class Listener:
    """The listening sockets of a site and the tasks accepting on them: what
    ``loop.create_server`` would be, except that the connections accepted are
    handed to the guard before more are."""

    def __init__(self, sockets: list[socket.socket]) -> None:
        self.sockets = sockets
        self._tasks: list[asyncio.Task[None]] = []

    @classmethod
    def bind(cls, host: str, port: int) -> Listener:
        """Bound to every address ``host`` names (all interfaces for ""), as
        ``create_server`` binds: a family the machine lacks is passed over; port 0
        picks one port for all. Raises OSError saying the address."""
        infos = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
        bound: list[socket.socket] = []
        try:
            for family, kind, proto, _, address in dict.fromkeys(infos):
                try:
                    sock = socket.socket(family, kind, proto)
                except OSError:  # a family this machine does not have
                    continue
                if sys.platform != "win32":
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6:
                    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                if port == 0 and bound:  # the port the first one got
                    address = (address[0], bound[0].getsockname()[1], *address[2:])
                try:
                    sock.bind(address)
                except OSError as e:
                    sock.close()
                    if e.errno == errno.EADDRNOTAVAIL:  # the family is not enabled
                        continue
                    where, at = str(address[0]), str(address[1])
                    said = OSError(
                        f"cannot listen on {where} port {at}: {(e.strerror or str(e)).lower()}"
                    )
                    said.errno = e.errno  # the cause's, for a caller that asks
                    raise said from None
                bound.append(sock)
                sock.listen(BACKLOG)
                sock.setblocking(False)
        except OSError:
            for sock in bound:
                sock.close()
            raise
        if not bound:
            raise OSError(f"cannot listen on {host!r}: none of its addresses can be bound")
        return cls(bound)

    def serve(self, guard: Guard, factory: Callable[[], asyncio.Protocol]) -> None:
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(_accept(s, guard, factory)) for s in self.sockets]

    def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for sock in self.sockets:
            sock.close()

    async def wait_closed(self) -> None:
        await asyncio.gather(*self._tasks, return_exceptions=True)


async def _accept(
    listening: socket.socket, guard: Guard, factory: Callable[[], asyncio.Protocol]
) -> None:
    """Accept what is queued, ``ACCEPT_BATCH`` at most, and hand each to the guard
    (which may close another to make room) before accepting more: the descriptors
    open never exceed the guard's cap by more than a batch."""
    loop = asyncio.get_running_loop()
    while True:
        try:
            first, _ = await loop.sock_accept(listening)
        except OSError as e:
            if listening.fileno() == -1:  # closed: the site stopped
                return
            if e.errno in _OUT_OF:
                guard.counts["accept_waits"] += 1
                await asyncio.sleep(ACCEPT_RETRY)
            continue  # else a connection reset before it was accepted
        batch = [first]
        while len(batch) < ACCEPT_BATCH:
            try:
                sock, _ = listening.accept()
            except OSError:  # none queued (or out of descriptors: the wait above says)
                break
            sock.setblocking(False)
            batch.append(sock)
        for i, sock in enumerate(batch):
            try:
                await loop.connect_accepted_socket(factory, sock)
            except OSError:
                sock.close()
            except asyncio.CancelledError:
                for rest in batch[i:]:
                    rest.close()
                raise


class GuardedSite(web.BaseSite):
    """A ``TCPSite`` whose connections ``guard`` watches."""

    def __init__(self, runner: web.BaseRunner, host: str, port: int, guard: Guard) -> None:
        super().__init__(runner)
        self._where = (host, port)
        self._guard = guard

    @property
    def name(self) -> str:
        return f"http://{self._where[0]}:{self._where[1]}"

    async def start(self) -> None:
        await super().start()
        server = self._runner.server
        assert server is not None
        listener = Listener.bind(*self._where)
        listener.serve(self._guard, self._guard.protocol_factory(server))
        self._server = listener  # type: ignore[assignment]  # close() and sockets, as aiohttp uses
        self._guard.start()

    async def stop(self) -> None:
        self._guard.stop()
        listener = self._server
        await super().stop()
        if isinstance(listener, Listener):
            await listener.wait_closed()


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return redact_text(f"{type(e).__name__}: {text}" if text else type(e).__name__)


class OneLineLog(logging.LoggerAdapter):  # type: ignore[type-arg]
    """aiohttp's server log as one line per event, its exception said, not traced."""

    def __init__(self, logger: logging.Logger, prefix: str) -> None:
        super().__init__(logger, {})
        self._prefix = prefix

    def process(
        self, msg: Any, kwargs: MutableMapping[str, Any]
    ) -> tuple[Any, MutableMapping[str, Any]]:
        exc = kwargs.pop("exc_info", None)
        if exc is True:
            exc = sys.exc_info()[1]
        said = f": {_one_line(exc)}" if isinstance(exc, BaseException) else ""
        return f"{self._prefix}{msg}{said.replace('%', '%%')}", kwargs


def quiet_loop_errors(prefix: str) -> None:
    """The running loop's unhandled errors (an ``accept`` out of descriptors...) in one
    line each, without a traceback."""
    log = logging.getLogger("ctxviewer.proxy")

    def handle(_loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        said = f": {_one_line(exc)}" if isinstance(exc, BaseException) else ""
        log.error("%s%s%s", prefix, context.get("message", "event loop error"), said)

    loop = asyncio.get_running_loop()
    if loop.get_exception_handler() is None:
        loop.set_exception_handler(handle)
