from __future__ import annotations

import pytest
import time_machine
from httpx import AsyncClient
from redis.exceptions import ConnectionError as RedisConnectionError

from app.ratelimit import Limit, RateLimiter

# Plans from tests/conftest.py: free = 60/min, burst 20; pro = 600/min, burst 100.
FREE_BURST = 20
T0 = 1_763_500_000  # 2025-11-18T21:06:40Z

pytestmark = pytest.mark.usefixtures("app")


async def drain(client: AsyncClient, headers: dict[str, str], n: int) -> list[int]:
    return [(await client.get("/v1/books", headers=headers)).status_code for _ in range(n)]


async def test_burst_is_allowed_then_429(client: AsyncClient, free_headers: dict[str, str]) -> None:
    with time_machine.travel(T0, tick=False):
        codes = await drain(client, free_headers, FREE_BURST + 1)
    assert codes[:FREE_BURST] == [200] * FREE_BURST
    assert codes[-1] == 429


async def test_429_body_and_headers(client: AsyncClient, free_headers: dict[str, str]) -> None:
    with time_machine.travel(T0, tick=False):
        await drain(client, free_headers, FREE_BURST)
        resp = await client.get("/v1/books", headers=free_headers)
    assert resp.status_code == 429
    assert resp.json() == {"error": {"code": "rate_limited",
                                     "message": "Too many requests for this API key. Retry later."}}
    assert resp.headers["RateLimit-Limit"] == "20"
    assert resp.headers["RateLimit-Remaining"] == "0"


async def test_retry_after_is_whole_seconds(client: AsyncClient, free_headers: dict[str, str]) -> None:
    # free refills 1 token/s: 0.25 s after draining the bucket, the next token is 0.75 s away.
    with time_machine.travel(T0, tick=False) as traveller:
        await drain(client, free_headers, FREE_BURST)
        traveller.shift(0.25)
        resp = await client.get("/v1/books", headers=free_headers)
    assert resp.status_code == 429
    assert resp.headers["Retry-After"] == "1"


async def test_headers_present_on_success(client: AsyncClient, free_headers: dict[str, str]) -> None:
    with time_machine.travel(T0, tick=False):
        first = await client.get("/v1/books", headers=free_headers)
        second = await client.get("/v1/books", headers=free_headers)
    assert first.headers["RateLimit-Limit"] == "20"
    assert first.headers["RateLimit-Remaining"] == "19"
    assert second.headers["RateLimit-Remaining"] == "18"
    assert "Retry-After" not in first.headers


async def test_bucket_refills_over_time(client: AsyncClient, free_headers: dict[str, str]) -> None:
    with time_machine.travel(T0, tick=False) as traveller:
        await drain(client, free_headers, FREE_BURST)
        assert (await client.get("/v1/books", headers=free_headers)).status_code == 429
        traveller.shift(5)
        codes = await drain(client, free_headers, 6)
    assert codes == [200] * 5 + [429]


async def test_limits_are_per_key(
    client: AsyncClient, free_headers: dict[str, str], pro_headers: dict[str, str]
) -> None:
    with time_machine.travel(T0, tick=False):
        await drain(client, free_headers, FREE_BURST)
        assert (await client.get("/v1/books", headers=free_headers)).status_code == 429
        assert (await client.get("/v1/books", headers=pro_headers)).status_code == 200


async def test_pro_plan_has_bigger_burst(client: AsyncClient, pro_headers: dict[str, str]) -> None:
    with time_machine.travel(T0, tick=False):
        codes = await drain(client, pro_headers, 101)
    assert codes.count(200) == 100
    assert codes[-1] == 429


@pytest.mark.parametrize("path", ["/healthz", "/openapi.json"])
async def test_exempt_paths_are_never_limited(client: AsyncClient, path: str) -> None:
    with time_machine.travel(T0, tick=False):
        codes = [(await client.get(path)).status_code for _ in range(50)]
    assert set(codes) == {200}


async def test_invalid_key_still_401(client: AsyncClient) -> None:
    resp = await client.get("/v1/books", headers={"X-API-Key": "sk_test_nope0000_000000"})
    assert resp.status_code == 401
    assert resp.json()["error"]["code"] == "invalid_api_key"


async def test_redis_down_fails_open() -> None:
    class DownRedis:
        def register_script(self, script: str):  # type: ignore[no-untyped-def]
            async def run(**kwargs: object) -> None:
                raise RedisConnectionError("connection refused")

            return run

    limiter = RateLimiter(redis=lambda: DownRedis(), limits={"free": Limit(60, 20)})  # type: ignore[arg-type,return-value]
    decision = await limiter.hit("key:1", "free")
    assert decision.allowed
    assert decision.remaining == 20
