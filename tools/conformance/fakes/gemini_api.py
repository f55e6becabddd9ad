#!/usr/bin/env python3
"""Fake Gemini API (generativelanguage v1beta) on loopback, for Gemini CLI.

``POST /v1beta/models/<model>:streamGenerateContent`` (SSE), ``:generateContent`` (JSON),
``:countTokens``. Every request is appended as one JSON line to --record (API key redacted).
A request asking for JSON (Gemini CLI's model router) gets a JSON object; others a short
text. usageMetadata.promptTokenCount = len(raw body) // 4.
"""

import argparse
import asyncio
import itertools
import json

from aiohttp import web
from common import Recorder, base_record, log, make_catch_all, next_seq, read_body, serve

replies = itertools.count(1)
ROUTER_REPLY = {
    "reasoning": "fake",
    "next_speaker": "user",
    "model": "flash",
    "complexity_reasoning": "fake",
    "complexity_score": 10,
}


def build_app(args):
    rec = Recorder(args.record)

    async def models(request):
        seq = next_seq()
        raw, body = await read_body(request)
        body = body if isinstance(body, dict) else {}
        r = base_record(request, raw, body, seq)
        path = request.path
        if path.endswith(":countTokens"):
            r["response"] = {"status": 200, "json": {"totalTokens": len(raw) // 4}}
            rec.write(r)
            return web.json_response(r["response"]["json"])
        k = next(replies)
        gen = body.get("generationConfig") or {}
        wants_json = (
            gen.get("responseMimeType") == "application/json"
            or gen.get("responseJsonSchema")
            or gen.get("responseSchema")
        )
        text = json.dumps(ROUTER_REPLY) if wants_json else "Fake gemini reply #%d: OK." % k
        usage = {
            "promptTokenCount": len(raw) // 4,
            "candidatesTokenCount": 8,
            "totalTokenCount": len(raw) // 4 + 8,
        }
        chunk = {
            "candidates": [
                {
                    "content": {"parts": [{"text": text}], "role": "model"},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": usage,
            "responseId": "r%d" % k,
            "modelVersion": path.split("/models/")[-1].split(":")[0],
        }
        r["response"] = {"status": 200, "json": chunk}
        rec.write(r)
        log("#%d POST %s -> %s" % (seq, path, text[:40]))
        if "streamGenerateContent" not in path:
            return web.json_response(chunk)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        await resp.write((f"data: {json.dumps(chunk)}\r\n\r\n").encode())
        await resp.write_eof()
        return resp

    async def health(request):
        return web.json_response({"ok": True})

    app = web.Application(client_max_size=256 * 1024 * 1024)
    app.router.add_route("*", "/_fake/health", health)
    for prefix in ("/v1beta", "/v1"):
        app.router.add_post(prefix + "/models/{tail:.*}", models)
    app.router.add_route("*", "/{tail:.*}", make_catch_all(rec, {"models": []}))
    return app


async def main(args):
    await serve(build_app(args), args, "Gemini API")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=18092)
    ap.add_argument("--record", required=True, help="JSON lines file: one line per exchange")
    ap.add_argument(
        "--max-lifetime", type=float, default=900, help="self-terminate after N seconds"
    )
    asyncio.run(main(ap.parse_args()))
