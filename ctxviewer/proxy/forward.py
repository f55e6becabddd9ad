"""Forward one client request upstream and relay the answer chunk by chunk.

The client sees what it would see talking to the upstream directly: the same
status, headers and body bytes, each chunk written as soon as it arrives. When
the upstream fails before answering, the client gets a 502 (504 on timeout);
when it fails mid-body, the client connection is closed so the client sees a
truncated body rather than a clean end. Every exchange is recorded whatever
happens, with its request body.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Callable

import aiohttp
import orjson
from aiohttp import web
from yarl import URL

from ctxviewer.proxy.exchange import Exchange, parse_json
from ctxviewer.proxy.guard import BodyError, Guard
from ctxviewer.proxy.headers import client_response_headers, upstream_request_headers
from ctxviewer.proxy.redact import redact_headers, redact_text, redact_url
from ctxviewer.proxy.rewrite import REJECTED, Rewriter
from ctxviewer.proxy.rewrite_shapes import REWRITABLE
from ctxviewer.proxy.routes import (
    GEMINI_APIS,
    NOT_ROUTED,
    OPENAI_APIS,
    BadTarget,
    Route,
    request_target,
    route,
)

log = logging.getLogger("ctxviewer.proxy")

RecordSink = Callable[[Exchange], None]
MAX_REQUEST_BYTES = 256 * 1024 * 1024  # agents send whole conversations; be generous
_BODY_ERRORS = {408: "client_timeout", 413: "request_too_large"}


class Forwarder:
    """The proxy's single request handler (``handle``), shared by all routes."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        upstreams: dict[str, str],
        sink: RecordSink,
        rewriter: Rewriter | None = None,
        guard: Guard | None = None,
    ) -> None:
        self._rewriter = rewriter  # None: bodies pass through untouched (the default)
        self._guard = guard or Guard(fds_per_connection=2)
        self._session = session
        self._upstreams = upstreams
        self._sink = sink
        self._ids = itertools.count(1)
        self._active: set[asyncio.Task[object]] = set()  # tasks inside handle() now
        self._idle = asyncio.Event()
        self._idle.set()
        self.stopping = False  # set by drain(): a cancelled exchange was stopped, not dropped

    async def drain(self, grace: float) -> None:
        """Give in-flight exchanges ``grace`` seconds, then cancel them (they get recorded)."""
        self.stopping = True
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), grace)
            return
        for task in list(self._active):
            task.cancel()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), grace)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """aiohttp handler: forward, relay, and record the exchange."""
        task = asyncio.current_task()
        assert task is not None
        self._active.add(task)
        self._idle.clear()
        try:
            with self._guard.serving(request):
                return await self._handle(request)
        finally:
            self._active.discard(task)
            if not self._active:
                self._idle.set()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        try:
            path, path_qs = request_target(request.raw_path)
            where = route(request.method, path, path_qs, self._upstreams, request.headers)
            refused = None
        except BadTarget as e:  # never forwarded: it could lead off the upstream
            path, where, refused = redact_text(request.raw_path), Route(NOT_ROUTED, None), e
        ex = Exchange(
            id=f"ex_{next(self._ids):06d}",
            api=where.api,
            method=request.method,
            path=path,
            upstream=redact_url(where.url) if where.url else None,
            request_headers=redact_headers(request.headers.items()),
            request_encoding=request.headers.get("Content-Encoding", ""),
        )
        try:
            try:
                ex.request_body = await self._guard.read_body(request, MAX_REQUEST_BYTES)
            except BodyError as e:
                return _fail(
                    ex, _BODY_ERRORS.get(e.status, "client_disconnected"), str(e), e.status
                )
            if refused is not None:
                return _fail(
                    ex, "not_forwarded", f"{request.method} {path}: {refused}: not forwarded", 400
                )
            if where.url is None:
                return _fail(
                    ex,
                    "not_forwarded",
                    f"{request.method} {path} is no Anthropic, "
                    "OpenAI or Gemini API call: not forwarded",
                    404,
                )
            if self._rewriter is not None and where.api in REWRITABLE:
                await self._rewrite(request, ex, self._rewriter)
            return await self._forward(request, ex, where.url)
        except asyncio.CancelledError:
            if self.stopping:
                ex.fail("proxy_stopped", "the proxy stopped before the exchange ended")
            else:  # aiohttp cancels the handler when the client hangs up
                ex.fail("client_disconnected", "the client hung up before the answer ended")
            raise
        except Exception as e:  # a proxy bug: still record the request; aiohttp answers 500
            ex.fail("proxy_error", f"{type(e).__name__}: {e}")
            raise
        finally:
            ex.finish()
            self._sink(ex)

    async def _rewrite(self, request: web.Request, ex: Exchange, rewriter: Rewriter) -> None:
        """Let the rewriter change the body to forward (never the one recorded as sent)."""
        if ex.request_encoding.strip().lower() not in ("", "identity") or not ex.request_body:
            return
        try:
            body = orjson.loads(ex.request_body)
        except orjson.JSONDecodeError:
            return
        headers = {k.lower(): v for k, v in request.headers.items()}
        try:
            if rewriter.needs_planning(ex.api, headers, body):  # may call a summarizer API
                loop = asyncio.get_running_loop()
                outcome = await loop.run_in_executor(None, rewriter.rewrite, ex.api, headers, body)
            else:
                outcome = rewriter.rewrite(ex.api, headers, body)
        except Exception as e:  # noqa: BLE001 - a rewriter bug: forward the original
            why = redact_text(f"{type(e).__name__}: {e}")
            log.error("ctxviewer proxy: rewriting %s failed (%s): sent as is", ex.id, why)
            ex.rewrite = {"note": f"rewriter failed ({why}): sent as is"}
            return
        ex.conversation = outcome.conversation
        if outcome.body is not None:
            ex.upstream_body = orjson.dumps(outcome.body)
        if outcome.rule is not None or outcome.note or outcome.plan is not None:
            ex.rewrite = outcome.as_json()

    async def _forward(self, request: web.Request, ex: Exchange, url: str) -> web.StreamResponse:
        upstream = await self._send(request, ex, url)
        if isinstance(upstream, web.Response):
            return upstream
        if ex.upstream_body is not None and upstream.status in REJECTED:
            upstream = await self._fall_back(request, ex, url, upstream)
            if isinstance(upstream, web.Response):
                return upstream
        try:
            answer = await self._relay(request, ex, upstream)
        except BaseException:  # cancelled (client gone, proxy stopping) or a bug
            upstream.close()
            raise
        if ex.error:  # a connection left mid-body cannot be reused
            upstream.close()
        else:
            upstream.release()
        return answer

    async def _fall_back(
        self, request: web.Request, ex: Exchange, url: str, rejected: aiohttp.ClientResponse
    ) -> aiohttp.ClientResponse | web.Response:
        """The upstream refused the rewritten body: send the original once, rewriting off."""
        try:
            detail = (await rejected.content.read(64 * 1024)).decode("utf-8", "replace")
        except (aiohttp.ClientError, TimeoutError) as e:
            detail = f"{type(e).__name__}: {e}"
        finally:
            rejected.close()
        assert self._rewriter is not None and ex.conversation is not None
        note = self._rewriter.rejected(ex.conversation, rejected.status, " ".join(detail.split()))
        sent = ex.upstream_body
        ex.upstream_body = None
        ex.rewrite = {
            **(ex.rewrite or {}),
            "fallback": redact_text(note),
            "rejected": {
                "status": rejected.status,
                "body": parse_json(sent or b""),
                "answer": parse_json(detail.encode()),
            },
        }
        return await self._send(request, ex, url)

    async def _send(
        self, request: web.Request, ex: Exchange, url: str
    ) -> aiohttp.ClientResponse | web.Response:
        """The upstream's response to the body to forward, or the error answer to give."""
        data = ex.upstream_body if ex.upstream_body is not None else ex.request_body
        try:
            return await self._session.request(
                request.method,
                URL(url, encoded=True),
                headers=upstream_request_headers(request.headers),
                data=data or None,
                allow_redirects=False,
            )
        except TimeoutError as e:
            return _fail(ex, "upstream_timeout", f"no answer from upstream: {e or 'timeout'}", 504)
        except aiohttp.ClientConnectorError as e:
            return _fail(ex, "upstream_unreachable", str(e), 502)
        except aiohttp.ClientError as e:
            return _fail(ex, "upstream_reset", f"{type(e).__name__}: {e}", 502)

    async def _relay(
        self, request: web.Request, ex: Exchange, upstream: aiohttp.ClientResponse
    ) -> web.StreamResponse:
        ex.mark_first_byte()
        ex.status = upstream.status
        ex.response_headers = redact_headers(upstream.headers.items())
        ex.content_encoding = upstream.headers.get("Content-Encoding", "")
        out = web.StreamResponse(
            status=upstream.status,
            reason=upstream.reason,
            headers=client_response_headers(upstream.headers),
        )
        while True:
            try:
                chunk = await upstream.content.readany()
            except TimeoutError:
                return _cut(request, ex, out, "upstream_timeout", "upstream stalled mid-body", 504)
            except aiohttp.ClientError as e:
                msg = f"{type(e).__name__}: {e}"
                return _cut(request, ex, out, "upstream_reset", msg, 502)
            if not chunk:
                break
            ex.chunks.append(chunk)
            if not await _send(request, ex, out, chunk):
                return out
        await _send(request, ex, out, None)
        return out


async def _send(
    request: web.Request, ex: Exchange, out: web.StreamResponse, chunk: bytes | None
) -> bool:
    """Write a chunk (None: end the body) to the client; False when the client is gone.

    Headers go out with the first chunk, so an upstream failing before its
    body still lets the client get a proper 502/504.
    """
    try:
        if not out.prepared:
            await out.prepare(request)
        if chunk is None:
            await out.write_eof()
        else:
            await out.write(chunk)
        return True
    except ConnectionError as e:
        ex.fail("client_disconnected", f"client went away: {e or type(e).__name__}")
        return False


def _cut(
    request: web.Request,
    ex: Exchange,
    out: web.StreamResponse,
    kind: str,
    message: str,
    status: int,
) -> web.StreamResponse:
    """The upstream failed mid-body: answer with an error if nothing was sent, else hang up."""
    ex.fail(kind, message)
    if not out.prepared:
        return _error_response(ex.api, status, message)
    if request.transport is not None:
        request.transport.close()  # the client sees a truncated body, not a clean end
    return out


def _fail(ex: Exchange, kind: str, message: str, status: int) -> web.Response:
    ex.fail(kind, message)
    return _error_response(ex.api, status, message)


def _error_response(api: str, status: int, message: str) -> web.Response:
    """An error in the shape the client's SDK parses (Anthropic's or OpenAI's)."""
    text = redact_text(f"ctxviewer proxy: {message}")
    if api in OPENAI_APIS:
        body: dict[str, object] = {"error": {"message": text, "type": "proxy_error", "code": None}}
    elif api in GEMINI_APIS:  # google.rpc.Status, as Google's API answers
        body = {"error": {"code": status, "message": text, "status": "UNAVAILABLE"}}
    else:
        body = {"type": "error", "error": {"type": "proxy_error", "message": text}}
    return web.json_response(body, status=status)
