"""Per-API-key rate limiting: one token bucket per key, stored in Redis.

A bucket holds up to `burst` tokens and refills at `requests_per_minute / 60`
tokens per second; a request takes one token. The check-and-take runs in a
Lua script so that concurrent requests on several pods cannot overdraw it.
Plan limits are read from the `plans` table once, on first use.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import RedisError
from sqlalchemy import select
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp

from app.cache import get_redis
from app.db import session_scope
from app.models import Plan

log = logging.getLogger(__name__)

# KEYS[1]: bucket. ARGV: capacity, refill rate (tokens/s), now (s), cost.
# Returns {allowed (0/1), whole tokens left, seconds until `cost` tokens are back}.
TOKEN_BUCKET = """
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1]) or capacity
local ts = tonumber(state[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - ts) * rate)
local allowed = 0
if tokens >= cost then
  tokens = tokens - cost
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'ts', now)
redis.call('EXPIRE', KEYS[1], math.ceil(capacity / rate) + 1)
local wait = 0
if allowed == 0 then
  wait = (cost - tokens) / rate
end
return {allowed, math.floor(tokens), wait}
"""

EXEMPT_PATHS = frozenset({"/healthz", "/readyz", "/docs", "/redoc", "/openapi.json"})


@dataclass(frozen=True, slots=True)
class Limit:
    requests_per_minute: int
    burst: int

    @property
    def rate(self) -> float:
        return self.requests_per_minute / 60


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    limit: int
    remaining: int
    retry_after: float  # seconds


ANONYMOUS = Limit(requests_per_minute=30, burst=10)


class RateLimiter:
    def __init__(
        self,
        redis: Callable[[], Redis] = get_redis,
        limits: dict[str, Limit] | None = None,
        prefix: str = "rl",
    ) -> None:
        self._redis = redis
        self.limits = limits
        self.prefix = prefix

    async def ensure_limits(self) -> dict[str, Limit]:
        if self.limits is None:
            async with session_scope() as session:
                rows = await session.execute(select(Plan.name, Plan.requests_per_minute, Plan.burst))
                self.limits = {name: Limit(rpm, burst) for name, rpm, burst in rows}
            log.info("rate limits loaded", extra={"plans": sorted(self.limits)})
        return self.limits

    async def hit(self, bucket: str, plan: str | None, cost: int = 1) -> Decision:
        limits = await self.ensure_limits()
        limit = (limits.get(plan) or limits.get("free", ANONYMOUS)) if plan else ANONYMOUS
        script = self._redis().register_script(TOKEN_BUCKET)
        try:
            allowed, remaining, wait = await script(
                keys=[f"{self.prefix}:{bucket}"],
                args=[limit.burst, limit.rate, time.time(), cost],
            )
        except RedisError:
            # Fail open: a Redis outage must not become an API outage (issue #142).
            log.warning("rate limiter unavailable, allowing request", exc_info=True)
            return Decision(True, limit.burst, limit.burst, 0.0)
        return Decision(bool(allowed), limit.burst, int(remaining), float(wait))


class RateLimitMiddleware(BaseHTTPMiddleware):
    def __init__(self, app: ASGIApp, limiter: RateLimiter) -> None:
        super().__init__(app)
        self.limiter = limiter

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        if request.url.path in EXEMPT_PATHS:
            return await call_next(request)
        api_key = getattr(request.state, "api_key", None)
        if api_key is not None:
            decision = await self.limiter.hit(f"key:{api_key.id}", api_key.plan)
        else:
            host = request.client.host if request.client else "unknown"
            decision = await self.limiter.hit(f"ip:{host}", None)
        if not decision.allowed:
            return JSONResponse(
                status_code=429,
                content={"error": {"code": "rate_limited",
                                   "message": "Too many requests for this API key. Retry later."}},
                headers={
                    "Retry-After": str(decision.retry_after),
                    "RateLimit-Limit": str(decision.limit),
                    "RateLimit-Remaining": "0",
                },
            )
        return await call_next(request)
