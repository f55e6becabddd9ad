"""Shared helpers for the conformance suite's fake LLM servers (loopback only).

- Recorder: appends one JSON line per HTTP exchange to a recording file.
- redact_headers: hides credential values (x-api-key, authorization, ...).
- start_proxy_sink: a tiny TCP listener used as HTTP(S)_PROXY so that any
  traffic an agent tries to send to a non-loopback host is *recorded and
  refused* (403) instead of leaving the machine.
- catch_all: sensible JSON answers for endpoints we do not model.
"""

import asyncio
import itertools
import json
import os
import re
import sys
import time

from aiohttp import web

SECRET_HEADERS = {"x-api-key", "authorization", "proxy-authorization", "cookie", "x-goog-api-key"}
_seq = itertools.count(1)


def redact_query(query):
    """An API key passed as ``?key=…`` (Gemini's REST convention) is hidden like a header."""
    return re.sub(
        r"(^|&)(key|api_key)=[^&]*", lambda m: f"{m.group(1)}{m.group(2)}=<redacted>", query
    )


def next_seq():
    return next(_seq)


def redact_headers(headers):
    out = {}
    for k, v in headers.items():
        if k.lower() in SECRET_HEADERS:
            v = "<redacted len=%d>" % len(v)
        if k in out:  # duplicate header names: keep all values
            out[k] = out[k] + ", " + v
        else:
            out[k] = v
    return out


class Recorder:
    def __init__(self, path):
        self.path = path
        d = os.path.dirname(os.path.abspath(path))
        os.makedirs(d, exist_ok=True)

    def write(self, rec):
        rec.setdefault("ts", time.time())
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
            f.flush()


def log(msg):
    print("[{}] {}".format(time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


async def read_body(request):
    raw = await request.read()
    body = None
    if raw:
        try:
            body = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            body = {"_non_json_body": raw[:20000].decode("utf-8", "replace")}
    return raw, body


def base_record(request, raw, body, seq):
    return {
        "seq": seq,
        "kind": "http",
        "method": request.method,
        "path": request.path,
        "query": redact_query(request.query_string),
        "headers": redact_headers(request.headers),
        "body_bytes": len(raw),
        "body": body,
    }


def make_catch_all(recorder, models_payload):
    async def catch_all(request):
        seq = next_seq()
        raw, body = await read_body(request)
        rec = base_record(request, raw, body, seq)
        p = request.path.rstrip("/")
        if request.method == "HEAD":
            status, payload = 200, None
        elif request.method == "GET" and p.endswith("/models"):
            status, payload = 200, models_payload
        elif request.method == "GET" and p in ("", "/", "/health", "/v1"):
            status, payload = 200, {"ok": True, "server": "fake-llm"}
        elif request.method == "POST":
            # telemetry / event logging / anything else: accept & ignore
            status, payload = 200, {}
        else:
            status, payload = (
                404,
                {
                    "type": "error",
                    "error": {
                        "type": "not_found_error",
                        "message": f"fake server: no route {request.method} {request.path}",
                    },
                },
            )
        rec["response"] = {"status": status, "stream": False, "json": payload}
        recorder.write(rec)
        log("#%d %s %s -> %d (catch-all)" % (seq, request.method, request.path_qs, status))
        if payload is None:
            return web.Response(status=status)
        return web.json_response(payload, status=status)

    return catch_all


LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}


def _split_target(request_line):
    """('CONNECT', 'host', port) or ('GET', 'host', port) for absolute-form URIs; else None."""
    parts = request_line.split(" ")
    if len(parts) < 2:
        return None
    method, target = parts[0].upper(), parts[1]
    if method == "CONNECT":
        host, _, port = target.rpartition(":")
        return method, host.strip("[]"), int(port or 443)
    if target.startswith("http://"):
        hostport = target[7:].split("/", 1)[0]
        host, _, port = hostport.rpartition(":") if ":" in hostport else (hostport, "", "80")
        return method, host.strip("[]"), int(port or 80)
    return None


async def _pipe(reader, writer, deadline):
    try:
        while True:
            data = await asyncio.wait_for(
                reader.read(65536), timeout=max(0.1, deadline - time.time())
            )
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (TimeoutError, ConnectionError, OSError):
        pass
    finally:
        try:
            writer.close()
        except Exception:
            pass


async def start_proxy_sink(host, port, recorder, tunnel_seconds=900):
    """HTTP(S)_PROXY endpoint on loopback.

    * CONNECT / absolute-form requests whose target is a loopback host are tunnelled to that
      loopback port (some clients, e.g. qwen-code's undici ProxyAgent, ignore NO_PROXY for
      127.0.0.1) and recorded as kind=proxy_tunnel_loopback.
    * Anything else (a non-loopback host) is recorded as kind=proxy_attempt_refused and
      answered 403: nothing leaves the machine.
    """

    async def handle(reader, writer):
        seq = next_seq()
        data = b""
        try:
            while b"\r\n\r\n" not in data and len(data) < 65536:
                chunk = await asyncio.wait_for(reader.read(4096), timeout=5)
                if not chunk:
                    break
                data += chunk
        except (TimeoutError, ConnectionError):
            pass
        head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1", "replace").split("\r\n")
        line0 = head[0] if head else ""
        hdrs = {}
        for line in head[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                hdrs[k.strip()] = v.strip()
        tgt = _split_target(line0)
        if tgt and tgt[1] in LOOPBACK_HOSTS:
            method, _thost, tport = tgt
            recorder.write(
                {
                    "seq": seq,
                    "kind": "proxy_tunnel_loopback",
                    "request_line": line0,
                    "headers": redact_headers(hdrs),
                }
            )
            log("#%d PROXY tunnel to loopback: %s" % (seq, line0))
            try:
                ur, uw = await asyncio.open_connection("127.0.0.1", tport)
            except OSError:
                writer.write(
                    b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                )
                writer.close()
                return
            if method == "CONNECT":
                writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                await writer.drain()
                rest = data.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in data else b""
                if rest:
                    uw.write(rest)
            else:
                uw.write(data)
            await uw.drain()
            deadline = time.time() + tunnel_seconds
            await asyncio.gather(_pipe(reader, uw, deadline), _pipe(ur, writer, deadline))
            return
        recorder.write(
            {
                "seq": seq,
                "kind": "proxy_attempt_refused",
                "request_line": line0,
                "headers": redact_headers(hdrs),
            }
        )
        log("#%d PROXY refused (non-loopback): %s" % (seq, line0))
        try:
            writer.write(
                b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )
            await writer.drain()
        except ConnectionError:
            pass
        writer.close()

    return await asyncio.start_server(handle, host, port)


def all_text(obj, limit=2_000_000):
    """Concatenate every string inside a JSON-ish object (bounded)."""
    out, stack, total = [], [obj], 0
    while stack and total < limit:
        o = stack.pop()
        if isinstance(o, str):
            out.append(o)
            total += len(o)
        elif isinstance(o, dict):
            stack.extend(reversed(list(o.values())))
        elif isinstance(o, list):
            stack.extend(reversed(o))
    return "\n".join(out)


async def serve(app, args, what, recorder=None):
    """Run ``app`` on 127.0.0.1:``args.port`` (and the proxy sink on ``args.proxy_port``,
    when the fake has one and a ``recorder``) until SIGTERM, SIGINT or
    ``args.max_lifetime`` seconds."""
    import signal

    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", args.port).start()
    proxy_port = getattr(args, "proxy_port", 0)
    sink = None
    if proxy_port and recorder is not None:
        sink = await start_proxy_sink("127.0.0.1", proxy_port, recorder)
    log(
        f"fake {what} on http://127.0.0.1:{args.port} record={args.record} "
        f"proxy_sink={proxy_port or '-'}"
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for s in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(s, stop.set)
    try:
        await asyncio.wait_for(stop.wait(), timeout=args.max_lifetime)
    except TimeoutError:
        log("max lifetime reached, exiting")
    if sink:
        sink.close()
    await runner.cleanup()
