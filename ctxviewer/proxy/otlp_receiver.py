"""A local OTLP/HTTP receiver that writes what the Collector's ``file`` exporter writes.

``OtlpReceiver`` is an aiohttp app accepting ``POST /v1/logs``, ``/v1/traces``
and ``/v1/metrics`` in OTLP/JSON (``application/json``) and OTLP/protobuf
(``application/x-protobuf``, decoded by ``otlp_proto``), gzip-compressed or
not. Each export request becomes one line of OTLP JSON in the output file, as
the OpenTelemetry Collector's ``file`` exporter writes it, so that
``ingest.otel.reader`` reads it, and ``ctxviewer FILE`` / ``ctxviewer tail FILE``
follow it while it grows.

The client is answered once its line is on disk: a line that cannot be written
is a 503, and the exporter sends it again. Lines are written whole, one
unbuffered ``write`` each, by one writer thread in the order they came.

What a client sends is handled off the event loop, one request at a time, by a
reader thread: the body inflated in bounded steps (``inflate``: a bomb is a 413
before it takes memory), parsed, its shape checked and its secrets redacted
(``otlp_export``). Connections are watched by a ``guard.Guard``: half-sent
requests are closed, and a flood of them cannot keep an exporter out.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, BinaryIO

import orjson
from aiohttp import web

from ctxviewer.proxy import guard
from ctxviewer.proxy.guard import BodyError, Guard, GuardedSite, OneLineLog, quiet_loop_errors
from ctxviewer.proxy.inflate import MAX_VALUES, TooLarge, Undecodable, inflate, too_many_values
from ctxviewer.proxy.otlp_export import BadShape, check_and_redact
from ctxviewer.proxy.otlp_proto import TooManyValues, decode
from ctxviewer.proxy.otlp_schema import SIGNALS
from ctxviewer.proxy.recorder import NotARecording, check_regular, write_all
from ctxviewer.proxy.redact import redact_line, redact_text
from ctxviewer.proxy.server import SHUTDOWN_GRACE, bound_port, client_host

DEFAULT_PORT = 4318  # the OTLP/HTTP port
CLIENT_TIMEOUT = guard.CLIENT_TIMEOUT  # seconds a client's request head, or a silent body
# an export request, as sent and decompressed: the OpenTelemetry Collector's default
# limit (an export of inline bodies runs to megabytes)
MAX_REQUEST_BYTES = 20 * 1024 * 1024
JSON = "application/json"
PROTOBUF = "application/x-protobuf"

log = logging.getLogger("ctxviewer.proxy")

ExportCallback = Callable[[str, dict[str, Any]], None]  # (signal path, the export request)


def default_otel_name() -> str:
    """``ctxviewer-otel-<local timestamp>.jsonl``: a new file per run."""
    return f"ctxviewer-otel-{datetime.now():%Y%m%d-%H%M%S}.jsonl"


def check_otlp_file(path: str) -> None:
    """Raise ``NotARecording`` unless ``path`` is absent, empty, or OTLP JSON lines."""
    check_regular(path)
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16)
    except FileNotFoundError:
        return
    start = head.lstrip()
    if not start or start.startswith(
        (b'{"resourceLogs"', b'{"resourceSpans"', b'{"resourceMetrics"')
    ):
        return
    raise NotARecording(
        f"{path} exists and is not OTLP JSON lines: not appending to it "
        "(choose another file, or force it)"
    )


@dataclass
class OtlpConfig:
    """Everything that configures one receiver run."""

    out: str | os.PathLike[str]
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    force: bool = False  # append to ``out`` even when it holds something else
    on_export: ExportCallback | None = field(default=None, repr=False)
    # seconds a client's request head may take, and its body may stall (``guard``)
    client_timeout: float = CLIENT_TIMEOUT


class BadPayload(ValueError):
    """An export request that is not one (bad JSON, bad protobuf, a bad gzip stream,
    a bad shape); ``status`` is the answer: 400, or 413 for one too large."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def prepare(
    path: str, content_type: str, encoding: str, data: bytes
) -> tuple[dict[str, Any], bytes | None]:
    """The export request posted to ``path`` and the line to write for it (None: it
    holds nothing). Raises ``BadPayload``. Runs on the reader thread."""
    if encoding == "gzip":
        try:
            data = inflate(data, "gzip", MAX_REQUEST_BYTES)
        except TooLarge as e:
            raise BadPayload(f"the export request {e}", 413) from None
        except Undecodable as e:
            raise BadPayload(str(e)) from None
    export = parse_export(path, content_type, data)
    try:
        check_and_redact(export, SIGNALS[path])
    except BadShape as e:
        raise BadPayload(f"not an OTLP export request: {e}") from None
    if not any(export.get(k) for k in ("resourceLogs", "resourceSpans", "resourceMetrics")):
        return export, None
    return export, redact_line(orjson.dumps(export)) + b"\n"


def parse_export(path: str, content_type: str, data: bytes) -> dict[str, Any]:
    """The export request posted to ``path`` as OTLP JSON. Raises ``BadPayload`` (413
    for one that would decode into more than ``MAX_VALUES`` values)."""
    if content_type == PROTOBUF:
        try:
            return decode(data, SIGNALS[path], MAX_VALUES)
        except TooManyValues as e:
            raise BadPayload(f"{e} (at most {MAX_VALUES:,})", 413) from None
        except ValueError as e:
            raise BadPayload(str(e)) from None
    crowded = too_many_values(data)
    if crowded is not None:
        raise BadPayload(f"the export request holds {crowded}", 413)
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        raise BadPayload(f"not JSON: {e}") from None
    if not isinstance(value, dict):
        raise BadPayload("not an OTLP export request (a JSON object)")
    return value


class OtlpReceiver:
    """A running (after ``start``) receiver; ``port`` is the bound port."""

    def __init__(self, config: OtlpConfig) -> None:
        self.config = config
        self.path = os.path.abspath(os.fspath(config.out))
        self.port: int | None = None
        self.lines = 0  # export requests written
        self.failure: str | None = None  # why writing stopped
        self._file: BinaryIO | None = None
        self._writer: ThreadPoolExecutor | None = None
        self._reader: ThreadPoolExecutor | None = None
        self._runner: web.AppRunner | None = None
        self._site: web.BaseSite | None = None
        self._lock = threading.Lock()
        self.guard = Guard(config.client_timeout)

    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError("the receiver is not started")
        return f"http://{client_host(self.config.host)}:{self.port}"

    async def start(self) -> int:
        """Bind, open the file, serve; returns the port. Raises OSError (a taken port, a
        file that cannot be written, ``NotARecording``)."""
        try:
            if not self.config.force:
                check_otlp_file(self.path)
            else:
                check_regular(self.path)
            quiet_loop_errors("ctxviewer otel: ")
            app = web.Application(client_max_size=MAX_REQUEST_BYTES)
            app.router.add_route("*", "/{tail:.*}", self._handle)
            self._runner = web.AppRunner(
                app,
                access_log=None,
                handle_signals=False,
                shutdown_timeout=SHUTDOWN_GRACE,
                auto_decompress=False,  # gzip: ours, bounded
                handler_cancellation=True,  # a client gone: its request is dropped at once
                logger=OneLineLog(log, "ctxviewer otel: "),
            )  # a bad request: one line
            await self._runner.setup()
            self._site = GuardedSite(self._runner, self.config.host, self.config.port, self.guard)
            await self._site.start()
            self.port = bound_port(self._runner)
            self._open()  # after binding: no file for a taken port
        except BaseException:
            await self.stop()
            raise
        return self.port

    def _open(self) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._file = os.fdopen(fd, "ab", buffering=0)
        if os.fstat(fd).st_size:
            with open(self.path, "rb") as f:
                f.seek(-1, os.SEEK_END)
                if f.read(1) != b"\n":
                    self._file.write(b"\n")  # a run killed mid-line: start on a fresh one
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="ctxviewer-otel")
        self._reader = ThreadPoolExecutor(1, thread_name_prefix="ctxviewer-otel-reader")

    async def stop(self) -> None:
        """Stop listening (requests under way get a short grace), then close the file."""
        if self._site is not None:
            await self._site.stop()
            self._site = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        for pool in (self._reader, self._writer):
            if pool is not None:
                await asyncio.get_running_loop().run_in_executor(None, pool.shutdown)
        self._reader = self._writer = None
        if self._file is not None:
            self._file.close()
            self._file = None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        with self.guard.serving(request):
            return await self._receive(request)

    async def _receive(self, request: web.Request) -> web.StreamResponse:
        path = request.path.rstrip("/")
        if path not in SIGNALS:
            return _answer(JSON, 404, f"no such endpoint: {path}", code=5)
        if request.method != "POST":
            return web.json_response(
                {"code": 12, "message": "POST an export request"},
                status=405,
                headers={"Allow": "POST"},
            )
        ctype = request.content_type
        if ctype not in (JSON, PROTOBUF):
            return _answer(JSON, 415, f"unsupported content type {ctype!r}: {JSON} or {PROTOBUF}")
        encoding = request.headers.get("Content-Encoding", "identity").strip().lower()
        if encoding not in ("identity", "", "gzip"):
            return _answer(ctype, 415, f"unsupported content encoding {encoding!r}")
        reader = self._reader
        if reader is None or self.failure is not None:
            return _answer(ctype, 503, self.failure or "the receiver is stopping")
        try:
            data = await self.guard.read_body(request, MAX_REQUEST_BYTES)
            export, line = await asyncio.get_running_loop().run_in_executor(
                reader, prepare, path, ctype, encoding, data
            )
        except (BodyError, BadPayload) as e:
            return _answer(ctype, e.status, str(e))
        if line is not None:
            writer = self._writer
            if writer is None or self.failure is not None:
                return _answer(ctype, 503, self.failure or "the receiver is stopping")
            try:
                await asyncio.get_running_loop().run_in_executor(writer, self._write, line)
            except OSError as e:
                self.failure = f"{self.path}: {e.strerror or e}"
                return _answer(ctype, 503, f"cannot write: {self.failure}")
            self._tell(path, export)
        return _answer(ctype, 200, None)

    def _tell(self, path: str, export: dict[str, Any]) -> None:
        """Hand a written export to ``on_export``; its failure is one line, never the
        exporter's (the line is written: a 500 would have it sent again)."""
        if self.config.on_export is None:
            return
        try:
            self.config.on_export(path, export)
        except Exception as e:  # noqa: BLE001 - a listener's bug
            log.error(
                "ctxviewer otel: on_export failed: %s", redact_text(f"{type(e).__name__}: {e}")
            )

    def _write(self, line: bytes) -> None:
        with self._lock:
            if self._file is None:
                raise OSError("the output file is closed")
            write_all(self._file, line)
            self.lines += 1


def _answer(ctype: str, status: int, message: str | None, code: int | None = None) -> web.Response:
    """An OTLP answer: an empty Export*ServiceResponse, or a Status with the error."""
    if code is None:
        code = _CODES.get(status, 2)
    if ctype == PROTOBUF:
        body = b"" if message is None else _status_proto(code, redact_text(message))
        return web.Response(body=body, status=status, content_type=PROTOBUF)
    payload: dict[str, Any] = (
        {} if message is None else {"code": code, "message": redact_text(message)}
    )
    return web.json_response(payload, status=status)


# HTTP status -> google.rpc.Code: INVALID_ARGUMENT, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED,
# UNAVAILABLE (UNKNOWN otherwise)
_CODES = {400: 3, 408: 4, 413: 8, 503: 14}


def _status_proto(code: int, message: str) -> bytes:
    """A ``google.rpc.Status`` (code 1, message 2) in protobuf."""
    text = message.encode()
    return bytes([0x08, code, 0x12]) + _varint(len(text)) + text


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)
