"""``ctxviewer otel`` against a hostile local client (issue #33): gzip bombs, junk shaped
like an export, half-sent and abandoned connections, a descriptor limit, and secrets in
attributes and logged bodies. The real command (or the receiver in a thread), real
clients (the OpenTelemetry SDK's exporter, raw sockets), all on 127.0.0.1."""

from __future__ import annotations

import gzip
import json
import resource
import signal
import socket
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests
from cli_server import CliServer

from ctxviewer.ingest import load

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


def _post(
    url: str, data: bytes, encoding: str | None = None, ctype: str = "application/json"
) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": ctype, **({"Content-Encoding": encoding} if encoding else {})}
    req = urllib.request.Request(url, data=data, headers=headers, method="POST")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


@pytest.fixture
def otel(tmp_path: Path) -> Any:
    """The ``ctxviewer otel`` command, printing a line per export (not quiet)."""
    server = CliServer(
        "otel", ["--out", str(tmp_path / "otel.jsonl"), "--client-timeout", "1"], tmp_path
    )
    yield server
    if server.proc.poll() is None:
        server.stop()


def _written(tmp_path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (tmp_path / "otel.jsonl").read_bytes().splitlines()]


# -- bombs ------------------------------------------------------------------------------


def test_gzip_bombs_are_refused_before_they_take_memory(otel: CliServer, tmp_path: Path) -> None:
    nuls = gzip.compress(bytes(256 << 20), 9)  # 256 MiB of NULs in 256 KB
    as_json = gzip.compress(b'{"resourceLogs": [{"x": "' + b"a" * (32 << 20) + b'"}]}', 9)
    for bomb in (nuls, as_json):
        status, answer = _post(f"{otel.url}/v1/logs", bomb, "gzip")
        assert status == 413 and "inflates past 8 MiB" in answer["message"]
        assert answer["code"] == 8  # RESOURCE_EXHAUSTED: an exporter does not retry it
    assert _post(f"{otel.url}/v1/logs", gzip.compress(json.dumps(EXPORT).encode()), "gzip") == (
        200,
        {},
    )
    code, err = otel.stop()
    assert code == 0 and err == ""
    assert _written(tmp_path) == [EXPORT]  # the bombs wrote nothing


# -- junk shaped like an export ------------------------------------------------------------


def _deep(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"stringValue": "x"}
    for _ in range(levels):
        value = {"arrayValue": {"values": [value]}}
    return value


@pytest.mark.parametrize(
    "junk",
    [
        {"resourceLogs": 5},
        {"resourceLogs": [5]},
        {"resourceLogs": [{"scopeLogs": {}}]},
        {"resourceLogs": [{"scopeLogs": [{"logRecords": [{"attributes": [{"key": 1}]}]}]}]},
        {"resourceLogs": [{"scopeLogs": [{"logRecords": [{"body": {"boolValue": "yes"}}]}]}]},
        {"resourceSpans": [{"scopeSpans": [{"spans": [{"name": ["x"]}]}]}]},
        {
            "resourceMetrics": [
                {"scopeMetrics": [{"metrics": [{"sum": {"dataPoints": [{"asDouble": {}}]}}]}]}
            ]
        },
        {"resourceLogs": [{"scopeLogs": [{"logRecords": [{"body": _deep(70)}]}]}]},
    ],
)
def test_junk_shaped_like_an_export_is_a_400_and_writes_nothing(
    otel: CliServer, tmp_path: Path, junk: dict[str, Any]
) -> None:
    path = (
        "/v1/traces"
        if "resourceSpans" in junk
        else "/v1/metrics"
        if "resourceMetrics" in junk
        else "/v1/logs"
    )
    status, answer = _post(otel.url + path, json.dumps(junk).encode())
    assert status == 400 and answer["message"].startswith("not an OTLP export request: ")
    assert _post(f"{otel.url}/v1/logs", json.dumps(EXPORT).encode()) == (200, {})
    code, err = otel.stop()
    assert code == 0 and err == ""
    assert _written(tmp_path) == [EXPORT]
    assert otel.printed()[0] == "/v1/logs  1 log record"


# -- connections ----------------------------------------------------------------------------


def _half_sent(url: str, n: int, threads: int = 1) -> list[socket.socket]:
    """``n`` connections sending half a head or half a body, from ``threads``
    clients at once (so they arrive faster than one by one)."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    head = (
        b"POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 1000\r\n\r\n" + b"{" * 500
    )

    def open_some(first: int) -> list[socket.socket]:
        socks = []
        for i in range(first, n, threads):
            sock = socket.create_connection((host, int(port)), timeout=20)
            sock.sendall(head[:20] if i % 2 else head)  # half a head; half a body
            socks.append(sock)
        return socks

    with ThreadPoolExecutor(threads) as pool:
        return [sock for some in pool.map(open_some, range(threads)) for sock in some]


def test_half_sent_connections_are_closed_and_exports_go_on(
    otel: CliServer, tmp_path: Path
) -> None:
    socks = _half_sent(otel.url, 200)
    assert _post(f"{otel.url}/v1/logs", json.dumps(EXPORT).encode()) == (200, {})
    deadline = time.monotonic() + 15
    for sock in socks:
        sock.settimeout(max(0.1, deadline - time.monotonic()))
        while sock.recv(65536):  # read the 408, if any, until the receiver closes it
            pass
        sock.close()
    for _ in range(50):  # clients that hang up mid-body
        with socket.create_connection(("127.0.0.1", int(otel.url.rsplit(":", 1)[1]))) as s:
            s.sendall(
                b"POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                b"\r\nContent-Length: 1000\r\n\r\n" + b"{" * 300
            )
    time.sleep(0.5)  # let the receiver see them go
    code, err = otel.stop()
    assert code == 0 and err == ""  # not a traceback per connection
    assert _written(tmp_path) == [EXPORT]


def _descriptor_limit() -> None:  # in the child, before exec
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


def test_a_flood_past_the_descriptor_limit_does_not_keep_an_exporter_out(tmp_path: Path) -> None:
    """With 256 descriptors, 800 silent connections from 8 clients at once: the
    exporter still gets in, and accepting never runs out of descriptors."""
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor

    server = CliServer(
        "otel",
        ["--out", str(tmp_path / "otel.jsonl"), "--quiet"],
        tmp_path,
        preexec=_descriptor_limit,
    )
    try:
        flood = _half_sent(server.url, 800, threads=8)
        session = requests.Session()
        session.trust_env = False
        logs = LoggerProvider()
        logs.add_log_record_processor(
            SimpleLogRecordProcessor(
                OTLPLogExporter(endpoint=f"{server.url}/v1/logs", session=session, timeout=10)
            )
        )
        logs.get_logger("t").emit(
            body="claude_code.api_request",
            attributes={"event.name": "api_request", "input_tokens": 7},
        )
        logs.shutdown()
        for sock in flood:
            sock.close()
    finally:
        code, err = server.stop()
    assert code == 0 and "Traceback" not in err and err == ""
    assert len(_written(tmp_path)) == 1
    assert load(str(tmp_path / "otel.jsonl")).requests[0].api_prompt_tokens == 7


# -- secrets -------------------------------------------------------------------------------

ANTHROPIC_KEY = "sk-ant-api03-" + "Xy9" * 30


def test_secret_attributes_and_keys_in_logged_bodies_are_not_written(
    otel: CliServer, tmp_path: Path
) -> None:
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor

    body = json.dumps(
        {
            "model": "claude-opus-4-8",
            "messages": [{"role": "user", "content": f"my key is {ANTHROPIC_KEY}, keep it"}],
        }
    )
    secrets = {
        "api_key": "attr-api-key-value",
        "authorization": "Bearer attr-auth-value-123",
        "http.request.header.x-api-key": "attr-header-key-value",
        "x-gateway-creds": "attr-creds-value",
    }
    session = requests.Session()
    session.trust_env = False
    logs = LoggerProvider()
    logs.add_log_record_processor(
        SimpleLogRecordProcessor(
            OTLPLogExporter(endpoint=f"{otel.url}/v1/logs", session=session, timeout=10)
        )
    )
    logs.get_logger("t").emit(
        body="claude_code.api_request_body",
        attributes={"event.name": "api_request_body", "body": body, "session.id": "s-1", **secrets},
    )
    logs.shutdown()
    as_json = {
        "resourceLogs": [
            {
                "resource": {
                    "attributes": [
                        {"key": "api_key", "value": {"stringValue": "json-api-key-value"}}
                    ]
                },
                "scopeLogs": [
                    {
                        "logRecords": [
                            {
                                "body": {"stringValue": f"x {ANTHROPIC_KEY}"},
                                "attributes": [
                                    {
                                        "key": "authorization",
                                        "value": {"stringValue": "json-auth-value"},
                                    }
                                ],
                            }
                        ]
                    }
                ],
            }
        ]
    }
    assert _post(f"{otel.url}/v1/logs", json.dumps(as_json).encode())[0] == 200
    code, err = otel.stop()
    assert code == 0
    written = (tmp_path / "otel.jsonl").read_text()
    for secret in [ANTHROPIC_KEY, *secrets.values(), "json-api-key-value", "json-auth-value"]:
        assert secret.split()[-1] not in written
        assert secret.split()[-1] not in err + "\n".join(otel.printed())
    assert written.count("[redacted]") == 8
    assert '"session.id"' in written and "s-1" in written  # the rest as sent
    assert "my key is [redacted], keep it" in written


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def test_exports_that_decode_into_millions_of_values_are_refused(
    otel: CliServer, tmp_path: Path
) -> None:
    """A byte of a packed protobuf field, or 3 of JSON's ``{},``, becomes a Python object
    of 50 to 64 bytes: 20 MB of them took the receiver to 1.6 GB and 74 s."""
    buckets = _field(2, bytes(8 << 20))  # ExponentialHistogram bucket counts, packed zeros
    metrics = _field(1, _field(2, _field(2, _field(10, _field(1, _field(8, buckets))))))
    many_objects = b'{"resourceLogs": [' + b"{}," * 3_000_000 + b"{}]}"
    for path, data, ctype, encoding in [
        ("/v1/metrics", metrics, "application/x-protobuf", None),
        ("/v1/metrics", gzip.compress(metrics, 9), "application/x-protobuf", "gzip"),
        ("/v1/logs", many_objects, "application/json", None),
        ("/v1/logs", gzip.compress(many_objects, 9), "application/json", "gzip"),
    ]:
        headers = {"Content-Type": ctype, **({"Content-Encoding": encoding} if encoding else {})}
        req = urllib.request.Request(otel.url + path, data=data, headers=headers)
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.build_opener(urllib.request.ProxyHandler({})).open(req, timeout=30)
        assert refused.value.code == 413
    code, err = otel.stop()
    assert code == 0 and err == ""
    assert (tmp_path / "otel.jsonl").read_bytes() == b""
