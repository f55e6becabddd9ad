"""``ctxviewer otel``: receive an agent's OpenTelemetry export (OTLP/HTTP) into a file."""

from __future__ import annotations

import argparse
import contextlib
import os
from typing import Any

from ctxviewer.commands.common import UsageError, add_client_timeout_argument, port_number
from ctxviewer.commands.serving import serve
from ctxviewer.fmt import plural
from ctxviewer.proxy.otlp_receiver import (
    CLIENT_TIMEOUT,
    DEFAULT_PORT,
    OtlpConfig,
    OtlpReceiver,
    default_otel_name,
)
from ctxviewer.proxy.server import is_loopback

HELP = (
    "receive Claude Code's OpenTelemetry export (OTLP/HTTP, JSON or protobuf) and write "
    "it as the Collector's file exporter does, for ctxviewer to read"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--port",
        type=port_number,
        default=DEFAULT_PORT,
        help=f"port to listen on (default {DEFAULT_PORT}, OTLP/HTTP's; 0 picks a free one)",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: this machine only)",
    )
    parser.add_argument(
        "--out",
        help="file to write, one OTLP JSON export request a line; "
        "appended to when it already holds such lines (default "
        "./ctxviewer-otel-<timestamp>.jsonl)",
    )
    parser.add_argument(
        "--force", action="store_true", help="append to --out even when it holds something else"
    )
    add_client_timeout_argument(parser, CLIENT_TIMEOUT)
    parser.add_argument("--quiet", action="store_true", help="no line per export request")


def run(args: argparse.Namespace) -> int:
    out = os.path.abspath(args.out or default_otel_name())
    if not os.path.isdir(os.path.dirname(out)):
        raise UsageError(f"no such directory for --out: {os.path.dirname(out)}")
    receiver = OtlpReceiver(
        OtlpConfig(
            out=out,
            host=args.host,
            port=args.port,
            force=args.force,
            client_timeout=args.client_timeout,
            on_export=None if args.quiet else print_export,
        )
    )
    serve(receiver, "the OTLP receiver", lambda: print_banner(receiver))
    print(f"stopped: {plural(receiver.lines, 'export request')} written to {out}", flush=True)
    if receiver.failure:
        print(f"ctxviewer: writing stopped early: {receiver.failure}", flush=True)
        return 1
    return 0


def print_banner(receiver: OtlpReceiver) -> None:
    """Where it listens and writes, and the lines to paste into Claude Code's shell."""
    lines = [
        f"ctxviewer otel listening on {receiver.url} (OTLP/HTTP: /v1/logs, /v1/traces, "
        "/v1/metrics)",
        f"writing to {receiver.path}",
        "point Claude Code at it (paste into its shell):",
        "export CLAUDE_CODE_ENABLE_TELEMETRY=1 OTEL_LOGS_EXPORTER=otlp",
        f"export OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf "
        f"OTEL_EXPORTER_OTLP_ENDPOINT={receiver.url}",
        "export OTEL_LOG_RAW_API_BODIES=file:$HOME/.claude/otel-bodies   # whole bodies; =1: "
        "inline, cut at 60 KB",
        f"then: ctxviewer {receiver.path}   (or ctxviewer tail ...)   Ctrl+C to stop.",
    ]
    if not is_loopback(receiver.config.host):
        lines.insert(
            1, f"warning: listening on {receiver.config.host}: other machines can send to it"
        )
    print("\n".join(lines), flush=True)


def print_export(path: str, export: dict[str, Any]) -> None:
    """One line per export request written, for people watching the terminal."""
    counts = {"logs": 0, "calls": 0, "spans": 0, "metrics": 0}
    for rl in export.get("resourceLogs") or ():
        for sl in rl.get("scopeLogs") or () if isinstance(rl, dict) else ():
            for lr in sl.get("logRecords") or () if isinstance(sl, dict) else ():
                counts["logs"] += 1
                body = lr.get("body") if isinstance(lr, dict) else None
                if isinstance(body, dict) and body.get("stringValue") == "claude_code.api_request":
                    counts["calls"] += 1
    for rs in export.get("resourceSpans") or ():
        for ss in rs.get("scopeSpans") or () if isinstance(rs, dict) else ():
            counts["spans"] += len(ss.get("spans") or ()) if isinstance(ss, dict) else 0
    for rm in export.get("resourceMetrics") or ():
        for sm in rm.get("scopeMetrics") or () if isinstance(rm, dict) else ():
            counts["metrics"] += len(sm.get("metrics") or ()) if isinstance(sm, dict) else 0
    said = ", ".join(f"{plural(n, _WORDS[k])}" for k, n in counts.items() if n)
    with contextlib.suppress(OSError):  # a closed terminal must not stop the writing
        print(f"{path}  {said or 'empty'}", flush=True)


_WORDS = {"logs": "log record", "calls": "API call", "spans": "span", "metrics": "metric"}
