#!/usr/bin/env python3
"""Fake OpenAI Responses API (Codex CLI) on loopback: ``POST /v1/responses`` answered with SSE.

Every request is appended as one JSON line to --record (headers redacted, the body decoded
from gzip or zstd). Replies are short texts; usage.input_tokens = len(decoded body) // 4.
"""

import argparse
import asyncio
import itertools
import json
import time

from aiohttp import web
from common import Recorder, base_record, log, make_catch_all, next_seq

replies = itertools.count(1)


def decode(raw, encoding):
    if encoding == "zstd":
        import zstandard

        return zstandard.ZstdDecompressor().decompressobj().decompress(raw)
    if encoding == "gzip":
        import gzip

        return gzip.decompress(raw)
    return raw


def sse(event, data):
    return (f"event: {event}\ndata: {json.dumps(data)}\n\n").encode()


def build_app(args):
    rec = Recorder(args.record)

    async def responses(request):
        seq = next_seq()
        raw = decode(await request.read(), request.headers.get("content-encoding", ""))
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"_undecodable": len(raw)}
        items = body.get("input") or []
        last = items[-1] if items else {}
        k = next(replies)
        after_tool = last.get("type") == "function_call_output"
        text = "Fake codex reply #%d: %s" % (k, "got the tool output." if after_tool else "OK.")
        usage = {
            "input_tokens": len(raw) // 4,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 9,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": len(raw) // 4 + 9,
        }
        rid, mid = "resp_%d" % k, "msg_%d" % k
        item = {
            "type": "message",
            "id": mid,
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
        r = base_record(request, raw, body, seq)
        r["response"] = {"status": 200, "stream": True, "text": text, "usage": usage}
        rec.write(r)
        log("#%d POST %s -> %s" % (seq, request.path, text))
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        base = {
            "id": rid,
            "object": "response",
            "created_at": int(time.time()),
            "model": body.get("model"),
            "status": "in_progress",
            "output": [],
        }
        started = dict(item, status="in_progress", content=[])
        for event, data in (
            ("response.created", {"response": base}),
            ("response.output_item.added", {"output_index": 0, "item": started}),
            (
                "response.output_text.delta",
                {"item_id": mid, "output_index": 0, "content_index": 0, "delta": text},
            ),
            ("response.output_item.done", {"output_index": 0, "item": item}),
            (
                "response.completed",
                {"response": dict(base, status="completed", output=[item], usage=usage)},
            ),
        ):
            await resp.write(sse(event, dict(data, type=event)))
        await resp.write_eof()
        return resp

    async def health(request):
        return web.json_response({"ok": True})

    app = web.Application(client_max_size=256 * 1024 * 1024)
    app.router.add_route("*", "/_fake/health", health)
    for prefix in ("/v1", ""):
        app.router.add_post(prefix + "/responses", responses)
    models = {"object": "list", "data": [], "models": []}
    app.router.add_route("*", "/{tail:.*}", make_catch_all(rec, models))
    return app


async def main(args):
    runner = web.AppRunner(build_app(args), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", args.port).start()
    log("fake responses API on http://127.0.0.1:%d record=%s" % (args.port, args.record))
    await asyncio.sleep(args.max_lifetime)
    await runner.cleanup()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=18091)
    ap.add_argument("--record", required=True, help="JSON lines file: one line per exchange")
    ap.add_argument(
        "--max-lifetime", type=float, default=900, help="self-terminate after N seconds"
    )
    asyncio.run(main(ap.parse_args()))
