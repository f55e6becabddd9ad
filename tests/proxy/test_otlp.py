"""``ctxviewer otel``: the OTLP/HTTP receiver. Its protobuf tables and decoder against the
``opentelemetry-proto`` package, the real OpenTelemetry SDK exporting to it over
127.0.0.1, JSON posts, and the command itself (Ctrl+C, a taken port)."""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
import requests
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from ctxviewer.cli import main
from ctxviewer.ingest import load
from ctxviewer.proxy.otlp_proto import decode
from ctxviewer.proxy.otlp_receiver import OtlpConfig, OtlpReceiver
from ctxviewer.proxy.otlp_schema import MESSAGES, SIGNALS

REPO = Path(__file__).resolve().parents[2]
EXPORTS = {
    "ExportLogsServiceRequest": logs_service_pb2.ExportLogsServiceRequest,
    "ExportTraceServiceRequest": trace_service_pb2.ExportTraceServiceRequest,
    "ExportMetricsServiceRequest": metrics_service_pb2.ExportMetricsServiceRequest,
}
KINDS = {
    v: k.removeprefix("TYPE_").lower()
    for k, v in vars(FieldDescriptor).items()
    if k.startswith("TYPE_")
}


def _short(full_name: str) -> str:
    """``opentelemetry.proto.trace.v1.Span.Event`` -> ``Span.Event`` (the schema's names)."""
    parts = full_name.split(".")
    return ".".join(p for p in parts if p[:1].isupper())


def test_the_tables_match_opentelemetry_proto() -> None:
    seen: dict[str, dict[int, tuple[str, str, bool, str | None]]] = {}

    def walk(desc: Any) -> None:
        name = _short(desc.full_name)
        if name in seen:
            return
        seen[name] = {
            f.number: (
                f.json_name,
                KINDS[f.type],
                f.is_repeated,
                _short(f.message_type.full_name) if f.message_type else None,
            )
            for f in desc.fields
        }
        for f in desc.fields:
            if f.message_type is not None:
                walk(f.message_type)

    for cls in EXPORTS.values():
        walk(cls.DESCRIPTOR)
    assert seen == MESSAGES


def _hex_ids(value: Any) -> Any:
    """protobuf's JSON with trace and span ids in hex, as OTLP/JSON writes them."""
    if isinstance(value, dict):
        return {
            k: base64.b64decode(v).hex()
            if k in ("traceId", "spanId", "parentSpanId")
            else _hex_ids(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_hex_ids(v) for v in value]
    return value


def _rich_exports() -> list[Any]:
    logs = logs_service_pb2.ExportLogsServiceRequest()
    rl = logs.resource_logs.add()
    rl.resource.attributes.add(key="service.name").value.string_value = "claude-code"
    rl.resource.entity_refs.add(type="host", id_keys=["host.id"])
    sl = rl.scope_logs.add()
    sl.scope.name = "events"
    rec = sl.log_records.add(
        time_unix_nano=1795526158410000000,
        severity_number=9,
        severity_text="INFO",
        flags=1,
        event_name="claude_code.x",
        trace_id=bytes(range(16)),
        span_id=bytes(range(8)),
    )
    rec.body.string_value = ""  # a oneof member holding its default: kept
    for key, setter in [
        ("neg", lambda v: setattr(v, "int_value", -5)),
        ("big", lambda v: setattr(v, "int_value", 2**62)),
        ("f", lambda v: setattr(v, "double_value", -0.5)),
        ("nan", lambda v: setattr(v, "double_value", float("nan"))),
        ("b", lambda v: setattr(v, "bool_value", False)),
        ("raw", lambda v: setattr(v, "bytes_value", b"\x00\xff")),
        ("text", lambda v: setattr(v, "string_value", "héllo \u2603")),
    ]:
        setter(rec.attributes.add(key=key).value)
    arr = rec.attributes.add(key="arr").value.array_value
    arr.values.add().int_value = 3
    arr.values.add().kvlist_value.values.add(key="inner").value.string_value = "x"
    traces = trace_service_pb2.ExportTraceServiceRequest()
    span = (
        traces.resource_spans.add()
        .scope_spans.add()
        .spans.add(
            trace_id=b"\x01" * 16,
            span_id=b"\x02" * 8,
            parent_span_id=b"\x03" * 8,
            name="s",
            kind=3,
            start_time_unix_nano=5,
            end_time_unix_nano=2**63,
            flags=257,
        )
    )
    span.events.add(name="e", time_unix_nano=7)
    span.links.add(trace_id=b"\x04" * 16, span_id=b"\x05" * 8, flags=1)
    span.status.code = 2
    span.status.message = "boom"
    metrics = metrics_service_pb2.ExportMetricsServiceRequest()
    sm = metrics.resource_metrics.add().scope_metrics.add()
    gauge = sm.metrics.add(name="g", unit="1")
    gauge.gauge.data_points.add(as_int=-7, time_unix_nano=1).exemplars.add(
        as_double=0.0, span_id=b"\x06" * 8
    )
    total = sm.metrics.add(name="sum")
    total.sum.aggregation_temporality = 2
    total.sum.is_monotonic = True
    total.sum.data_points.add(as_double=0.0)
    hist = sm.metrics.add(name="h").histogram.data_points.add(
        count=3, sum=0.0, bucket_counts=[1, 0, 2], explicit_bounds=[0.5, 1.5], min=0.0, max=2.0
    )
    hist.attributes.add(key="k").value.string_value = "v"
    exp = sm.metrics.add(name="e").exponential_histogram.data_points.add(scale=-3, zero_count=1)
    exp.positive.offset = -2
    exp.positive.bucket_counts.extend([4, 5])
    summary = sm.metrics.add(name="s").summary.data_points.add(count=2, sum=1.5)
    summary.quantile_values.add(quantile=0.5, value=0.75)
    return [logs, traces, metrics]


@pytest.mark.parametrize("message", _rich_exports(), ids=["logs", "traces", "metrics"])
def test_the_decoder_writes_what_protobufs_own_json_mapping_writes(message: Any) -> None:
    data = message.SerializeToString()
    want = _hex_ids(json_format.MessageToDict(message, use_integers_for_enums=True))
    assert decode(data, type(message).DESCRIPTOR.name) == want
    unknown = data + b"\xf8\x07\x2a"  # field 127, a varint: skipped, as protobuf does
    assert decode(unknown, type(message).DESCRIPTOR.name) == want


@pytest.mark.parametrize("data", [b"\x0a\x05abc", b"\x0a", b"\x0b\x00", b"\x08" + b"\xff" * 11])
def test_malformed_protobuf_is_a_value_error(data: bytes) -> None:
    with pytest.raises(ValueError, match="malformed protobuf"):
        decode(data, "ExportLogsServiceRequest")


class Receiver:
    """An ``OtlpReceiver`` on its own event loop in a thread, on a free port."""

    def __init__(self, out: Path) -> None:
        self.receiver = OtlpReceiver(OtlpConfig(out=out, port=0))
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        started: Future[int] = Future()
        self._thread = threading.Thread(
            target=asyncio.run, args=(self._main(started),), daemon=True
        )
        self._thread.start()
        started.result(timeout=10)
        self.url = self.receiver.url

    async def _main(self, started: Future[int]) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        try:
            started.set_result(await self.receiver.start())
        except BaseException as e:
            started.set_exception(e)
            return
        await self._stop.wait()
        await self.receiver.stop()

    def stop(self) -> None:
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=15)
        assert not self._thread.is_alive()


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[Receiver]:
    r = Receiver(tmp_path / "otel.jsonl")
    yield r
    r.stop()


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


BODY = {
    "model": "claude-opus-4-8",
    "max_tokens": 32000,
    "system": "You are Claude Code",
    "messages": [{"role": "user", "content": "What does hello.py do?"}],
    "tools": [{"name": "Read", "description": "read a file", "input_schema": {}}],
}
ANSWER = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-opus-4-8",
    "content": [{"type": "text", "text": "It prints a greeting."}],
    "usage": {"input_tokens": 1200, "output_tokens": 9},
}


@pytest.mark.parametrize("compressed", [False, True])
def test_the_sdk_exports_logs_spans_and_metrics_over_protobuf(
    receiver: Receiver, compressed: bool
) -> None:
    from opentelemetry.exporter.otlp.proto.http import Compression
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    session = requests.Session()
    session.trust_env = False  # loopback: no proxy from the environment
    options = {
        "compression": Compression.Gzip if compressed else Compression.NoCompression,
        "session": session,
        "timeout": 10,
    }
    resource = Resource.create({"service.name": "claude-code", "service.version": "2.1.197"})
    traces = TracerProvider(resource=resource)
    traces.add_span_processor(
        SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{receiver.url}/v1/traces", **options))
    )
    with traces.get_tracer("t").start_as_current_span("claude_code.llm_request") as span:
        span.set_attribute("request_id", "req_1")
        span.set_attribute("model", "claude-opus-4-8[1m]")
    logs = LoggerProvider(resource=resource)
    logs.add_log_record_processor(
        SimpleLogRecordProcessor(OTLPLogExporter(endpoint=f"{receiver.url}/v1/logs", **options))
    )
    logger = logs.get_logger("com.anthropic.claude_code.events")
    common = {"session.id": "s-1", "prompt.id": "p-1", "query_source": "repl_main_thread"}
    text = json.dumps(BODY)
    logger.emit(
        body="claude_code.api_request_body",
        attributes={
            **common,
            "event.name": "api_request_body",
            "event.sequence": 1,
            "body": text,
            "body_length": str(len(text)),
            "model": "claude-opus-4-8",
        },
    )
    logger.emit(
        body="claude_code.api_request",
        attributes={
            **common,
            "event.name": "api_request",
            "event.sequence": 2,
            "input_tokens": 200,
            "cache_read_tokens": 1000,
            "cache_creation_tokens": 0,
            "output_tokens": 9,
            "cost_usd": 0.0123,
            "request_id": "req_1",
            "model": "claude-opus-4-8",
        },
    )
    logger.emit(
        body="claude_code.api_response_body",
        attributes={
            **common,
            "event.name": "api_response_body",
            "event.sequence": 3,
            "body": json.dumps(ANSWER),
            "request_id": "req_1",
        },
    )
    reader = PeriodicExportingMetricReader(
        OTLPMetricExporter(endpoint=f"{receiver.url}/v1/metrics", **options),
        export_interval_millis=3_600_000,
    )
    meters = MeterProvider(resource=resource, metric_readers=[reader])
    meters.get_meter("m").create_counter("claude_code.token.usage").add(1209, {"type": "input"})
    for provider in (logs, traces, meters):
        provider.shutdown()

    out = Path(receiver.receiver.path)
    kinds = [next(iter(line)) for line in _lines(out)]
    assert kinds.count("resourceLogs") == 3  # the simple processor exports each record
    assert {"resourceSpans", "resourceMetrics"} <= set(kinds)
    assert receiver.receiver.lines == len(kinds)
    got = load(str(out))
    assert got.format == "otel" and got.skipped == []
    [req] = got.requests
    assert req.client == "claude-code/2.1.197" and req.request_id == "req_1"
    assert (req.usage.input_tokens, req.usage.cache_read_input_tokens, req.usage.output_tokens) == (
        200,
        1000,
        9,
    )
    assert req.complete and [t.name for t in req.tools] == ["Read"]
    assert req.messages[0].text == "What does hello.py do?"
    assert req.response is not None and req.response.text == "It prints a greeting."
    assert req.timestamp is not None and req.timestamp.startswith("20")  # the observed time
    assert req.window_hint == 1_000_000  # the span's model, seen before the call's events


def _post(
    url: str, data: bytes, ctype: str, encoding: str | None = None, method: str = "POST"
) -> tuple[int, bytes, str]:
    headers = {"Content-Type": ctype}
    if encoding:
        headers["Content-Encoding"] = encoding
    req = urllib.request.Request(
        url, data=data if method == "POST" else None, headers=headers, method=method
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=10) as resp:
            return resp.status, resp.read(), resp.headers.get_content_type()
    except urllib.error.HTTPError as e:
        return e.code, e.read(), e.headers.get_content_type()


EXPORT = {
    "resourceLogs": [
        {
            "resource": {
                "attributes": [{"key": "service.name", "value": {"stringValue": "claude-code"}}]
            },
            "scopeLogs": [
                {
                    "logRecords": [
                        {
                            "timeUnixNano": "1",
                            "attributes": [
                                {"key": "event.name", "value": {"stringValue": "api_request"}},
                                {"key": "input_tokens", "value": {"intValue": 42}},
                            ],
                        }
                    ]
                }
            ],
        }
    ]
}


def test_json_posts_are_written_as_sent(receiver: Receiver) -> None:
    plain = json.dumps(EXPORT).encode()
    assert _post(f"{receiver.url}/v1/logs", plain, "application/json") == (
        200,
        b"{}",
        "application/json",
    )
    assert (
        _post(f"{receiver.url}/v1/logs/", gzip.compress(plain), "application/json", "gzip")[0]
        == 200
    )
    assert (
        _post(f"{receiver.url}/v1/traces", b'{"resourceSpans": []}', "application/json")[0] == 200
    )  # nothing in it: nothing written
    out = Path(receiver.receiver.path)
    assert _lines(out) == [EXPORT, EXPORT]
    assert [r.api_prompt_tokens for r in load(str(out)).requests] == [42, 42]


@pytest.mark.parametrize(
    ("path", "data", "ctype", "encoding", "method", "status"),
    [
        ("/v1/logs", b"{not json", "application/json", None, "POST", 400),
        ("/v1/logs", b"[1, 2]", "application/json", None, "POST", 400),
        ("/v1/logs", b"\x0a\x05abc", "application/x-protobuf", None, "POST", 400),
        ("/v1/logs", b"not gzip", "application/json", "gzip", "POST", 400),
        ("/v1/logs", b"{}", "application/json", "br", "POST", 415),
        ("/v1/logs", b"{}", "text/plain", None, "POST", 415),
        ("/v1/logs", b"", "application/json", None, "GET", 405),
        ("/v2/logs", b"{}", "application/json", None, "POST", 404),
    ],
)
def test_bad_requests_are_refused_and_write_nothing(
    receiver: Receiver,
    path: str,
    data: bytes,
    ctype: str,
    encoding: str | None,
    method: str,
    status: int,
) -> None:
    got, body, answer_type = _post(receiver.url + path, data, ctype, encoding, method)
    assert got == status
    if answer_type == "application/x-protobuf":  # a google.rpc.Status: code 3, a message
        assert body[:2] == b"\x08\x03" and b"malformed protobuf" in body
    else:
        assert json.loads(body)["message"]
    assert Path(receiver.receiver.path).read_bytes() == b""


def _read_into(stream: Any, into: queue.Queue[str]) -> None:
    for line in stream:
        into.put(line.rstrip("\n"))


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM])
def test_the_command_writes_and_stops_cleanly(tmp_path: Path, stop_signal: signal.Signals) -> None:
    out = tmp_path / "otel.jsonl"
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
    with subprocess.Popen(
        [sys.executable, "-m", "ctxviewer", "otel", "--port", "0", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    ) as proc:
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=_read_into, args=(proc.stdout, lines), daemon=True).start()
        try:
            first = lines.get(timeout=20)
            assert first.startswith("ctxviewer otel listening on http://127.0.0.1:")
            url = first.split()[4]
            banner = [lines.get(timeout=5) for _ in range(6)]
            assert f"writing to {out}" in banner
            assert (
                f"export OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf "
                f"OTEL_EXPORTER_OTLP_ENDPOINT={url}" in banner
            )
            assert (
                _post(f"{url}/v1/logs", json.dumps(EXPORT).encode(), "application/json")[0] == 200
            )
            assert lines.get(timeout=10) == "/v1/logs  1 log record"
            proc.send_signal(stop_signal)
            assert proc.wait(timeout=20) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
        assert lines.get(timeout=5) == f"stopped: 1 export request written to {out}"
        assert proc.stderr is not None and proc.stderr.read() == ""
    assert _lines(out) == [EXPORT]


def test_a_taken_port_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "otel.jsonl"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        assert main(["otel", "--port", str(taken.getsockname()[1]), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ctxviewer: cannot start the OTLP receiver: ")
    assert err.count("\n") == 1 and not out.exists()


@pytest.mark.parametrize(
    "args", [["--port", "70000"], ["--port", "x"], ["--out", "/no/such/dir/otel.jsonl"]]
)
def test_bad_arguments_exit_2(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["otel", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ctxviewer: ")


def test_another_kind_of_file_is_not_appended_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "notes.jsonl"
    out.write_text('{"type": "user"}\n')
    assert main(["otel", "--port", "0", "--out", str(out)]) == 2
    assert "not OTLP JSON lines" in capsys.readouterr().err
    assert out.read_text() == '{"type": "user"}\n'


def test_signals_are_the_three_paths() -> None:
    assert set(SIGNALS) == {"/v1/logs", "/v1/traces", "/v1/metrics"}
    assert set(SIGNALS.values()) == set(EXPORTS)
