#!/usr/bin/env python3
"""Fake Anthropic Messages API on loopback, for recording what a real agent sends.

Endpoints
  POST /v1/messages               stream (SSE) and non-stream JSON
  POST /v1/messages/count_tokens  --count-tokens api-like (default): content chars/4, +500 when
                                  tools are present (like the real API's tool-use preamble;
                                  Claude Code subtracts 500 per tool group in /context);
                                  estimate: len(raw body)/4; 404: not found (Claude Code then
                                  counts with max_tokens=1 /v1/messages calls)
  /_fake/health, /_fake/reset, /_fake/config?count_tokens=MODE   control (kind=harness)
  anything else                   JSON 200 (GET .../models, POST telemetry) / 404, HEAD 200

Every exchange is appended as ONE JSON line to --record:
  {seq, ts, kind:"http", method, path, query, headers (secrets redacted), body_bytes,
   body (full JSON), response: {status, stream, events:[...SSE events...], message:{reassembled}} }

Reply script (state is per server process), for main requests (tools offered, max_tokens > 1):
  1. the typed prompt asks for "weather" and a tool ending in "get_weather" is offered
     -> tool_use get_weather(city="Paris"), once (also right after the ToolSearch below)
  2. the same, but the tool is only listed as deferred ("available via ToolSearch", Claude Code
     2.1.3xx) -> tool_use ToolSearch("select:<name>"), once
  3. the typed prompt says "in parallel" -> one message with 3 parallel Read tool_use blocks
     (hello.py, CLAUDE.md, QWEN.md), once
  4. the last user message holds a tool_result -> short text (end_turn)
  5. "Read" offered and not yet used -> text + tool_use Read(file_path=<workdir>/<file>)
  6. output_config.format json_schema -> a minimal JSON object fitting the schema
  7. otherwise short text; side requests (no tools, max_tokens <= 1) get "Fake title".
Usage: input_tokens = len(raw JSON body)//4, output_tokens small, cache_* = 0.

Only binds 127.0.0.1. Optional --proxy-port starts a refuse-and-record sink to use as
HTTPS_PROXY/HTTP_PROXY so that stray non-loopback traffic is logged, never sent.
"""

import argparse
import asyncio
import json
import os
import re

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

STATE = {
    "read_done": False,
    "weather_done": False,
    "search_done": False,
    "parallel_done": False,
    "n": 0,
}
CONFIG = {"count_tokens": "api-like"}
WORKDIR_RE = re.compile(
    r"(?:Primary working directory|Working directory|cwd)\s*:\s*(\S+)", re.IGNORECASE
)


def est_tokens(raw_len):
    return max(1, raw_len // 4)


TOOL_PREAMBLE_TOKENS = 500
PARALLEL_FILES = ("hello.py", "CLAUDE.md", "QWEN.md")


def content_tokens(body):
    """Rough token estimate of what the model would see: text chars/4 (+ JSON of tools)."""
    chars = len(all_text(body.get("system"))) + len(all_text(body.get("messages")))
    tools = body.get("tools") or []
    chars += sum(len(json.dumps(t, ensure_ascii=False)) for t in tools)
    n = max(1, chars // 4) + 4 * len(body.get("messages") or [])
    return n + (TOOL_PREAMBLE_TOKENS if tools else 0)


def last_user_message(body):
    for m in reversed(body.get("messages") or []):
        if m.get("role") == "user":
            return m
    return None


def blocks(msg):
    c = (msg or {}).get("content")
    if isinstance(c, str):
        return [{"type": "text", "text": c}]
    return c if isinstance(c, list) else []


def typed_prompt(msg):
    """Text of the user's own words: last text block that is not a <system-reminder>."""
    for b in reversed(blocks(msg)):
        if b.get("type") == "text":
            t = b.get("text", "")
            if not t.lstrip().startswith("<system-reminder>"):
                return t
    return ""


def prompt_text(body):
    """The user's last typed prompt (skipping messages that only carry tool results)."""
    for m in reversed(body.get("messages") or []):
        if m.get("role") == "user" and not any(b.get("type") == "tool_result" for b in blocks(m)):
            t = typed_prompt(m)
            if t:
                return t
    return ""


def deferred_names(body):
    """Tool names listed as deferred (Claude Code 2.1.3xx: 'available via ToolSearch')."""
    text = all_text(body.get("system")) + "\n" + all_text(body.get("messages"))
    return re.findall(r"^(mcp__\S+)$", text, re.MULTILINE)


def find_workdir(body, default):
    text = all_text(body.get("system")) + "\n" + all_text((body.get("messages") or [])[:1])
    m = WORKDIR_RE.search(text)
    return m.group(1).rstrip(".,") if m else default


def fill_schema(schema, depth=0):
    """Minimal JSON value satisfying a simple JSON schema (for structured side requests)."""
    t = (schema or {}).get("type")
    if depth > 5:
        return None
    if t == "object" or "properties" in (schema or {}):
        props = schema.get("properties") or {}
        return {k: fill_schema(v, depth + 1) for k, v in props.items()}
    if t == "array":
        return []
    if t in ("integer", "number"):
        return 0
    if t == "boolean":
        return False
    if "enum" in (schema or {}):
        return schema["enum"][0]
    return "Fake title"


def _tool_use(n, name, args, k=None):
    tid = "toolu_fake_%04d" % n + ("" if k is None else "_%d" % k)
    return {"type": "tool_use", "id": tid, "name": name, "input": args}


def _weather_step(body, names, tool_results, n):
    """Steps 1-2: the MCP weather tool, loaded through ToolSearch first when deferred."""
    if STATE["weather_done"] or "weather" not in prompt_text(body).lower():
        return None
    weather = [x for x in names if x.endswith("get_weather")]
    if weather and (not tool_results or STATE["search_done"]):
        STATE["weather_done"] = True
        return [_tool_use(n, weather[0], {"city": "Paris"})], "tool_use", "tool_use_" + weather[0]
    deferred = [x for x in deferred_names(body) if x.endswith("get_weather")]
    if (
        not weather
        and deferred
        and "ToolSearch" in names
        and not STATE["search_done"]
        and not tool_results
    ):
        STATE["search_done"] = True
        query = {"query": "select:" + deferred[0], "max_results": 1}
        return [_tool_use(n, "ToolSearch", query)], "tool_use", "tool_use_ToolSearch"
    return None


def _read_step(body, names, args, n):
    """Steps 3 and 5: three Read calls in one message, or one Read."""
    if "Read" not in names:
        return None
    wd = find_workdir(body, args.workdir)
    if not STATE["parallel_done"] and "in parallel" in prompt_text(body).lower():
        STATE["parallel_done"] = STATE["read_done"] = True
        calls = [
            _tool_use(n, "Read", {"file_path": os.path.join(wd, f)}, k)
            for k, f in enumerate(PARALLEL_FILES)
        ]
        text = {"type": "text", "text": "Reading %d files at once." % len(calls)}
        return [text] + calls, "tool_use", "tool_use_Read_parallel"
    if not STATE["read_done"]:
        STATE["read_done"] = True
        text = {"type": "text", "text": f"Let me read {args.read_file} first."}
        call = _tool_use(n, "Read", {"file_path": os.path.join(wd, args.read_file)})
        return [text, call], "tool_use", "tool_use_Read"
    return None


def decide(body, args):
    """Return (content_blocks, stop_reason, label)."""
    STATE["n"] += 1
    n = STATE["n"]
    tools = body.get("tools") or []
    names = [t.get("name", "") for t in tools if isinstance(t, dict)]
    side = (body.get("max_tokens") or 0) <= 1 or not tools
    tool_results = [b for b in blocks(last_user_message(body)) if b.get("type") == "tool_result"]
    if not side:
        step = _weather_step(body, names, tool_results, n)
        if step is None and not tool_results:
            step = _read_step(body, names, args, n)
        if step is not None:
            return step
    if tool_results:
        snippet = all_text(tool_results[-1].get("content"))[:80].replace("\n", " ")
        text = "Fake reply #%d: got the tool result (%s...). Done." % (n, snippet)
        return [{"type": "text", "text": text}], "end_turn", "text_after_tool_result"
    fmt = (body.get("output_config") or {}).get("format") or {}
    if fmt.get("type") == "json_schema":
        text = json.dumps(fill_schema(fmt.get("schema")))
        return [{"type": "text", "text": text}], "end_turn", "side_json"
    if side:
        return [{"type": "text", "text": "Fake title"}], "end_turn", "side_text"
    return [{"type": "text", "text": "Fake reply #%d: OK." % n}], "end_turn", "text"


def sse_events(msg_id, model, content, stop_reason, in_tok, out_tok):
    usage0 = {
        "input_tokens": in_tok,
        "output_tokens": 1,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    ev = [
        {
            "type": "message_start",
            "message": {
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage0,
            },
        },
        {"type": "ping"},
    ]
    for i, b in enumerate(content):
        if b["type"] == "text":
            ev.append(
                {
                    "type": "content_block_start",
                    "index": i,
                    "content_block": {"type": "text", "text": ""},
                }
            )
            t = b["text"]
            half = max(1, len(t) // 2)
            for piece in (t[:half], t[half:]):
                if piece:
                    ev.append(
                        {
                            "type": "content_block_delta",
                            "index": i,
                            "delta": {"type": "text_delta", "text": piece},
                        }
                    )
        elif b["type"] == "tool_use":
            ev.append(
                {
                    "type": "content_block_start",
                    "index": i,
                    "content_block": {
                        "type": "tool_use",
                        "id": b["id"],
                        "name": b["name"],
                        "input": {},
                    },
                }
            )
            js = json.dumps(b["input"])
            half = max(1, len(js) // 2)
            for piece in (js[:half], js[half:]):
                if piece:
                    ev.append(
                        {
                            "type": "content_block_delta",
                            "index": i,
                            "delta": {"type": "input_json_delta", "partial_json": piece},
                        }
                    )
        ev.append({"type": "content_block_stop", "index": i})
    ev.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {
                "input_tokens": in_tok,
                "output_tokens": out_tok,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }
    )
    ev.append({"type": "message_stop"})
    return ev


def reassemble(events):
    """Rebuild the final message from the SSE events (what a client would see)."""
    msg, cur = None, {}
    for e in events:
        t = e["type"]
        if t == "message_start":
            msg = json.loads(json.dumps(e["message"]))
        elif t == "content_block_start":
            cur[e["index"]] = dict(e["content_block"], _json="")
        elif t == "content_block_delta":
            d = e["delta"]
            if d["type"] == "text_delta":
                cur[e["index"]]["text"] += d["text"]
            elif d["type"] == "input_json_delta":
                cur[e["index"]]["_json"] += d["partial_json"]
        elif t == "content_block_stop":
            b = cur.pop(e["index"])
            js = b.pop("_json")
            if b["type"] == "tool_use" and js:
                b["input"] = json.loads(js)
            msg["content"].append(b)
        elif t == "message_delta":
            msg.update(e["delta"])
            msg["usage"].update(e["usage"])
    return msg


def build_app(args):
    rec = Recorder(args.record)
    models = {
        "data": [
            {"type": "model", "id": m, "display_name": m, "created_at": "2025-01-01T00:00:00Z"}
            for m in ("claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5")
        ],
        "has_more": False,
        "first_id": "claude-sonnet-4-5",
        "last_id": "claude-haiku-4-5",
    }

    async def messages(request):
        seq = next_seq()
        raw, body = await read_body(request)
        r = base_record(request, raw, body, seq)
        if not isinstance(body, dict) or "messages" not in body:
            err = {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": "fake: messages required"},
            }
            r["response"] = {"status": 400, "stream": False, "json": err}
            rec.write(r)
            return web.json_response(err, status=400)
        content, stop, label = decide(body, args)
        model = body.get("model", "claude-fake")
        in_tok = est_tokens(len(raw))
        out_tok = 5 + len(json.dumps(content)) // 8
        msg_id = "msg_fake_%06d" % seq
        r["script_step"] = label
        log(
            "#%d POST %s model=%s stream=%s tools=%d max_tokens=%s -> %s"
            % (
                seq,
                request.path_qs,
                model,
                bool(body.get("stream")),
                len(body.get("tools") or []),
                body.get("max_tokens"),
                label,
            )
        )
        hdrs = {"request-id": "req_fake_%06d" % seq, "anthropic-organization-id": "fake-org"}
        if body.get("stream"):
            events = sse_events(msg_id, model, content, stop, in_tok, out_tok)
            resp = web.StreamResponse(
                status=200,
                headers=dict(
                    hdrs, **{"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
                ),
            )
            await resp.prepare(request)
            for e in events:
                await resp.write(
                    ("event: {}\ndata: {}\n\n".format(e["type"], json.dumps(e))).encode()
                )
            await resp.write_eof()
            r["response"] = {
                "status": 200,
                "stream": True,
                "events": events,
                "message": reassemble(events),
            }
            rec.write(r)
            return resp
        message = {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {
                "input_tokens": in_tok,
                "output_tokens": out_tok,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }
        r["response"] = {"status": 200, "stream": False, "json": message}
        rec.write(r)
        return web.json_response(message, headers=hdrs)

    async def count_tokens(request):
        seq = next_seq()
        raw, body = await read_body(request)
        r = base_record(request, raw, body, seq)
        mode = CONFIG["count_tokens"]
        if mode == "404":
            payload, status = (
                {
                    "type": "error",
                    "error": {"type": "not_found_error", "message": "fake: count_tokens disabled"},
                },
                404,
            )
        elif mode == "estimate" or not isinstance(body, dict):
            payload, status = {"input_tokens": est_tokens(len(raw))}, 200
        else:
            payload, status = {"input_tokens": content_tokens(body)}, 200
        r["count_tokens_mode"] = mode
        r["response"] = {"status": status, "stream": False, "json": payload}
        rec.write(r)
        log("#%d POST %s -> %d %s" % (seq, request.path_qs, status, payload))
        return web.json_response(payload, status=status)

    async def control(request):
        seq = next_seq()
        raw, body = await read_body(request)
        r = base_record(request, raw, body, seq)
        r["kind"] = "harness"
        what = request.match_info["what"]
        if what == "reset":
            STATE.update(
                read_done=False, weather_done=False, search_done=False, parallel_done=False, n=0
            )
        elif what == "config":
            ct = request.query.get("count_tokens")
            if ct in ("api-like", "estimate", "404"):
                CONFIG["count_tokens"] = ct
        payload = {"ok": True, "state": STATE, "config": CONFIG}
        r["response"] = {"status": 200, "stream": False, "json": payload}
        rec.write(r)
        log("#%d harness %s -> %s" % (seq, request.path_qs, payload))
        return web.json_response(payload)

    app = web.Application(client_max_size=256 * 1024 * 1024)
    app.router.add_route("*", "/_fake/{what}", control)
    for prefix in ("/v1", ""):
        app.router.add_post(prefix + "/messages", messages)
        app.router.add_post(prefix + "/messages/count_tokens", count_tokens)
    app.router.add_route("*", "/{tail:.*}", make_catch_all(rec, models))
    return app, rec


async def main(args):
    CONFIG["count_tokens"] = args.count_tokens
    app, rec = build_app(args)
    await serve(app, args, "Anthropic API", rec)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=18080)
    ap.add_argument("--proxy-port", type=int, default=0)
    ap.add_argument("--record", required=True, help="JSON lines file: one line per exchange")
    ap.add_argument(
        "--workdir", required=True, help="the agent's project folder (the fake reads files there)"
    )
    ap.add_argument("--read-file", default="hello.py")
    ap.add_argument("--count-tokens", choices=["api-like", "estimate", "404"], default="api-like")
    ap.add_argument(
        "--max-lifetime", type=float, default=1800, help="self-terminate after N seconds"
    )
    asyncio.run(main(ap.parse_args()))
