"""Property: whatever the upstream and the clients do, the recording stays whole.

A fault-injecting fake upstream (errors, resets, stalls, hangs, hang-ups
before the answer, slow drips, gzip, multi-megabyte streams) meets clients
that wait for their answer or hang up early, many at once. Afterwards every
line of the recording parses, there is one exchange line per call, and the
recording reads back as a session with nothing skipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
from pathlib import Path

import aiohttp
import orjson
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from proxy_fakes import API_KEY, FakeUpstream

from ctxviewer.cli import main
from ctxviewer.ingest.loader import load
from ctxviewer.proxy import ProxyThread

UPSTREAM_FAULTS = ["", "500", "429", "reset", "stall", "hang", "close", "gzip", "drip", "huge"]
PROXY_TIMEOUT = 1.0  # seconds of upstream silence: "stall" and "hang" end with a 504


@st.composite
def calls(draw: st.DrawFn) -> dict:
    return {
        "fault": draw(st.sampled_from(UPSTREAM_FAULTS)),
        "stream": draw(st.booleans()),
        "hang_up_after": draw(st.one_of(st.none(), st.floats(0.0, 0.3))),
        "size": draw(st.integers(100_000, 2_000_000)),
    }


async def _call(base: str, n: int, call: dict) -> bool:
    """Make one call; True when its whole answer came back."""
    body = {
        "model": "claude-test",
        "max_tokens": 16,
        "stream": call["stream"],
        "messages": [{"role": "user", "content": f"call {n}"}],
    }
    headers = {
        "x-api-key": API_KEY,
        "anthropic-version": "2023-06-01",
        "x-fake-mode": call["fault"],
        "x-fake-size": str(call["size"]),
    }
    timeout = aiohttp.ClientTimeout(total=20)

    async def talk() -> None:
        async with (
            aiohttp.ClientSession(timeout=timeout) as s,
            s.post(f"{base}/v1/messages", data=orjson.dumps(body), headers=headers) as resp,
        ):
            await resp.read()

    try:
        if call["hang_up_after"] is None:
            await talk()
        else:  # the client gives up and closes its connection
            await asyncio.wait_for(talk(), call["hang_up_after"])
    except (TimeoutError, aiohttp.ClientError):
        return False
    return True


async def _all(base: str, batch: list[dict]) -> int:
    answered = await asyncio.gather(*(_call(base, n, c) for n, c in enumerate(batch)))
    return sum(answered)


# no shrinking: a failing example is printed as drawn (shrinking one takes minutes)
@settings(
    max_examples=12,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(batch=st.lists(calls(), min_size=1, max_size=10))
def test_every_line_parses_and_reads_back(tmp_path_factory, batch: list[dict]) -> None:
    out = tmp_path_factory.mktemp("faults") / "rec.jsonl"
    upstream = FakeUpstream()
    upstream.server.start()
    proxy = ProxyThread(
        port=0, out=out, upstream=upstream.url, openai_upstream=upstream.url, timeout=PROXY_TIMEOUT
    )
    try:
        proxy.start()
        answered = asyncio.run(_all(proxy.url, batch))
    finally:
        proxy.stop()  # in-flight exchanges end and are written before it returns
        upstream.server.stop()
    lines = Path(out).read_bytes().splitlines()
    records = [orjson.loads(line) for line in lines]  # every line parses
    kinds = [r["type"] for r in records]
    # one line per call that reached the proxy: every answered one, at most every call
    assert kinds[0] == "meta" and set(kinds[1:]) <= {"exchange"}
    assert answered <= len(kinds) - 1 <= len(batch)
    assert len(kinds) - 1 == proxy.server.recorder.count
    session = load(str(out))
    assert session.skipped == []
    assert len(session.requests) == sum(1 for r in records if r.get("api") == "anthropic")
    with contextlib.redirect_stdout(io.StringIO()) as text:
        assert main(["report", str(out), "--json"]) in (0, 1)  # 1: no request at all
    if session.requests:
        assert orjson.loads(text.getvalue())["source"]["requests"] == len(session.requests)
