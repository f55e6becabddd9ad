from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request, Response
from fastapi.middleware.cors import CORSMiddleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint

from app import db
from app.cache import close_redis, get_redis
from app.errors import ApiError, api_error_handler
from app.logging import configure_logging
from app.routes import admin, books, imports, search, shelves
from app.settings import Settings, get_settings

log = logging.getLogger(__name__)


class RequestIdMiddleware(BaseHTTPMiddleware):
    """Propagate X-Request-Id (or create one) and log one line per request."""

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        request_id = request.headers.get("x-request-id") or uuid.uuid4().hex
        request.state.request_id = request_id
        response = await call_next(request)
        response.headers["X-Request-Id"] = request_id
        return response


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    configure_logging(settings.log_level, json=settings.log_json)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await db.init_engine(str(settings.database_url), pool_size=settings.database_pool_size)
        await get_redis(str(settings.redis_url)).ping()
        log.info("shelfwise api started", extra={"env": settings.env})
        yield
        await close_redis()
        await db.dispose_engine()

    app = FastAPI(title="Shelfwise API", version="1.14.0", lifespan=lifespan)
    app.state.settings = settings

    app.add_middleware(
        CORSMiddleware,
        allow_origins=settings.cors_origins,
        allow_methods=["GET", "POST", "PATCH", "DELETE"],
        allow_headers=["Authorization", "Content-Type", "X-API-Key", "X-Request-Id"],
        expose_headers=["X-Request-Id"],
    )
    app.add_middleware(RequestIdMiddleware)
    app.add_exception_handler(ApiError, api_error_handler)

    for router in (books.router, shelves.router, search.router, imports.router):
        app.include_router(router, prefix="/v1")
    app.include_router(admin.router, prefix="/admin")

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", include_in_schema=False)
    async def readyz() -> dict[str, str]:
        await db.ping()
        await get_redis().ping()
        return {"status": "ready"}

    return app


app = create_app()
