from __future__ import annotations

from collections.abc import AsyncIterator

import fakeredis
import pytest
from httpx import ASGITransport, AsyncClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker, create_async_engine

from app import db
from app.auth import clear_key_cache, hash_key
from app.cache import set_redis
from app.main import create_app
from app.models import ApiKeyRow, Base, Plan, User
from app.settings import Settings

PLANS = [
    Plan(name="free", requests_per_minute=60, burst=20, monthly_quota=50_000),
    Plan(name="pro", requests_per_minute=600, burst=100, monthly_quota=2_000_000),
    Plan(name="partner", requests_per_minute=3000, burst=500),
    Plan(name="internal", requests_per_minute=10_000, burst=2000),
]

FREE_KEY = "sk_test_free0001_3b9d1c0c4f7e4a5f"
PRO_KEY = "sk_test_pro00002_5e2a9b7d10c34c1e"
PARTNER_KEY = "sk_test_part0003_8c41d2f07a9e4b66"
INTERNAL_KEY = "sk_test_intl0004_0f6e3a52d8b14c97"


@pytest.fixture
def settings() -> Settings:
    return Settings(
        env="test",
        database_url="postgresql+asyncpg://unused/unused",
        redis_url="redis://unused:6379/0",
        api_key_cache_ttl=0.0,
    )


@pytest.fixture
async def redis() -> AsyncIterator[fakeredis.FakeAsyncRedis]:
    client = fakeredis.FakeAsyncRedis(decode_responses=True)
    set_redis(client)
    yield client
    await client.flushall()
    set_redis(None)


@pytest.fixture
async def session_factory() -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    engine = create_async_engine("sqlite+aiosqlite:///:memory:")
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
    factory = async_sessionmaker(engine, expire_on_commit=False)
    async with factory() as session:
        user = User(id=1, email="dev@example.test", display_name="Dev")
        session.add_all([*PLANS, user])
        for i, (raw, plan) in enumerate(
            [(FREE_KEY, "free"), (PRO_KEY, "pro"), (PARTNER_KEY, "partner"), (INTERNAL_KEY, "internal")],
            start=1,
        ):
            session.add(ApiKeyRow(id=i, key_prefix=raw[:16], key_hash=hash_key(raw), owner_id=1, plan=plan))
        await session.commit()
    db.set_session_factory(factory)
    yield factory
    db.set_session_factory(None)
    await engine.dispose()


@pytest.fixture
async def app(settings: Settings, redis: fakeredis.FakeAsyncRedis, session_factory: object):
    clear_key_cache()
    return create_app(settings)


@pytest.fixture
async def client(app) -> AsyncIterator[AsyncClient]:
    transport = ASGITransport(app=app)
    async with AsyncClient(transport=transport, base_url="http://test") as c:
        yield c


@pytest.fixture
def free_headers() -> dict[str, str]:
    return {"X-API-Key": FREE_KEY}


@pytest.fixture
def pro_headers() -> dict[str, str]:
    return {"X-API-Key": PRO_KEY}


@pytest.fixture
def partner_headers() -> dict[str, str]:
    return {"X-API-Key": PARTNER_KEY}


@pytest.fixture
def internal_headers() -> dict[str, str]:
    return {"X-API-Key": INTERNAL_KEY}
