"""A fake upstream that enforces the APIs' ordering rules, for the rewriting tests.

Written apart from ``ctxviewer.proxy.rewrite_shapes`` on purpose: the rules
here are the APIs' documented ones, checked independently, and a violation
gets the 400 the real API gives. It answers Anthropic Messages, OpenAI Chat
Completions and OpenAI Responses, streamed or not, calls the first offered
tool after each user prompt and answers a tool result in text, and counts
``input_tokens`` as len(body) // 4, so a smaller body means a smaller prompt.
"""

from __future__ import annotations

import itertools
from typing import Any

import orjson
from aiohttp import web
from proxy_fakes import ServerThread, anthropic_events, encode_event, stream_chat

# --- the rules ----------------------------------------------------------------------------


def anthropic_violations(body: dict[str, Any]) -> list[str]:
    out: list[str] = []
    system = body.get("system")
    if system is not None and not isinstance(system, (str, list)):
        out.append("system: must be a string or a list of text blocks")
    msgs = body.get("messages") or []
    if not msgs:
        return ["messages: at least one message is required"]
    prev_calls: list[str] = []
    prev_role = None
    for i, m in enumerate(msgs):
        r = m.get("role")
        # a system message may stand anywhere after the first message and applies from
        # there on (Claude Code 2.1 sends its environment so); user and assistant
        # messages alternate around it
        if r == "system" and i:
            continue
        if r not in ("user", "assistant"):
            out.append(f"messages.{i}.role: unexpected role {r!r} (system goes in 'system')")
        if i == 0 and r != "user":
            out.append("messages.0: the first message must use the user role")
        if prev_role is not None and r == prev_role:
            out.append(f"messages.{i}: roles must alternate between user and assistant")
        prev_role = r
        content = m.get("content")
        blocks = content if isinstance(content, list) else []
        results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        kinds = [b.get("type") for b in blocks]
        if results and kinds[: len(results)] != ["tool_result"] * len(results):
            out.append(f"messages.{i}: tool_result blocks must come first")
        for rid in results:
            if rid not in prev_calls:
                out.append(
                    f"messages.{i}: unexpected tool_use_id {rid} in tool_result blocks: "
                    "each tool_result must have a tool_use in the previous message"
                )
        missing = [c for c in prev_calls if c not in results]
        if missing:
            out.append(
                f"messages.{i}: tool_use ids were found without tool_result blocks "
                f"immediately after: {', '.join(missing)}"
            )
        prev_calls = (
            [b.get("id") for b in blocks if b.get("type") == "tool_use"] if r == "assistant" else []
        )
    if prev_role != "user":
        out.append("the last message must be a user message")
    return out


def chat_violations(body: dict[str, Any]) -> list[str]:
    out: list[str] = []
    msgs = body.get("messages") or []
    seen_other = False
    pending: list[str] = []
    for i, m in enumerate(msgs):
        r = m.get("role")
        if r in ("system", "developer"):
            if seen_other:
                out.append(f"messages[{i}]: system messages must come first")
            continue
        seen_other = True
        if r == "tool":
            if m.get("tool_call_id") not in pending:
                out.append(
                    f"messages[{i}]: messages with role 'tool' must be a response to a "
                    "preceding message with 'tool_calls'"
                )
            else:
                pending.remove(m.get("tool_call_id"))
            continue
        if pending:
            out.append(
                f"messages[{i}]: an assistant message with 'tool_calls' must be followed "
                f"by tool messages responding to each tool_call_id ({', '.join(pending)})"
            )
        pending = [c["id"] for c in m.get("tool_calls") or []] if r == "assistant" else []
    if pending:
        out.append("the last tool calls have no answers")
    return out


def responses_violations(body: dict[str, Any]) -> list[str]:
    out: list[str] = []
    items = body.get("input")
    if isinstance(items, str):
        return out
    called: set[str] = set()
    answered: set[str] = set()
    seen_other = False
    for i, item in enumerate(items or []):
        kind = item.get("type", "message")
        # Codex 0.171 sends its tool schemas as a leading developer item of its own type
        if kind == "additional_tools" or (
            kind == "message" and item.get("role") in ("system", "developer")
        ):
            if seen_other:
                out.append(f"input[{i}]: system messages must come first")
            continue
        seen_other = True
        if kind == "function_call":
            called.add(item["call_id"])
        elif kind == "function_call_output":
            if item.get("call_id") not in called:
                out.append(
                    f"input[{i}]: No tool call found for function call output with "
                    f"call_id {item.get('call_id')}"
                )
            answered.add(item.get("call_id"))
    for c in sorted(called - answered):
        out.append(f"No tool output found for function call {c}")
    return out


def ends_with_tool_result(api: str, body: dict[str, Any]) -> bool:
    """True when the last history item answers a tool call (the fake then answers in text)."""
    if api == "anthropic":
        content = body["messages"][-1].get("content")
        return isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)
    if api == "chat":
        return body["messages"][-1].get("role") == "tool"
    items = body.get("input")
    return not isinstance(items, str) and items[-1].get("type") == "function_call_output"


# --- the server ---------------------------------------------------------------------------


class StrictUpstream:
    """``received``: (api, body bytes, status) of every call; ``reject``: substrings that
    make a body rejected with 400 (to test the proxy's fallback)."""

    def __init__(self) -> None:
        self.received: list[tuple[str, bytes, int]] = []
        self.reject: list[bytes] = []
        self._ids = itertools.count(1)
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/messages", self.anthropic)
        app.router.add_post("/v1/chat/completions", self.chat)
        app.router.add_post("/v1/responses", self.responses)
        self.server = ServerThread(app)

    @property
    def url(self) -> str:
        return self.server.url

    def bodies(self, api: str, status: int = 200) -> list[dict[str, Any]]:
        return [orjson.loads(raw) for a, raw, s in self.received if a == api and s == status]

    async def _check(
        self, request: web.Request, api: str, rules: Any, error: Any
    ) -> tuple[dict[str, Any] | None, web.Response | None]:
        raw = await request.read()
        body = orjson.loads(raw)
        problems = rules(body)
        if any(r in raw for r in self.reject):
            problems.append("rejected by the test")
        status = 400 if problems else 200
        self.received.append((api, raw, status))
        if problems:
            return None, error("; ".join(problems))
        body["_tokens"] = len(raw) // 4
        return body, None

    async def anthropic(self, request: web.Request) -> web.StreamResponse:
        body, err = await self._check(request, "anthropic", anthropic_violations, _a_error)
        if err is not None:
            return err
        assert body is not None
        n = next(self._ids)
        content: list[dict[str, Any]] = [{"type": "text", "text": f"Step {n}: working on it."}]
        if body.get("tools") and not ends_with_tool_result("anthropic", body):
            content.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{n:04d}",
                    "name": body["tools"][0]["name"],
                    "input": {"path": f"/tmp/f{n}"},
                }
            )
        message = {
            "id": f"msg_{n:06d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": content,
            "stop_reason": "tool_use" if len(content) > 1 else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": body["_tokens"],
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": 9,
            },
        }
        if not body.get("stream"):
            return web.json_response(message)
        resp = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await resp.prepare(request)
        for event, data in anthropic_events(message):
            await resp.write(encode_event(event, data))
        await resp.write_eof()
        return resp

    async def chat(self, request: web.Request) -> web.StreamResponse:
        body, err = await self._check(request, "chat", chat_violations, _o_error)
        if err is not None:
            return err
        assert body is not None
        n = next(self._ids)
        message: dict[str, Any] = {"role": "assistant", "content": f"Step {n}."}
        if body.get("tools") and not ends_with_tool_result("chat", body):
            name = body["tools"][0]["function"]["name"]
            message["tool_calls"] = [
                {
                    "id": f"call_{n}_{k}",
                    "type": "function",
                    "function": {"name": name, "arguments": orjson.dumps({"k": k}).decode()},
                }
                for k in range(2)
            ]  # two parallel calls
        usage = {
            "prompt_tokens": body["_tokens"],
            "completion_tokens": 5,
            "total_tokens": body["_tokens"] + 5,
        }
        completion = {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": 1700000000,
            "model": body.get("model"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if "tool_calls" in message else "stop",
                }
            ],
            "usage": usage,
        }
        if not body.get("stream") or "tool_calls" in message:
            return web.json_response(completion)
        return await stream_chat(request, completion)

    async def responses(self, request: web.Request) -> web.StreamResponse:
        body, err = await self._check(request, "responses", responses_violations, _o_error)
        if err is not None:
            return err
        assert body is not None
        n = next(self._ids)
        output: list[dict[str, Any]] = []
        if body.get("tools") and not ends_with_tool_result("responses", body):
            output.append(
                {
                    "type": "function_call",
                    "id": f"fc_{n}",
                    "call_id": f"call_{n}",
                    "name": body["tools"][0]["name"],
                    "arguments": "{}",
                    "status": "completed",
                }
            )
        else:
            output.append(
                {
                    "type": "message",
                    "id": f"m_{n}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": f"Step {n}.", "annotations": []}],
                }
            )
        return web.json_response(
            {
                "id": f"resp_{n}",
                "object": "response",
                "created_at": 1700000000,
                "status": "completed",
                "model": body.get("model"),
                "output": output,
                "parallel_tool_calls": True,
                "tool_choice": "auto",
                "tools": [],
                "usage": {
                    "input_tokens": body["_tokens"],
                    "output_tokens": 5,
                    "total_tokens": body["_tokens"] + 5,
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens_details": {"reasoning_tokens": 0},
                },
            }
        )


def _a_error(message: str) -> web.Response:
    return web.json_response(
        {"type": "error", "error": {"type": "invalid_request_error", "message": message}},
        status=400,
    )


def _o_error(message: str) -> web.Response:
    return web.json_response(
        {
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": None,
                "code": None,
            }
        },
        status=400,
    )
