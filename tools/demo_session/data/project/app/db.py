from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

_engine: AsyncEngine | None = None
_factory: async_sessionmaker[AsyncSession] | None = None


async def init_engine(url: str, pool_size: int = 10) -> None:
    global _engine, _factory
    _engine = create_async_engine(url, pool_size=pool_size, pool_pre_ping=True)
    _factory = async_sessionmaker(_engine, expire_on_commit=False)


def set_session_factory(factory: async_sessionmaker[AsyncSession] | None) -> None:
    """Tests install a factory bound to their own engine."""
    global _factory
    _factory = factory


@asynccontextmanager
async def session_scope() -> AsyncIterator[AsyncSession]:
    """A session outside of a request (startup code, middleware, scripts)."""
    if _factory is None:
        raise RuntimeError("database not initialised")
    async with _factory() as session:
        yield session


async def get_session() -> AsyncIterator[AsyncSession]:
    """FastAPI dependency: one session per request."""
    async with session_scope() as session:
        yield session


async def ping() -> None:
    async with session_scope() as session:
        await session.execute(text("SELECT 1"))


async def dispose_engine() -> None:
    global _engine, _factory
    if _engine is not None:
        await _engine.dispose()
    _engine = _factory = None
