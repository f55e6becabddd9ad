#!/usr/bin/env python3
"""A small stdio MCP server for the conformance suite: tools get_weather(city) and
search_notes(query, limit), with the schemas the ``mcp`` package's MCPServer generates.

Written without that package on purpose: it starts in milliseconds, where importing ``mcp``
took seconds on a busy machine, long enough for Claude Code's print mode to send its first
turns without the server's tools. Newline-delimited JSON-RPC 2.0 on stdin/stdout (the MCP
stdio transport). Each call is logged to $CONFORMANCE_MCP_LOG when it is set.
"""

import json
import os
import sys
import time

VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")


def _schema(name, props, required):
    return {
        "properties": props,
        "required": required,
        "type": "object",
        "title": f"{name}Arguments",
    }


def _output(name):
    return {
        "properties": {"result": {"title": "Result", "type": "string"}},
        "required": ["result"],
        "type": "object",
        "title": f"{name}Output",
    }


TOOLS = [
    {
        "description": "Get the current weather for a city (fake data, for testing).",
        "inputSchema": _schema(
            "get_weather", {"city": {"title": "City", "type": "string"}}, ["city"]
        ),
        "name": "get_weather",
        "outputSchema": _output("get_weather"),
    },
    {
        "description": "Search the user's personal notes for a query and return matching snippets.",
        "inputSchema": _schema(
            "search_notes",
            {
                "query": {"title": "Query", "type": "string"},
                "limit": {"default": 5, "title": "Limit", "type": "integer"},
            },
            ["query"],
        ),
        "name": "search_notes",
        "outputSchema": _output("search_notes"),
    },
]
NOTES = ["buy milk", "refactor hello.py", "read the PDF on caching"]
EMPTY = {
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
}
# what the mcp package's server announces
CAPABILITIES = {
    "prompts": {"listChanged": False},
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}


def call(name, args):
    log = os.environ.get("CONFORMANCE_MCP_LOG")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps({"t": time.time(), "tool": name, "args": args}) + "\n")
    if name == "get_weather":
        return f"Weather in {args.get('city')}: 21C, light breeze, no rain (fake)."
    if name == "search_notes":
        query = str(args.get("query", "")).lower()
        hits = [n for n in NOTES if query in n.lower()][: int(args.get("limit", 5))]
        return json.dumps({"query": args.get("query"), "hits": hits})
    raise KeyError(name)


def answer(msg):
    method, params = msg.get("method"), msg.get("params") or {}
    if method == "initialize":
        asked = params.get("protocolVersion")
        return {
            "capabilities": CAPABILITIES,
            "protocolVersion": asked if asked in VERSIONS else VERSIONS[1],
            "serverInfo": {"name": "notes-weather", "version": ""},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        text = call(params.get("name"), params.get("arguments") or {})
        return {
            "content": [{"type": "text", "text": text}],
            "structuredContent": {"result": text},
            "isError": False,
        }
    if method == "ping":
        return {}
    if method in EMPTY:
        return {EMPTY[method]: []}
    raise LookupError(method)


def main():
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if "id" not in msg:  # a notification
            continue
        try:
            reply = {"jsonrpc": "2.0", "id": msg["id"], "result": answer(msg)}
        except (KeyError, LookupError) as e:
            reply = {
                "jsonrpc": "2.0",
                "id": msg["id"],
                "error": {"code": -32601, "message": f"not found: {e}"},
            }
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
