"""API-key authentication.

Keys are `sk_live_<prefix>_<secret>` (or `sk_test_...`). Only the SHA-256 of the
whole key is stored; the 8-character prefix is stored in clear to find keys in
logs and support tickets.
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass

from fastapi import Depends, Request
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import get_session
from app.errors import ApiError
from app.models import ApiKeyRow

log = logging.getLogger(__name__)

HEADER = "x-api-key"


@dataclass(frozen=True, slots=True)
class ApiKey:
    id: int
    prefix: str
    owner_id: int
    plan: str


_cache: dict[str, tuple[float, ApiKey | None]] = {}


def hash_key(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def key_prefix(raw: str) -> str:
    parts = raw.split("_")
    return "_".join(parts[:3]) if len(parts) >= 4 else raw[:12]


async def lookup_key(session: AsyncSession, raw: str, ttl: float = 30.0) -> ApiKey | None:
    """The active key for `raw`, cached in-process for `ttl` seconds (misses too)."""
    digest = hash_key(raw)
    hit = _cache.get(digest)
    now = time.monotonic()
    if hit is not None and hit[0] > now:
        return hit[1]
    row = await session.scalar(
        select(ApiKeyRow).where(ApiKeyRow.key_hash == digest, ApiKeyRow.revoked_at.is_(None))
    )
    key = ApiKey(row.id, row.key_prefix, row.owner_id, row.plan) if row else None
    _cache[digest] = (now + ttl, key)
    return key


async def resolve_api_key(
    request: Request, session: AsyncSession = Depends(get_session)
) -> ApiKey:
    """FastAPI dependency: the caller's API key, or 401."""
    raw = request.headers.get(HEADER)
    if not raw:
        raise ApiError(401, "missing_api_key", "Send your API key in the X-API-Key header.")
    key = await lookup_key(session, raw, request.app.state.settings.api_key_cache_ttl)
    if key is None:
        log.info("rejected api key", extra={"prefix": key_prefix(raw)})
        raise ApiError(401, "invalid_api_key", "This API key is unknown or revoked.")
    request.state.api_key = key
    return key


def clear_key_cache() -> None:
    _cache.clear()
