"""Generate a machine's worth of agent sessions for the library benchmark.

    python tools/make_library_tree.py [OUT] [--sessions 2000] [--gb 2.0] [--seed 1]

Writes, under OUT (default /tmp/ctxviewer-library-tree; it must not be inside the
repository), a home folder laid out the way each agent lays it out, and a folder
of proxy recordings:

- ``home/.claude/projects/<project>/<id>.jsonl``, some with sub-agent files in
  ``<id>/subagents/agent-*.jsonl`` (Claude Code transcripts);
- ``home/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`` (Codex rollouts);
- ``home/.gemini/tmp/<hash>/chats/session-*.json`` and ``.jsonl`` (Gemini CLI);
- ``home/.qwen/projects/<project>/chats/<id>.jsonl`` (qwen-code);
- ``recordings/ctxviewer-recording-*.jsonl``: the bundled demo session (a ctxviewer
  proxy recording), plain and compressed.

Sessions are synthetic (made-up words, code and command output) in each agent's
record shapes, with usage that grows with the history. Sizes follow a long-tailed
distribution whose sum is about ``--gb``; modification times spread over the last
year (the newest few in the last days), as on a heavy user's machine. Each session's
first prompt names a ticket ``TICKET-<n>`` (a word found in exactly one session) for
the search benchmark. Needs no corpus. Deterministic for a seed (but for the mtimes,
relative to now).
"""

from __future__ import annotations

import argparse
import hashlib
import lzma
import os
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ctxviewer.resources import demo_session_path  # noqa: E402

DEFAULT_OUT = Path("/tmp/ctxviewer-library-tree")
CHARS_PER_TOKEN = 3.9
MIX = (
    ("claude", 100),
    ("codex", 40),
    ("gemini", 16),
    ("gemini_jsonl", 12),
    ("qwen", 29),
    ("recording", 3),
)
VOCAB = (
    "context window token prompt cache request session agent tool result file read "
    "write edit search index query module function class value return import export "
    "const let async await error warning test build deploy config server client route "
    "handler parser reader writer buffer stream event signal thread worker process queue "
    "timer layout widget table column row filter sort group project folder path branch "
    "commit merge rebase patch diff review summary budget cost price model window limit "
    "threshold compaction history message block system memory skill plugin schema "
    "migration database record field column"
).split()
CODE = [
    "import {{ {a} }} from './{b}';",
    "export function {a}({b}: string): number {{",
    "  const {a} = await {b}.fetch(url);",
    "  if (!{a}) return null;",
    "}}",
    "def {a}(self, {b}):",
    "    return self.{a}[{b}]",
    "class {A}({B}):",
    "  for (const {a} of {b}) {{",
    "    {a}.push({b});",
]
OUTPUT = [
    "PASS src/{a}.test.ts ({n} ms)",
    "FAIL src/{b}.spec.ts",
    "  ✓ {a} works ({n} ms)",
    "warning: unused variable `{a}`",
    "  at {A}.{b} (src/{a}.ts:{n}:12)",
    "added {n} packages",
]


# Where each agent compacts (prompt tokens), so no session outgrows its window: Claude
# Code at its 200k window less the 33k autocompact buffer, qwen-code at 70% of
# qwen3-coder-plus's 131,072; the others (a 272k and a 1M window) below their windows.
COMPACT_AT = {"claude": 167_000, "qwen": 91_750, "other": 180_000}


class Text:
    """Made-up words, code and output, fast: slices of pre-built pools."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.code = self._pool(CODE, 1 << 20)
        self.out = self._pool(OUTPUT, 1 << 19)
        self.prose = " ".join(rng.choice(VOCAB) for _ in range(200_000))

    def _pool(self, patterns: list[str], size: int) -> str:
        lines, total = [], 0
        while total < size:
            a, b = self.rng.choice(VOCAB), self.rng.choice(VOCAB)
            line = self.rng.choice(patterns).format(
                a=a, b=b, A=a.title(), B=b.title(), n=self.rng.randint(1, 999)
            )
            lines.append(line)
            total += len(line) + 1
        return "\n".join(lines)

    def _slice(self, pool: str, n: int) -> str:
        n = min(n, len(pool) - 1)
        i = self.rng.randrange(0, len(pool) - n)
        return pool[i : i + n]

    def sentence(self, words: int = 12) -> str:
        return self._slice(self.prose, words * 7).strip().capitalize() + "."

    def result(self) -> tuple[str, str, dict[str, Any], str]:
        """(tool name, kind of output, input, output) of one tool call."""
        size = max(60, int(self.rng.lognormvariate(0, 1.1) * 1_800))
        path = f"src/{self.rng.choice(VOCAB)}/{self.rng.choice(VOCAB)}.ts"
        if self.rng.random() < 0.55:
            return "read_file", "Read", {"file_path": path}, self._slice(self.code, size)
        return (
            "shell",
            "Bash",
            {"command": f"npm test -- {self.rng.choice(VOCAB)}"},
            self._slice(self.out, size),
        )


def _ts(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"


def _id(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-8{h[17:20]}-{h[20:32]}"


class Session:
    """One synthetic conversation: turns of (prompt, tool calls, reply) with usage."""

    def __init__(
        self, text: Text, rng: random.Random, n: int, target: int, start: float, project: str
    ) -> None:
        self.text, self.rng, self.n = text, rng, n
        self.target, self.t, self.project = target, start, project
        self.tokens = rng.randint(9_000, 16_000)  # system prompt and tools
        self.compact_at = COMPACT_AT["other"]  # the prompt size its agent compacts past
        self.uuid = _id(rng)

    def turns(self) -> Iterator[tuple[str, list[tuple[str, str, dict[str, Any], str]], str]]:
        written = 0
        k = 0
        while written < self.target:
            prompt = self.text.sentence(self.rng.randint(5, 40))
            if k == 0:
                prompt = f"TICKET-{self.n}: {prompt}"
            calls = [self.text.result() for _ in range(self.rng.choice((0, 1, 1, 2, 3)))]
            reply = self.text.sentence(self.rng.randint(8, 60))
            written += len(prompt) + len(reply) + sum(2 * len(c[3]) + 200 for c in calls) + 600
            k += 1
            yield prompt, calls, reply

    def step(self, chars: int) -> dict[str, int]:
        """The usage of the next call, after ``chars`` more characters of history."""
        self.t += self.rng.uniform(3, 90)
        self.tokens += int(chars / CHARS_PER_TOKEN)
        if self.tokens > self.compact_at:  # the agent compacted: a summary, the recent turns
            self.tokens = self.rng.randint(20_000, 40_000)
        cached = int(self.tokens * self.rng.uniform(0.7, 0.98))
        return {"prompt": self.tokens, "cached": cached, "output": self.rng.randint(20, 900)}


def claude(s: Session, sidechain: str | None = None) -> Iterator[dict[str, Any]]:
    parent = None
    common = {
        "isSidechain": sidechain is not None,
        "userType": "external",
        "cwd": s.project,
        "sessionId": s.uuid,
        "version": "2.1.39",
        "gitBranch": "main",
    }
    if sidechain:
        common["agentId"] = sidechain

    def rec(kind: str, message: dict[str, Any], **extra: Any) -> dict[str, Any]:
        nonlocal parent
        uid = _id(s.rng)
        out = {
            "parentUuid": parent,
            **common,
            "type": kind,
            "message": message,
            "uuid": uid,
            "timestamp": _ts(s.t),
            **extra,
        }
        parent = uid
        return out

    for prompt, calls, reply in s.turns():
        yield rec("user", {"role": "user", "content": prompt})
        history = len(prompt)
        for call in [*calls, None]:
            u = s.step(history)
            name, tool, inp, output = call if call is not None else (None, "", {}, "")
            usage = {
                "input_tokens": 4,
                "cache_creation_input_tokens": u["prompt"] - u["cached"] - 4,
                "cache_read_input_tokens": u["cached"],
                "output_tokens": u["output"],
            }
            content: list[dict[str, Any]] = [{"type": "text", "text": reply}]
            if name is not None:
                tid = f"toolu_{s.rng.getrandbits(80):020x}"
                content = [{"type": "tool_use", "id": tid, "name": tool, "input": inp}]
            msg = {
                "id": f"msg_{s.rng.getrandbits(96):024x}",
                "type": "message",
                "role": "assistant",
                "model": "claude-opus-4-6",
                "content": content,
                "stop_reason": "tool_use" if name else "end_turn",
                "usage": usage,
            }
            yield rec("assistant", msg, requestId=f"req_{s.rng.getrandbits(96):024x}")
            if name is None:
                break
            yield rec(
                "user",
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": tid, "content": output}],
                },
                toolUseResult={"stdout": output, "stderr": "", "interrupted": False},
            )
            history = len(output) + 200


def codex(s: Session) -> Iterator[dict[str, Any]]:
    def rec(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": _ts(s.t), "type": kind, "payload": payload}

    yield rec(
        "session_meta",
        {
            "id": s.uuid,
            "timestamp": _ts(s.t),
            "cwd": s.project,
            "originator": "codex_cli_rs",
            "cli_version": "0.66.0",
            "instructions": None,
            "source": "cli",
            "model_provider": "openai",
        },
    )
    total = 0
    for prompt, calls, reply in s.turns():
        yield rec(
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": prompt}],
            },
        )
        yield rec("event_msg", {"type": "user_message", "message": prompt, "images": []})
        yield rec(
            "turn_context",
            {"cwd": s.project, "model": "gpt-5.1-codex-max", "effort": "high", "summary": "auto"},
        )
        history = len(prompt)
        for call in [*calls, None]:
            u = s.step(history)
            total += u["prompt"] + u["output"]
            last = {
                "input_tokens": u["prompt"],
                "cached_input_tokens": u["cached"],
                "output_tokens": u["output"],
                "reasoning_output_tokens": 0,
                "total_tokens": u["prompt"] + u["output"],
            }
            yield rec(
                "event_msg",
                {
                    "type": "token_count",
                    "info": {
                        "total_token_usage": {**last, "total_tokens": total},
                        "last_token_usage": last,
                        "model_context_window": 272_000,
                    },
                    "rate_limits": None,
                },
            )
            if call is None:
                yield rec(
                    "response_item",
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": reply}],
                    },
                )
                break
            name, _, inp, output = call
            cid = f"call_{s.rng.getrandbits(64):016x}"
            yield rec(
                "response_item",
                {
                    "type": "function_call",
                    "name": "shell",
                    "arguments": orjson.dumps({"command": ["bash", "-lc", str(inp)]}).decode(),
                    "call_id": cid,
                },
            )
            yield rec(
                "response_item",
                {
                    "type": "function_call_output",
                    "call_id": cid,
                    "output": orjson.dumps(
                        {"output": output, "metadata": {"exit_code": 0}}
                    ).decode(),
                },
            )
            history = len(output) + 200


def gemini_messages(s: Session) -> Iterator[dict[str, Any]]:
    for k, (prompt, calls, reply) in enumerate(s.turns()):
        yield {"id": f"u{k}", "timestamp": _ts(s.t), "type": "user", "content": prompt}
        u = s.step(len(prompt) + sum(len(c[3]) for c in calls))
        yield {
            "id": f"g{k}",
            "timestamp": _ts(s.t),
            "type": "gemini",
            "content": reply,
            "thoughts": [],
            "tokens": {
                "input": u["prompt"],
                "output": u["output"],
                "cached": u["cached"],
                "thoughts": 0,
                "tool": 0,
                "total": u["prompt"] + u["output"],
            },
            "model": "gemini-2.5-pro",
            "toolCalls": [
                {
                    "id": f"{name}-{k}-{i}",
                    "name": name,
                    "args": inp,
                    "result": [
                        {
                            "functionResponse": {
                                "id": f"{name}-{k}-{i}",
                                "name": name,
                                "response": {"output": out},
                            }
                        }
                    ],
                    "status": "success",
                    "timestamp": _ts(s.t),
                }
                for i, (name, _, inp, out) in enumerate(calls)
            ],
        }


def qwen(s: Session) -> Iterator[dict[str, Any]]:
    parent = None
    common = {"sessionId": s.uuid, "cwd": s.project, "version": "0.2.3", "gitBranch": "main"}

    def rec(kind: str, **extra: Any) -> dict[str, Any]:
        nonlocal parent
        uid = _id(s.rng)
        out = {
            "uuid": uid,
            "parentUuid": parent,
            **common,
            "timestamp": _ts(s.t),
            "type": kind,
            **extra,
        }
        parent = uid
        return out

    for prompt, calls, reply in s.turns():
        yield rec("user", message={"role": "user", "parts": [{"text": prompt}]})
        history = len(prompt)
        for call in [*calls, None]:
            u = s.step(history)
            meta = {
                "promptTokenCount": u["prompt"],
                "candidatesTokenCount": u["output"],
                "totalTokenCount": u["prompt"] + u["output"],
                "cachedContentTokenCount": u["cached"],
            }
            parts: list[dict[str, Any]] = [{"text": reply}]
            if call is not None:
                cid = f"call_{s.rng.getrandbits(64):016x}"
                parts = [{"functionCall": {"id": cid, "name": call[0], "args": call[2]}}]
            yield rec(
                "assistant",
                model="qwen3-coder-plus",
                contextWindowSize=131072,
                message={"role": "model", "parts": parts},
                usageMetadata=meta,
            )
            if call is None:
                break
            yield rec(
                "tool_result",
                message={
                    "role": "user",
                    "parts": [
                        {
                            "functionResponse": {
                                "id": cid,
                                "name": call[0],
                                "response": {"output": call[3]},
                            }
                        }
                    ],
                },
                toolCallResult={"callId": cid, "status": "success"},
            )
            history = len(call[3]) + 200


_DEMO: list[bytes] = []


def _demo() -> bytes:
    if not _DEMO:
        _DEMO.append(lzma.decompress(demo_session_path().read_bytes()))
    return _DEMO[0]


def _lines(records: Iterator[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


def write_session(out: Path, kind: str, s: Session, rng: random.Random) -> list[Path]:
    """Write one session of ``kind``; returns the files written."""
    home = out / "home"
    slug = s.project.replace("/", "-")
    s.compact_at = COMPACT_AT.get(kind, COMPACT_AT["other"])
    day = time.gmtime(s.t)
    if kind == "claude":
        folder = home / ".claude" / "projects" / slug
        main = folder / f"{s.uuid}.jsonl"
        files = [(main, _lines(claude(s)))]
        if rng.random() < 0.2:  # sub-agent runs beside the session
            for _ in range(rng.randint(1, 3)):
                agent = f"a{rng.getrandbits(28):07x}"
                sub = Session(s.text, rng, s.n, s.target // 5, s.t, s.project)
                sub.compact_at = s.compact_at
                sub.uuid = s.uuid
                files.append(
                    (
                        folder / s.uuid / "subagents" / f"agent-{agent}.jsonl",
                        _lines(claude(sub, sidechain=agent)),
                    )
                )
    elif kind == "codex":
        name = f"rollout-{time.strftime('%Y-%m-%dT%H-%M-%S', day)}-{s.uuid}.jsonl"
        files = [
            (home / ".codex" / "sessions" / time.strftime("%Y/%m/%d", day) / name, _lines(codex(s)))
        ]
    elif kind in ("gemini", "gemini_jsonl"):
        folder = home / ".gemini" / "tmp" / hashlib.sha256(s.project.encode()).hexdigest() / "chats"
        head = {
            "sessionId": s.uuid,
            "projectHash": folder.parent.name,
            "startTime": _ts(s.t),
            "lastUpdated": _ts(s.t),
        }
        stem = f"session-{time.strftime('%Y-%m-%dT%H-%M', day)}-{s.uuid[:8]}"
        if kind == "gemini":
            doc = {**head, "messages": list(gemini_messages(s))}
            files = [(folder / f"{stem}.json", orjson.dumps(doc, option=orjson.OPT_INDENT_2))]
        else:
            msgs = list(gemini_messages(s))
            files = [(folder / f"{stem}.jsonl", _lines(iter([{**head, "kind": "main"}, *msgs])))]
    elif kind == "qwen":
        folder = home / ".qwen" / "projects" / s.project.replace("/", "-").replace(".", "-")
        files = [(folder / "chats" / f"{s.uuid}.jsonl", _lines(qwen(s)))]
    else:
        name = f"ctxviewer-recording-{time.strftime('%Y%m%d-%H%M%S', day)}-{s.n}.jsonl"
        if rng.random() < 0.3:
            files = [(out / "recordings" / f"{name}.xz", demo_session_path().read_bytes())]
        else:
            files = [(out / "recordings" / name, _demo())]
    for path, data in files:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        os.utime(path, (s.t, s.t))
    return [p for p, _ in files]


def generate(out: Path, sessions: int, gb: float, seed: int) -> tuple[int, int]:
    """Write the tree; returns (files, bytes)."""
    if ROOT in out.resolve().parents or out.resolve() == ROOT:
        raise SystemExit(f"{out} is inside the repository: write the tree elsewhere (/tmp)")
    rng = random.Random(seed)
    text = Text(rng)
    kinds = [k for k, w in MIX for _ in range(w)]
    weights = [rng.lognormvariate(0, 1.2) for _ in range(sessions)]
    scale = gb * 1e9 / sum(weights)
    now = time.time()
    projects = [f"/home/dev/{rng.choice(VOCAB)}-{rng.choice(VOCAB)}" for _ in range(40)]
    files = size = 0
    for n in range(sessions):
        age = 86_400 * (rng.uniform(0, 5) if n % 20 == 0 else rng.uniform(5, 365))
        target = min(40_000_000, max(20_000, int(weights[n] * scale)))
        s = Session(text, rng, n, target, now - age, rng.choice(projects))
        for path in write_session(out, rng.choice(kinds), s, rng):
            files += 1
            size += path.stat().st_size
        if n % 100 == 99:
            print(f"  {n + 1} sessions, {size / 1e9:.2f} GB", file=sys.stderr)
    return files, size


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", nargs="?", type=Path, default=DEFAULT_OUT, help="where to write")
    p.add_argument("--sessions", type=int, default=2000, help="sessions to write")
    p.add_argument("--gb", type=float, default=2.0, help="about how many GB in all")
    p.add_argument("--seed", type=int, default=1, help="random seed")
    args = p.parse_args()
    t0 = time.perf_counter()
    files, size = generate(args.out, args.sessions, args.gb, args.seed)
    print(
        f"wrote {files} files, {size / 1e9:.2f} GB under {args.out} "
        f"in {time.perf_counter() - t0:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
