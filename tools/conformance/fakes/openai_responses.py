#!/usr/bin/env python3
"""Fake OpenAI Responses API (Codex CLI) on loopback: ``POST /v1/responses`` answered with SSE.

Every request is appended as one JSON line to --record (headers redacted, the body decoded
from gzip or zstd). Replies are short texts; usage.input_tokens = len(decoded body) // 4.

Scripted usage (the ``compaction`` scenario): the user's newest message may say
``USAGE=n``, the input tokens reported for the call that answers it, and ``FOLLOW=n``, those
of the call after a tool's output in that turn. ``TOOLCALL`` in it gets a reasoning item
(8,000 characters of encrypted content) and a call of an unknown tool first, so the turn
goes on after the tool's output. Codex's compaction call (``x-codex-turn-metadata``
request_kind ``compaction``, or its checkpoint prompt) gets a summary and the body's length.
"""

import argparse
import asyncio
import base64
import itertools
import json
import re
import time

from aiohttp import web
from common import Recorder, base_record, log, make_catch_all, next_seq, serve

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


def text_of(item):
    content = item.get("content")
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def compaction_call(request, prompt):
    try:
        meta = json.loads(request.headers.get("x-codex-turn-metadata") or "{}")
    except ValueError:
        meta = {}
    if isinstance(meta, dict) and meta.get("request_kind") == "compaction":
        return True
    low = prompt.lower()
    return "CONTEXT CHECKPOINT" in prompt or ("summary" in low and "handoff" in low)


def scripted_tokens(prompt, fresh, after_tool, compacting, measured):
    """The input tokens to report: what the user's message scripts, else the body's length."""
    usage = re.search(r"USAGE=(\d+)", prompt)
    follow = re.search(r"FOLLOW=(\d+)", prompt)
    if usage and fresh and not compacting:
        return int(usage.group(1))
    if usage and follow and after_tool:
        return int(follow.group(1))
    return measured


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
        after_tool = last.get("type") in ("function_call_output", "custom_tool_call_output")
        users = [i for i in items if i.get("type") == "message" and i.get("role") == "user"]
        prompt = text_of(users[-1]) if users else ""
        fresh = bool(users) and last is users[-1]  # the call that answers the user's message
        compacting = compaction_call(request, prompt)
        tokens = scripted_tokens(prompt, fresh, after_tool, compacting, len(raw) // 4)
        usage = {
            "input_tokens": tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 9,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": tokens + 9,
        }
        rid, mid = "resp_%d" % k, "msg_%d" % k
        if "TOOLCALL" in prompt and fresh and not compacting:
            text = None
            secret = base64.b64encode(b"r" * 6000).decode()
            output = [
                {
                    "type": "reasoning",
                    "id": "rs_%d" % k,
                    "encrypted_content": secret,
                    "summary": [{"type": "summary_text", "text": "thinking"}],
                },
                {
                    "type": "function_call",
                    "id": "fc_%d" % k,
                    "call_id": "call_%d" % k,
                    "name": "no_such_tool",
                    "arguments": "{}",
                    "status": "completed",
                },
            ]
        else:
            text = (
                "SUMMARY: the user said hello several times."
                if compacting
                else "Fake codex reply #%d: %s"
                % (k, "got the tool output." if after_tool else "OK.")
            )
            output = [
                {
                    "type": "message",
                    "id": mid,
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}],
                }
            ]
        r = base_record(request, raw, body, seq)
        r["response"] = {
            "status": 200,
            "stream": True,
            "text": text or "function_call",
            "usage": usage,
        }
        rec.write(r)
        log("#%d POST %s -> %s" % (seq, request.path, text or "reasoning + function_call"))
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
        events = [("response.created", {"response": base})]
        for i, item in enumerate(output):
            if item["type"] == "message":
                started = dict(item, status="in_progress", content=[])
                events += [
                    ("response.output_item.added", {"output_index": i, "item": started}),
                    (
                        "response.output_text.delta",
                        {"item_id": mid, "output_index": i, "content_index": 0, "delta": text},
                    ),
                ]
            events.append(("response.output_item.done", {"output_index": i, "item": item}))
        events.append(
            (
                "response.completed",
                {"response": dict(base, status="completed", output=output, usage=usage)},
            )
        )
        for event, data in events:
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
    await serve(build_app(args), args, "responses API")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=18091)
    ap.add_argument("--record", required=True, help="JSON lines file: one line per exchange")
    ap.add_argument(
        "--max-lifetime", type=float, default=900, help="self-terminate after N seconds"
    )
    asyncio.run(main(ap.parse_args()))
