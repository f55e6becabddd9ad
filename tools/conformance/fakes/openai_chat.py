#!/usr/bin/env python3
"""Fake OpenAI-compatible Chat Completions API on loopback (for qwen-code & co).

Endpoints
  POST /v1/chat/completions  (also /chat/completions)   stream (SSE chunks + [DONE]) and non-stream
  GET  /v1/models                                         model list
  /_fake/health, /_fake/reset                             harness control (recorded as kind=harness)
  anything else                                           JSON 200 (POST) / 404, HEAD 200

Every exchange is appended as ONE JSON line to --record (same layout as anthropic_api.py):
  {seq, ts, kind:"http", method, path, query, headers (secrets redacted), body_bytes, body,
   response: {status, stream, chunks:[...], message:{reassembled choice message + usage}}}

Reply script (per server process):
  1. the last user text mentions "weather" and a tool ending in "get_weather" is offered
     -> tool_call get_weather(city="Paris"), once
  2. the last message has role "tool" -> short text
  3. a read tool (read_file/Read/read) offered and not yet used
     -> tool_call read(<path arg>=<workdir>/<file>)
  4. "weather" asked, get_weather only listed under "Deferred Tools" and tool_search offered
     (qwen-code defers MCP tools) -> tool_call tool_search("select:<name>"), once
  5. response_format json_schema/json_object -> minimal JSON matching the schema
  6. otherwise short text
usage = {prompt_tokens: len(raw body)//4, completion_tokens: small, total_tokens: sum}
"""

import argparse
import asyncio
import json
import os
import re
import time

from aiohttp import web
from common import (
    Recorder,
    all_text,
    base_record,
    log,
    make_catch_all,
    next_seq,
    read_body,
    serve,
)

STATE = {"read_done": False, "weather_done": False, "search_done": False, "n": 0}
READ_NAMES = ("read_file", "Read", "read")


def fill_schema(schema, depth=0):
    schema = schema or {}
    t = schema.get("type")
    if depth > 5:
        return None
    if "enum" in schema:
        return schema["enum"][0]
    if t == "object" or "properties" in schema:
        return {k: fill_schema(v, depth + 1) for k, v in (schema.get("properties") or {}).items()}
    if t == "array":
        return []
    if t in ("integer", "number"):
        return 0
    if t == "boolean":
        return False
    return "fake"


def tool_list(body):
    out = []
    for t in body.get("tools") or []:
        f = t.get("function") if isinstance(t, dict) else None
        if f:
            out.append(f)
    return out


def last_user_text(msgs):
    for m in reversed(msgs):
        if m.get("role") == "user":
            return all_text(m.get("content"))
    return ""


def deferred_names(body):
    """Tool names advertised in a 'Deferred Tools' list (qwen-code puts MCP tools there)."""
    sys_text = all_text(
        [m.get("content") for m in (body.get("messages") or []) if m.get("role") == "system"]
    )
    return re.findall(r'^- "([^"]+)":', sys_text, re.MULTILINE)


def decide(body, args):
    """Return (assistant_message_dict, finish_reason, label)."""
    STATE["n"] += 1
    n = STATE["n"]
    msgs = body.get("messages") or []
    tools = tool_list(body)
    names = [f.get("name", "") for f in tools]
    last = msgs[-1] if msgs else {}
    wants_weather = "weather" in last_user_text(msgs).lower() and not STATE["weather_done"]
    weather = [x for x in names if x.endswith("get_weather")]
    if wants_weather and weather:
        STATE["weather_done"] = True
        call = {
            "id": "call_fake_%04d" % n,
            "type": "function",
            "function": {"name": weather[0], "arguments": json.dumps({"city": "Paris"})},
        }
        return (
            {"role": "assistant", "content": None, "tool_calls": [call]},
            "tool_calls",
            "tool_call_" + weather[0],
        )
    if last.get("role") == "tool":
        snippet = all_text(last.get("content"))[:80].replace("\n", " ")
        return (
            {
                "role": "assistant",
                "content": "Fake reply #%d: got the tool result (%s...). Done." % (n, snippet),
            },
            "stop",
            "text_after_tool_result",
        )
    read = [f for f in tools if f.get("name") in READ_NAMES]
    if read and not STATE["read_done"]:
        STATE["read_done"] = True
        f = read[0]
        props = (f.get("parameters") or {}).get("properties") or {}
        req = (f.get("parameters") or {}).get("required") or list(props)
        key = next((k for k in req if "path" in k.lower()), None) or next(
            (k for k in props if "path" in k.lower()), "absolute_path"
        )
        path = os.path.join(args.workdir, args.read_file)
        call = {
            "id": "call_fake_%04d" % n,
            "type": "function",
            "function": {"name": f["name"], "arguments": json.dumps({key: path})},
        }
        return (
            {
                "role": "assistant",
                "content": f"Let me read {args.read_file} first.",
                "tool_calls": [call],
            },
            "tool_calls",
            "tool_call_" + f["name"],
        )
    deferred_weather = [x for x in deferred_names(body) if x.endswith("get_weather")]
    if wants_weather and "tool_search" in names and deferred_weather and not STATE["search_done"]:
        STATE["search_done"] = True
        call = {
            "id": "call_fake_%04d" % n,
            "type": "function",
            "function": {
                "name": "tool_search",
                "arguments": json.dumps({"query": "select:" + deferred_weather[0]}),
            },
        }
        return (
            {"role": "assistant", "content": None, "tool_calls": [call]},
            "tool_calls",
            "tool_call_tool_search",
        )
    rf = body.get("response_format") or {}
    if rf.get("type") == "json_schema":
        return (
            {
                "role": "assistant",
                "content": json.dumps(fill_schema((rf.get("json_schema") or {}).get("schema"))),
            },
            "stop",
            "side_json",
        )
    if rf.get("type") == "json_object":
        return (
            {
                "role": "assistant",
                "content": json.dumps({"reasoning": "fake", "next_speaker": "user"}),
            },
            "stop",
            "side_json",
        )
    if not tools:
        return {"role": "assistant", "content": "Fake side reply #%d." % n}, "stop", "side_text"
    return {"role": "assistant", "content": "Fake reply #%d: OK." % n}, "stop", "text"


def stream_chunks(cid, model, msg, finish, usage, include_usage):
    created = int(time.time())
    base = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model}
    ch = [
        dict(
            base,
            choices=[
                {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}
            ],
        )
    ]
    text = msg.get("content") or ""
    half = max(1, len(text) // 2)
    for piece in (text[:half], text[half:]):
        if piece:
            ch.append(
                dict(
                    base, choices=[{"index": 0, "delta": {"content": piece}, "finish_reason": None}]
                )
            )
    for i, tc in enumerate(msg.get("tool_calls") or []):
        args = tc["function"]["arguments"]
        h = max(1, len(args) // 2)
        ch.append(
            dict(
                base,
                choices=[
                    {
                        "index": 0,
                        "delta": {
                            "tool_calls": [
                                {
                                    "index": i,
                                    "id": tc["id"],
                                    "type": "function",
                                    "function": {
                                        "name": tc["function"]["name"],
                                        "arguments": args[:h],
                                    },
                                }
                            ]
                        },
                        "finish_reason": None,
                    }
                ],
            )
        )
        ch.append(
            dict(
                base,
                choices=[
                    {
                        "index": 0,
                        "delta": {
                            "tool_calls": [{"index": i, "function": {"arguments": args[h:]}}]
                        },
                        "finish_reason": None,
                    }
                ],
            )
        )
    last = dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}])
    if include_usage:
        ch.append(last)
        ch.append(dict(base, choices=[], usage=usage))
    else:
        last["usage"] = usage
        ch.append(last)
    return ch


def reassemble(chunks):
    msg, usage, finish, tcs = {"role": "assistant", "content": ""}, None, None, {}
    for c in chunks:
        if c.get("usage"):
            usage = c["usage"]
        for ch in c.get("choices") or []:
            d = ch.get("delta") or {}
            msg["content"] += d.get("content") or ""
            for tc in d.get("tool_calls") or []:
                cur = tcs.setdefault(
                    tc["index"],
                    {"id": None, "type": "function", "function": {"name": "", "arguments": ""}},
                )
                cur["id"] = tc.get("id") or cur["id"]
                f = tc.get("function") or {}
                cur["function"]["name"] += f.get("name") or ""
                cur["function"]["arguments"] += f.get("arguments") or ""
            finish = ch.get("finish_reason") or finish
    if tcs:
        msg["tool_calls"] = [tcs[i] for i in sorted(tcs)]
    return {"message": msg, "finish_reason": finish, "usage": usage}


def build_app(args):
    rec = Recorder(args.record)
    models = {
        "object": "list",
        "data": [
            {"id": m, "object": "model", "created": 1700000000, "owned_by": "fake"}
            for m in (args.model, "qwen3-coder-plus", "gpt-4o-mini")
        ],
    }

    async def chat(request):
        seq = next_seq()
        raw, body = await read_body(request)
        r = base_record(request, raw, body, seq)
        if not isinstance(body, dict) or "messages" not in body:
            err = {"error": {"message": "fake: messages required", "type": "invalid_request_error"}}
            r["response"] = {"status": 400, "stream": False, "json": err}
            rec.write(r)
            return web.json_response(err, status=400)
        msg, finish, label = decide(body, args)
        model = body.get("model") or args.model
        pt = max(1, len(raw) // 4)
        ct = 5 + len(json.dumps(msg)) // 8
        usage = {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct}
        cid = "chatcmpl-fake-%06d" % seq
        r["script_step"] = label
        log(
            "#%d POST %s model=%s stream=%s tools=%d msgs=%d -> %s"
            % (
                seq,
                request.path_qs,
                model,
                bool(body.get("stream")),
                len(body.get("tools") or []),
                len(body.get("messages") or []),
                label,
            )
        )
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            chunks = stream_chunks(cid, model, msg, finish, usage, include_usage)
            resp = web.StreamResponse(
                status=200,
                headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"},
            )
            await resp.prepare(request)
            for c in chunks:
                await resp.write((f"data: {json.dumps(c)}\n\n").encode())
            await resp.write(b"data: [DONE]\n\n")
            await resp.write_eof()
            r["response"] = {
                "status": 200,
                "stream": True,
                "chunks": chunks,
                "reassembled": reassemble(chunks),
            }
            rec.write(r)
            return resp
        out = {
            "id": cid,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
            "usage": usage,
        }
        r["response"] = {"status": 200, "stream": False, "json": out}
        rec.write(r)
        return web.json_response(out)

    async def control(request):
        seq = next_seq()
        raw, body = await read_body(request)
        r = base_record(request, raw, body, seq)
        r["kind"] = "harness"
        if request.match_info["what"] == "reset":
            STATE.update(read_done=False, weather_done=False, search_done=False, n=0)
        payload = {"ok": True, "state": STATE}
        r["response"] = {"status": 200, "stream": False, "json": payload}
        rec.write(r)
        return web.json_response(payload)

    app = web.Application(client_max_size=256 * 1024 * 1024)
    app.router.add_route("*", "/_fake/{what}", control)
    for prefix in ("/v1", ""):
        app.router.add_post(prefix + "/chat/completions", chat)
    app.router.add_route("*", "/{tail:.*}", make_catch_all(rec, models))
    return app, rec


async def main(args):
    app, rec = build_app(args)
    await serve(app, args, "OpenAI chat API", rec)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=18090)
    ap.add_argument("--proxy-port", type=int, default=0)
    ap.add_argument("--record", required=True, help="JSON lines file: one line per exchange")
    ap.add_argument(
        "--workdir", required=True, help="the agent's project folder (the fake reads files there)"
    )
    ap.add_argument("--read-file", default="hello.py")
    ap.add_argument("--model", default="qwen3-coder-plus")
    ap.add_argument(
        "--max-lifetime", type=float, default=1800, help="self-terminate after N seconds"
    )
    asyncio.run(main(ap.parse_args()))
