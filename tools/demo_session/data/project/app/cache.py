from __future__ import annotations

from redis.asyncio import Redis

_client: Redis | None = None


def get_redis(url: str | None = None) -> Redis:
    """The process-wide Redis client, created on first use."""
    global _client
    if _client is None:
        if url is None:
            raise RuntimeError("get_redis() called before the app started")
        _client = Redis.from_url(url, decode_responses=True, health_check_interval=30)
    return _client


def set_redis(client: Redis | None) -> None:
    """Replace the client (tests use fakeredis)."""
    global _client
    _client = client


async def close_redis() -> None:
    global _client
    if _client is not None:
        await _client.aclose()
        _client = None
