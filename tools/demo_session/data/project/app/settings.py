from __future__ import annotations

from functools import lru_cache

from pydantic import Field, PostgresDsn, RedisDsn
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Configuration from SHELFWISE_* environment variables (see .env.example)."""

    model_config = SettingsConfigDict(env_prefix="SHELFWISE_", env_file=".env", extra="ignore")

    env: str = "dev"
    log_level: str = "INFO"
    log_json: bool = False

    database_url: PostgresDsn = PostgresDsn("postgresql+asyncpg://shelfwise:shelfwise@localhost:5432/shelfwise")
    database_pool_size: int = 10
    redis_url: RedisDsn = RedisDsn("redis://localhost:6379/0")

    cors_origins: list[str] = Field(default_factory=lambda: ["http://localhost:5173"])
    trusted_proxies: list[str] = Field(default_factory=lambda: ["127.0.0.1"])

    api_key_cache_ttl: float = 30.0
    search_cache_ttl: int = 60
    search_max_page_size: int = 50
    import_max_rows: int = 5000


@lru_cache
def get_settings() -> Settings:
    return Settings()
