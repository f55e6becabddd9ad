"""A fake Gemini API (generativelanguage) on 127.0.0.1, shaped like Google's answers:
``models/<model>:generateContent`` (JSON), ``:streamGenerateContent?alt=sse`` (one
``GenerateContentResponse`` chunk per event: a thought, the text in pieces, the usage on
the last), ``:countTokens``. It keeps what reached it, to compare with the recording."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web
from proxy_fakes import ServerThread

PROMPT_PER_CHAR = 4  # the fake counts a prompt as its body's length / 4
THOUGHTS = 5
CANDIDATES = 7


class FakeGemini:
    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post(r"/{version}/models/{call}", self.call)
        self.server = ServerThread(app)

    def start(self) -> FakeGemini:
        self.server.start()
        return self

    def stop(self) -> None:
        self.server.stop()

    @property
    def url(self) -> str:
        return self.server.url

    async def call(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        body = json.loads(raw)
        model, _, method = request.match_info["call"].partition(":")
        self.received.append(
            {
                "method": method,
                "model": model,
                "query": dict(request.query),
                "key": request.headers.get("x-goog-api-key") or request.query.get("key"),
                "body": body,
            }
        )
        prompt = len(raw) // PROMPT_PER_CHAR
        if method == "countTokens":
            return web.json_response({"totalTokens": prompt})
        usage = {
            "promptTokenCount": prompt,
            "candidatesTokenCount": CANDIDATES,
            "thoughtsTokenCount": THOUGHTS,
            "totalTokenCount": prompt + CANDIDATES + THOUGHTS,
        }
        chunks = [
            {
                "candidates": [
                    {
                        "content": {
                            "role": "model",
                            "parts": [{"text": "weighing it", "thought": True}],
                        },
                        "index": 0,
                    }
                ]
            },
            {
                "candidates": [
                    {"content": {"role": "model", "parts": [{"text": "Fake "}]}, "index": 0}
                ]
            },
            {
                "candidates": [
                    {
                        "content": {"role": "model", "parts": [{"text": "answer."}]},
                        "finishReason": "STOP",
                        "index": 0,
                    }
                ],
                "usageMetadata": usage,
                "modelVersion": model,
                "responseId": f"r{len(self.received)}",
            },
        ]
        if method == "streamGenerateContent":
            resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await resp.prepare(request)
            for chunk in chunks:
                await resp.write(f"data: {json.dumps(chunk)}\r\n\r\n".encode())
            await resp.write_eof()
            return resp
        whole = {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [
                            {"text": "weighing it", "thought": True},
                            {"text": "Fake answer."},
                        ],
                    },
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": usage,
            "modelVersion": model,
            "responseId": f"r{len(self.received)}",
        }
        return web.json_response(whole)
