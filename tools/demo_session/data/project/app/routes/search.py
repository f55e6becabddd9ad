"""Full-text search over books and authors, with facet counts.

Search is the most expensive endpoint we have: a ts_rank over the GIN index
plus two facet aggregations. Results are cached in Redis for
`settings.search_cache_ttl` seconds, keyed by the normalised query.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel
from sqlalchemy import func, literal_column, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth import ApiKey, resolve_api_key
from app.cache import get_redis
from app.db import get_session
from app.models import Author, Book, BookAuthor
from app.routes.books import BookOut, _with_authors

router = APIRouter(tags=["search"])
log = logging.getLogger(__name__)


class Facet(BaseModel):
    value: str
    count: int


class SearchResult(BaseModel):
    query: str
    total: int
    items: list[BookOut]
    languages: list[Facet]
    subjects: list[Facet]


def _cache_key(q: str, language: str | None, page: int, size: int) -> str:
    raw = json.dumps([q.casefold().strip(), language, page, size])
    return "search:v2:" + hashlib.blake2b(raw.encode(), digest_size=12).hexdigest()


@router.get("/search", response_model=SearchResult)
async def search(
    request: Request,
    key: Annotated[ApiKey, Depends(resolve_api_key)],
    session: Annotated[AsyncSession, Depends(get_session)],
    q: Annotated[str, Query(min_length=2, max_length=200)],
    language: str | None = None,
    page: Annotated[int, Query(ge=1, le=100)] = 1,
    size: Annotated[int, Query(ge=1)] = 20,
) -> SearchResult:
    settings = request.app.state.settings
    size = min(size, settings.search_max_page_size)
    redis = get_redis()
    cache_key = _cache_key(q, language, page, size)
    if cached := await redis.get(cache_key):
        return SearchResult.model_validate_json(cached)

    tsquery = func.websearch_to_tsquery("simple", q)
    rank = func.ts_rank_cd(Book.search_vector, tsquery).label("rank")
    base = select(Book.id).where(Book.search_vector.op("@@")(tsquery))
    if language:
        base = base.where(Book.language == language)

    total = await session.scalar(select(func.count()).select_from(base.subquery())) or 0
    ids_query = (
        select(Book.id, rank)
        .where(Book.id.in_(base))
        .order_by(rank.desc(), Book.ratings_count.desc())
        .offset((page - 1) * size)
        .limit(size)
    )
    ids = [row.id for row in await session.execute(ids_query)]
    books = {b.id: b for b in await session.scalars(_with_authors(select(Book)).where(Book.id.in_(ids)))}

    lang_rows = await session.execute(
        select(Book.language, func.count()).where(Book.id.in_(base)).group_by(Book.language)
        .order_by(func.count().desc()).limit(10)
    )
    subject = func.jsonb_array_elements_text(Book.subjects).table_valued("value").alias("s")
    subject_rows = await session.execute(
        select(literal_column("s.value"), func.count())
        .select_from(Book)
        .join(subject, literal_column("true"))
        .where(Book.id.in_(base))
        .group_by(literal_column("s.value"))
        .order_by(func.count().desc())
        .limit(15)
    )
    result = SearchResult(
        query=q,
        total=total,
        items=[BookOut.from_row(books[i]) for i in ids if i in books],
        languages=[Facet(value=v, count=c) for v, c in lang_rows],
        subjects=[Facet(value=v, count=c) for v, c in subject_rows],
    )
    await redis.set(cache_key, result.model_dump_json(), ex=settings.search_cache_ttl)
    return result


@router.get("/search/authors", response_model=list[Facet])
async def search_authors(
    key: Annotated[ApiKey, Depends(resolve_api_key)],
    session: Annotated[AsyncSession, Depends(get_session)],
    q: Annotated[str, Query(min_length=2, max_length=100)],
    limit: Annotated[int, Query(ge=1, le=50)] = 10,
) -> list[Facet]:
    pattern = q.replace("%", "").replace("_", "") + "%"
    rows = await session.execute(
        select(Author.name, func.count(BookAuthor.book_id))
        .join(BookAuthor, BookAuthor.author_id == Author.id, isouter=True)
        .where(Author.sort_name.ilike(pattern) | Author.name.ilike(pattern))
        .group_by(Author.id)
        .order_by(func.count(BookAuthor.book_id).desc())
        .limit(limit)
    )
    return [Facet(value=name, count=count) for name, count in rows]
