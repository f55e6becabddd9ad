from __future__ import annotations

import base64
import json
from datetime import date
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response, status
from pydantic import BaseModel, Field, field_validator
from sqlalchemy import Select, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from app.auth import ApiKey, resolve_api_key
from app.db import get_session
from app.errors import ApiError
from app.isbn import is_valid_isbn13, normalise_isbn
from app.models import Author, Book, BookAuthor

router = APIRouter(tags=["books"])

MAX_PAGE_SIZE = 100


class AuthorOut(BaseModel):
    id: int
    name: str
    role: str = "author"


class BookOut(BaseModel):
    id: int
    isbn13: str | None
    title: str
    subtitle: str | None = None
    language: str
    published_on: date | None = None
    page_count: int | None = None
    authors: list[AuthorOut]
    subjects: list[str] = []
    average_rating: float | None = None
    cover_url: str | None = None

    @classmethod
    def from_row(cls, book: Book) -> BookOut:
        return cls(
            id=book.id,
            isbn13=book.isbn13,
            title=book.title,
            subtitle=book.subtitle,
            language=book.language,
            published_on=book.published_on,
            page_count=book.page_count,
            authors=[AuthorOut(id=ba.author.id, name=ba.author.name, role=ba.role) for ba in book.authors],
            subjects=book.subjects,
            average_rating=book.average_rating,
            cover_url=book.cover_url,
        )


class BookPage(BaseModel):
    items: list[BookOut]
    next_cursor: str | None = None


class BookIn(BaseModel):
    isbn13: str | None = None
    title: str = Field(min_length=1, max_length=500)
    subtitle: str | None = Field(default=None, max_length=500)
    language: str = Field(default="en", pattern=r"^[a-z]{2,3}(-[A-Z]{2})?$")
    published_on: date | None = None
    page_count: int | None = Field(default=None, gt=0, lt=20000)
    author_ids: list[int] = Field(min_length=1, max_length=20)
    subjects: list[str] = Field(default_factory=list, max_length=30)

    @field_validator("isbn13")
    @classmethod
    def check_isbn(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = normalise_isbn(value)
        if not is_valid_isbn13(value):
            raise ValueError("not a valid ISBN-13")
        return value


class BookPatch(BaseModel):
    title: str | None = Field(default=None, min_length=1, max_length=500)
    subtitle: str | None = None
    page_count: int | None = Field(default=None, gt=0, lt=20000)
    subjects: list[str] | None = None


def _encode_cursor(book_id: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"after": book_id}).encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> int:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        return int(json.loads(base64.urlsafe_b64decode(padded))["after"])
    except (ValueError, KeyError, TypeError):
        raise ApiError(400, "invalid_cursor", "The cursor is malformed or expired.") from None


def _with_authors(query: Select[tuple[Book]]) -> Select[tuple[Book]]:
    return query.options(selectinload(Book.authors).selectinload(BookAuthor.author))


@router.get("/books", response_model=BookPage)
async def list_books(
    key: Annotated[ApiKey, Depends(resolve_api_key)],
    session: Annotated[AsyncSession, Depends(get_session)],
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE)] = 20,
    cursor: str | None = None,
    language: str | None = None,
    subject: str | None = None,
) -> BookPage:
    query = _with_authors(select(Book)).order_by(Book.id).limit(limit + 1)
    if cursor:
        query = query.where(Book.id > _decode_cursor(cursor))
    if language:
        query = query.where(Book.language == language)
    if subject:
        query = query.where(Book.subjects.contains([subject]))
    rows = list(await session.scalars(query))
    next_cursor = _encode_cursor(rows[limit - 1].id) if len(rows) > limit else None
    return BookPage(items=[BookOut.from_row(b) for b in rows[:limit]], next_cursor=next_cursor)


@router.get("/books/{book_id}", response_model=BookOut)
async def get_book(
    book_id: int,
    key: Annotated[ApiKey, Depends(resolve_api_key)],
    session: Annotated[AsyncSession, Depends(get_session)],
) -> BookOut:
    book = await session.scalar(_with_authors(select(Book).where(Book.id == book_id)))
    if book is None:
        raise ApiError(404, "book_not_found", f"No book with id {book_id}.")
    return BookOut.from_row(book)


@router.get("/books/by-isbn/{isbn}", response_model=BookOut)
async def get_book_by_isbn(
    isbn: str,
    key: Annotated[ApiKey, Depends(resolve_api_key)],
    session: Annotated[AsyncSession, Depends(get_session)],
) -> BookOut:
    isbn = normalise_isbn(isbn)
    if not is_valid_isbn13(isbn):
        raise ApiError(400, "invalid_isbn", "Not a valid ISBN-13.")
    book = await session.scalar(_with_authors(select(Book).where(Book.isbn13 == isbn)))
    if book is None:
        raise ApiError(404, "book_not_found", f"No book with ISBN {isbn}.")
    return BookOut.from_row(book)


@router.post("/books", response_model=BookOut, status_code=status.HTTP_201_CREATED)
async def create_book(
    payload: BookIn,
    key: Annotated[ApiKey, Depends(resolve_api_key)],
    session: Annotated[AsyncSession, Depends(get_session)],
) -> BookOut:
    if key.plan not in ("partner", "internal"):
        raise ApiError(403, "plan_forbidden", "Creating books requires a partner key.")
    if payload.isbn13 and await session.scalar(select(Book.id).where(Book.isbn13 == payload.isbn13)):
        raise ApiError(409, "duplicate_isbn", f"A book with ISBN {payload.isbn13} already exists.")
    authors = list(await session.scalars(select(Author).where(Author.id.in_(payload.author_ids))))
    missing = set(payload.author_ids) - {a.id for a in authors}
    if missing:
        raise ApiError(422, "unknown_author", f"Unknown author ids: {sorted(missing)}")
    book = Book(
        isbn13=payload.isbn13,
        title=payload.title,
        subtitle=payload.subtitle,
        language=payload.language,
        published_on=payload.published_on,
        page_count=payload.page_count,
        subjects=payload.subjects,
    )
    by_id = {a.id: a for a in authors}
    book.authors = [BookAuthor(author=by_id[aid], position=i) for i, aid in enumerate(payload.author_ids)]
    session.add(book)
    await session.commit()
    await session.refresh(book, ["authors"])
    return BookOut.from_row(book)


@router.patch("/books/{book_id}", response_model=BookOut)
async def update_book(
    book_id: int,
    payload: BookPatch,
    key: Annotated[ApiKey, Depends(resolve_api_key)],
    session: Annotated[AsyncSession, Depends(get_session)],
) -> BookOut:
    if key.plan not in ("partner", "internal"):
        raise ApiError(403, "plan_forbidden", "Editing books requires a partner key.")
    book = await session.scalar(_with_authors(select(Book).where(Book.id == book_id)))
    if book is None:
        raise ApiError(404, "book_not_found", f"No book with id {book_id}.")
    for field, value in payload.model_dump(exclude_unset=True).items():
        setattr(book, field, value)
    await session.commit()
    return BookOut.from_row(book)


@router.delete("/books/{book_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_book(
    book_id: int,
    key: Annotated[ApiKey, Depends(resolve_api_key)],
    session: Annotated[AsyncSession, Depends(get_session)],
) -> Response:
    if key.plan != "internal":
        raise ApiError(403, "plan_forbidden", "Only internal keys can delete books.")
    book = await session.get(Book, book_id)
    if book is None:
        raise ApiError(404, "book_not_found", f"No book with id {book_id}.")
    await session.delete(book)
    await session.commit()
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/books/{book_id}/similar", response_model=list[BookOut])
async def similar_books(
    book_id: int,
    key: Annotated[ApiKey, Depends(resolve_api_key)],
    session: Annotated[AsyncSession, Depends(get_session)],
    limit: Annotated[int, Query(ge=1, le=20)] = 10,
) -> list[BookOut]:
    book = await session.get(Book, book_id)
    if book is None:
        raise ApiError(404, "book_not_found", f"No book with id {book_id}.")
    if not book.subjects:
        return []
    overlap = func.jsonb_array_length(Book.subjects)  # cheap proxy, refined in Python below
    query = (
        _with_authors(select(Book))
        .where(Book.id != book_id, Book.subjects.op("?|")(book.subjects))
        .order_by(overlap.desc(), Book.ratings_count.desc())
        .limit(limit * 3)
    )
    candidates = list(await session.scalars(query))
    wanted = set(book.subjects)
    candidates.sort(key=lambda b: (-len(wanted & set(b.subjects)), -b.ratings_count))
    return [BookOut.from_row(b) for b in candidates[:limit]]
