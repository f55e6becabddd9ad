"""Generate a large, realistic claude-trace log for load benchmarks.

    python tools/make_big_trace.py OUT [--requests N] [--peak-tokens 160000] [--seed 1]

The shape comes from a real trace (``../shared/corpus/claude-trace/
badlogic__lemmy__apps_claude-trace_test_test-traffic.jsonl``): its Claude Code
request supplies the system prompt, the 17 tool declarations, the headers and
the first user message; its quota-check and topic-detection calls are
interleaved as side calls. The conversation then grows with synthetic turns
(assistant text + tool calls, tool results of varied sizes: file reads, shell
output, listings, search hits), and every request repeats the whole history,
as real traces do, with the moving ``cache_control`` marker on the last
block. Responses are SSE streams (``body_raw``) or JSON bodies, both carrying
usage that grows to about ``--peak-tokens``. Deterministic for a given seed.
The default (600 requests, 160k peak) writes about 200 MB. Without the corpus a
built-in template of the same shape (made-up text) is used.
"""

from __future__ import annotations

import argparse
import copy
import random
import sys
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = (
    ROOT.parent
    / "shared"
    / "corpus"
    / "claude-trace"
    / "badlogic__lemmy__apps_claude-trace_test_test-traffic.jsonl"
)
CHARS_PER_TOKEN = 3.9  # what the usage numbers assume for the synthetic text

_CODE_LINES = [
    "import {{ {a} }} from './{b}';",
    "export function {a}({b}: string): number {{",
    "  const {a} = await {b}.fetch(url, {{ method: 'GET' }});",
    "  if (!{a}) return null;",
    "  for (const {a} of {b}) {{",
    "    {a}.push({b}.map((x) => x.{a}));",
    "  }}",
    "  return {a}.filter(Boolean).length;",
    "}}",
    "",
    "// {a} handles the {b} case",
    "def {a}(self, {b}):",
    '    """Return the {a} for {b}."""',
    "    return self.{a}[{b}]",
    "class {A}({B}):",
    "    {a}: int = 0",
    '<div class="{a}">{b}</div>',
    "  .{a} {{ display: flex; gap: 8px; }}",
]
_OUTPUT_LINES = [
    "PASS src/{a}.test.ts ({n} ms)",
    "FAIL src/{b}.spec.ts",
    "  ✓ {a} works with {b} ({n} ms)",
    "npm WARN deprecated {a}@{n}.0.0",
    "Compiling {a} v0.{n}.0",
    "{a}: line {n}: {b} not found",
    "  at {A}.{b} (src/{a}.ts:{n}:12)",
    "added {n} packages in 2s",
    "warning: unused variable `{a}`",
]


def _words(text: str) -> list[str]:
    words = [w.strip(".,:;()[]{}\"'`*#<>") for w in text.split()]
    return [w for w in words if w.isalpha() and 2 < len(w) < 14] or ["context", "window"]


class Conversation:
    """Synthetic turns built from a vocabulary; counts the characters it adds."""

    def __init__(self, rng: random.Random, vocab: list[str], chars_per_turn: int) -> None:
        self.rng = rng
        self.vocab = vocab
        self.chars_per_turn = chars_per_turn
        self.tool_no = 0

    def word(self) -> str:
        return self.rng.choice(self.vocab)

    def sentence(self, n: int) -> str:
        words = [self.word() for _ in range(n)]
        return " ".join(words).capitalize() + "."

    def _fill(self, patterns: list[str], size: int, numbered: bool) -> str:
        lines: list[str] = []
        total = 0
        while total < size:
            w1, w2 = self.word(), self.word()
            line = self.rng.choice(patterns).format(
                a=w1, b=w2, A=w1.capitalize(), B=w2.capitalize(), n=self.rng.randint(1, 999)
            )
            if numbered:
                line = f"{len(lines) + 1:>6}\t{line}"
            lines.append(line)
            total += len(line) + 1
        return "\n".join(lines)

    def result_size(self) -> int:
        # Mostly small results, a long tail of big file reads (lognormal around the mean).
        mean = self.chars_per_turn * 0.52
        return max(40, int(self.rng.lognormvariate(0, 1.0) * mean / 1.65))

    def tool_turn(self) -> tuple[dict[str, Any], dict[str, Any], str]:
        """(assistant tool_use block, tool_result content, assistant text)."""
        self.tool_no += 1
        tid = f"toolu_{self.rng.getrandbits(96):024x}"
        size = self.result_size()
        path = f"/home/dev/project/src/{self.word()}/{self.word()}.ts"
        kind = self.rng.choices(
            ["Read", "Bash", "Grep", "LS", "Edit", "TodoWrite"], weights=[35, 25, 12, 8, 15, 5]
        )[0]
        if kind == "Read":
            inp: dict[str, Any] = {"file_path": path}
            result = self._fill(_CODE_LINES, size, numbered=True)
        elif kind == "Bash":
            inp = {"command": f"npm test -- {self.word()}", "description": self.sentence(4)}
            result = self._fill(_OUTPUT_LINES, size, numbered=False)
        elif kind == "Grep":
            inp = {"pattern": self.word(), "path": "/home/dev/project", "include": "*.ts"}
            result = "\n".join(
                f"/home/dev/project/src/{self.word()}/{self.word()}.ts"
                for _ in range(max(1, size // 45))
            )
        elif kind == "LS":
            inp = {"path": path.rsplit("/", 1)[0]}
            result = "\n".join(f"  - {self.word()}.ts" for _ in range(max(1, size // 14)))
        elif kind == "Edit":
            old = self._fill(_CODE_LINES, min(size, 600), numbered=False)
            inp = {"file_path": path, "old_string": old, "new_string": old.replace("const", "let")}
            result = (
                f"The file {path} has been updated. Here's the result of running "
                f"`cat -n` on a snippet of the edited file:\n"
                + self._fill(_CODE_LINES, min(size, 1200), numbered=True)
            )
        else:
            inp = {
                "todos": [
                    {
                        "content": self.sentence(5),
                        "status": self.rng.choice(["pending", "in_progress", "completed"]),
                        "priority": "high",
                        "id": str(i),
                    }
                    for i in range(1, self.rng.randint(2, 6))
                ]
            }
            result = (
                "Todos have been modified successfully. Ensure that you continue to use "
                "the todo list to track your progress. Please proceed with the current "
                "tasks if applicable"
            )
        block = {"type": "tool_use", "id": tid, "name": kind, "input": inp}
        text = self.sentence(self.rng.randint(6, 30)) if self.rng.random() < 0.6 else ""
        return block, {"type": "tool_result", "tool_use_id": tid, "content": result}, text


def _sse(
    message_id: str,
    model: str,
    content: list[dict[str, Any]],
    usage: dict[str, int],
    out_tokens: int,
) -> str:
    def ev(name: str, data: dict[str, Any]) -> str:
        return f"event: {name}\ndata: {orjson.dumps(data).decode()}\n\n"

    parts = [
        ev(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {**usage, "output_tokens": 1, "service_tier": "standard"},
                },
            },
        )
    ]
    for i, block in enumerate(content):
        if block["type"] == "text":
            parts.append(
                ev(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
            )
            text = block["text"]
            for at in range(0, len(text), 60):
                parts.append(
                    ev(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": i,
                            "delta": {"type": "text_delta", "text": text[at : at + 60]},
                        },
                    )
                )
        else:
            start = {k: v for k, v in block.items() if k != "input"}
            parts.append(
                ev(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": {**start, "input": {}},
                    },
                )
            )
            raw = orjson.dumps(block["input"]).decode()
            for at in range(0, len(raw), 40):
                parts.append(
                    ev(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": i,
                            "delta": {
                                "type": "input_json_delta",
                                "partial_json": raw[at : at + 40],
                            },
                        },
                    )
                )
        parts.append(ev("content_block_stop", {"type": "content_block_stop", "index": i}))
    parts.append(
        ev(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": "tool_use" if content[-1]["type"] == "tool_use" else "end_turn",
                    "stop_sequence": None,
                },
                "usage": {"output_tokens": out_tokens},
            },
        )
    )
    parts.append(ev("message_stop", {"type": "message_stop"}))
    return "".join(parts)


def _message_ids(response: dict[str, Any]) -> list[str]:
    body = response.get("body")
    if isinstance(body, dict) and isinstance(body.get("id"), str):
        return [body["id"]]
    raw = response.get("body_raw") or ""
    at = raw.find('"id":"msg_')
    return [raw[at + 6 : raw.index('"', at + 6)]] if at != -1 else []


def _with_cache_marker(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Claude Code marks the last block of the last message; earlier ones lose it."""
    last = messages[-1]
    content = last["content"]
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    marked = [*content[:-1], {**content[-1], "cache_control": {"type": "ephemeral"}}]
    return [*messages[:-1], {**last, "content": marked}]


def _builtin_template() -> list[dict[str, Any]]:
    """A main request, a quota check and a topic call of the same shape as the corpus
    trace's, with made-up text: the generator works in a clone without ``../shared``."""
    headers = {"content-type": "application/json", "anthropic-version": "2023-06-01"}
    system = [
        {"type": "text", "text": "You are a coding agent working in a repository."},
        {
            "type": "text",
            "text": " ".join(
                f"When asked to {verb} code, read the files first, keep changes small, "
                f"run the tests, and report what changed and why."
                for verb in ("review", "refactor", "explain", "debug", "document", "optimise") * 12
            ),
        },
    ]
    tools = [
        {
            "name": f"Tool{i}",
            "description": f"Tool number {i}: reads, writes or runs "
            "things in the workspace, and returns what it found. " * 6,
            "input_schema": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "a file or folder"},
                    "limit": {"type": "integer", "description": "how many lines"},
                },
                "required": ["path"],
            },
        }
        for i in range(17)
    ]
    first = {
        "role": "user",
        "content": [
            {"type": "text", "text": "Please look at the project and fix the failing tests."}
        ],
    }
    messages = [first] + [
        {
            "role": "assistant" if i % 2 else "user",
            "content": [{"type": "text", "text": f"step {i}"}],
        }
        for i in range(1, 8)
    ]

    def record(body: dict[str, Any], text: str, n: int) -> dict[str, Any]:
        reply = {
            "id": f"msg_template{n:012d}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 30, "output_tokens": 5},
        }
        return {
            "request": {
                "timestamp": 1748554800.0,
                "method": "POST",
                "url": "https://api.anthropic.com/v1/messages",
                "headers": headers,
                "body": body,
            },
            "response": {
                "timestamp": 1748554801.0,
                "status_code": 200,
                "headers": {"content-type": "application/json"},
                "body": reply,
            },
            "logged_at": "2025-05-29T21:40:00.000Z",
        }

    main = {
        "model": "claude-sonnet-4-20250514",
        "max_tokens": 32000,
        "system": system,
        "tools": tools,
        "messages": messages,
        "stream": True,
    }
    quota = {
        "model": "claude-3-5-haiku-20241022",
        "max_tokens": 1,
        "messages": [{"role": "user", "content": "quota"}],
    }
    topic = {
        "model": "claude-3-5-haiku-20241022",
        "max_tokens": 512,
        "system": [{"type": "text", "text": "Say whether this message starts a new topic."}],
        "messages": [{"role": "user", "content": "fix tests"}],
    }
    return [
        record(main, "I will look.", 1),
        record(quota, "ok", 2),
        record(topic, '{"isNewTopic": false}', 3),
    ]


def generate(out: str, requests: int = 600, peak_tokens: int = 160_000, seed: int = 1) -> None:
    if TEMPLATE.is_file():
        lines = [orjson.loads(raw) for raw in TEMPLATE.read_bytes().splitlines() if raw.strip()]
    else:  # a clone without ../shared beside it
        lines = _builtin_template()
    main = next(
        r
        for r in lines
        if r["request"]["body"].get("tools") and len(r["request"]["body"]["messages"]) >= 7
    )
    quota = next(r for r in lines if "system" not in r["request"]["body"])
    topic = next(
        r
        for r in lines
        if "system" in r["request"]["body"] and not r["request"]["body"].get("tools")
    )
    body = main["request"]["body"]
    model = body["model"]
    first = body["messages"][0]
    base_chars = len(orjson.dumps([body["system"], body["tools"], first]))
    vocab = _words(" ".join(b["text"] for b in body["system"]))
    rng = random.Random(seed)
    per_turn = max(200, int((peak_tokens * CHARS_PER_TOKEN - base_chars) / max(requests, 1)))
    conv = Conversation(rng, vocab, per_turn)
    history: list[dict[str, Any]] = [copy.deepcopy(first)]
    hist_chars = base_chars
    prev_prompt = 0
    ts = float(main["request"]["timestamp"])
    with open(out, "wb") as f:
        for n in range(requests):
            ts += rng.uniform(2, 40)
            if n and n % 9 == 0:  # side calls, as Claude Code makes them
                side = copy.deepcopy(quota if n % 18 == 0 else topic)
                side["request"]["timestamp"] = ts
                side["response"]["timestamp"] = ts + 1
                line = orjson.dumps(side)
                for old_id in _message_ids(side["response"]):  # each call its own id
                    line = line.replace(old_id.encode(), f"msg_side{n:019d}".encode())
                f.write(line + b"\n")
            prompt = int(hist_chars / CHARS_PER_TOKEN)
            record = copy.copy(main)
            record["request"] = {
                **main["request"],
                "timestamp": ts,
                "body": {**body, "messages": _with_cache_marker(history)},
            }
            tool_block, result, text = conv.tool_turn()
            content = ([{"type": "text", "text": text}] if text else []) + [tool_block]
            if n % 40 == 39:  # the model ends a task; the user asks for the next one
                content = [{"type": "text", "text": conv.sentence(rng.randint(20, 60))}]
            out_tokens = max(1, len(orjson.dumps(content)) // 4)
            fresh = rng.randint(3, 12)
            read = max(0, min(prev_prompt, prompt - fresh))
            usage = {
                "input_tokens": fresh,
                "cache_creation_input_tokens": max(0, prompt - fresh - read),
                "cache_read_input_tokens": read,
            }
            msg_id = f"msg_{rng.getrandbits(96):024x}"
            response: dict[str, Any] = {
                "timestamp": ts + 3,
                "status_code": 200,
                "headers": main["response"]["headers"],
            }
            if n % 5 == 4:
                response["body"] = {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": content,
                    "stop_reason": "end_turn",
                    "stop_sequence": None,
                    "usage": {**usage, "output_tokens": out_tokens},
                }
            else:
                response["body"] = None
                response["body_raw"] = _sse(msg_id, model, content, usage, out_tokens)
            record["response"] = response
            record["logged_at"] = main["logged_at"]
            f.write(orjson.dumps(record) + b"\n")
            prev_prompt = prompt
            history.append({"role": "assistant", "content": content})
            if content[-1]["type"] == "tool_use":
                history.append({"role": "user", "content": [result]})
            else:
                history.append({"role": "user", "content": conv.sentence(rng.randint(8, 40))})
            hist_chars += len(orjson.dumps(history[-2:]))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--requests", type=int, default=600)
    p.add_argument("--peak-tokens", type=int, default=160_000)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    generate(args.out, args.requests, args.peak_tokens, args.seed)
    size = Path(args.out).stat().st_size
    print(f"wrote {args.out}: {size / 1e6:.1f} MB, {args.requests} requests")
    return 0


if __name__ == "__main__":
    sys.exit(main())
