"""What the API would report: prompt and output tokens of a request.

Usage numbers are computed, not invented: cl100k counts of what the model
reads, times 1.08 (Claude's tokenizer counts a little more).
"""

from __future__ import annotations

import base64
import json
import struct
from typing import Any

from ctxviewer.analysis.tokens.bpe import encoding

CLAUDE_FACTOR = 1.08
_ENC = encoding("cl100k_base")
_COUNTS: dict[str, int] = {}


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def raw_tokens(obj: Any) -> int:
    text = obj if isinstance(obj, str) else dumps(obj)
    n = _COUNTS.get(text)
    if n is None:
        n = _COUNTS[text] = len(_ENC.encode_ordinary(text))
    return n


TOOLS_PREAMBLE = 346  # the tool-use instructions Anthropic adds when tools are declared


def _block_tokens(block: dict[str, Any]) -> int:
    kind = block.get("type")
    if kind == "text":
        return raw_tokens(block["text"]) + 3
    if kind == "thinking":
        return raw_tokens(block["thinking"]) + 3
    if kind == "tool_use":
        return raw_tokens(block["name"]) + raw_tokens(block["input"]) + 8
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            return sum(_block_tokens(x) for x in content) + 8
        return raw_tokens(content or "") + 8
    if kind == "image":
        data = base64.b64decode(block["source"]["data"])
        w, h = struct.unpack(">II", data[16:24])
        return max(1, round(w * h / 750))
    return raw_tokens(block)


def _message_tokens(message: dict[str, Any]) -> int:
    content = message["content"]
    if isinstance(content, str):
        return raw_tokens(content) + 4
    return sum(_block_tokens(x) for x in content) + 4


def prompt_tokens(body: dict[str, Any]) -> int:
    """What the API would report for this request's prompt.

    cl100k counts of what the model reads (system text, tool schemas as JSON,
    message contents; ids, signatures and cache markers are not read), plus a
    few tokens of framing per block, times CLAUDE_FACTOR. Images cost
    width * height / 750 tokens, Anthropic's rule.
    """
    raw = sum(raw_tokens(x["text"]) + 3 for x in body.get("system", []))
    if body.get("tools"):
        raw += raw_tokens(body["tools"]) + TOOLS_PREAMBLE
    raw += sum(_message_tokens(m) for m in body["messages"])
    return round(raw * CLAUDE_FACTOR)


def output_tokens(content: list[dict[str, Any]]) -> int:
    raw = 0
    for block in content:
        if block["type"] == "text":
            raw += raw_tokens(block["text"])
        elif block["type"] == "thinking":
            raw += raw_tokens(block["thinking"])
        elif block["type"] == "tool_use":
            raw += raw_tokens(block["input"]) + 12
    return max(1, round(raw * CLAUDE_FACTOR) + 4)
