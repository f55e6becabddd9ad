"""Tiny stdio MCP server for the conformance suite (mcp>=2: MCPServer, formerly FastMCP).

Tools: get_weather(city), search_notes(query, limit). Logs each call to
$CONFORMANCE_MCP_LOG (default: none).
"""

import json
import os
import time

from mcp.server.mcpserver import MCPServer

LOG = os.environ.get("CONFORMANCE_MCP_LOG", os.devnull)
server = MCPServer("notes-weather")


def _log(name, args):
    try:
        os.makedirs(os.path.dirname(LOG), exist_ok=True)
        with open(LOG, "a") as f:
            f.write(json.dumps({"t": time.time(), "tool": name, "args": args}) + "\n")
    except OSError:
        pass


@server.tool()
def get_weather(city: str) -> str:
    """Get the current weather for a city (fake data, for testing)."""
    _log("get_weather", {"city": city})
    return f"Weather in {city}: 21C, light breeze, no rain (fake)."


@server.tool()
def search_notes(query: str, limit: int = 5) -> str:
    """Search the user's personal notes for a query and return matching snippets."""
    _log("search_notes", {"query": query, "limit": limit})
    notes = ["buy milk", "refactor hello.py", "read the PDF on caching"]
    hits = [n for n in notes if query.lower() in n.lower()][:limit]
    return json.dumps({"query": query, "hits": hits})


if __name__ == "__main__":
    server.run("stdio")
