from __future__ import annotations

import enum
from datetime import date, datetime

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Date,
    DateTime,
    Enum,
    ForeignKey,
    Index,
    Integer,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy.dialects.postgresql import JSONB, TSVECTOR
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class Base(DeclarativeBase):
    pass


class TimestampMixin:
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), nullable=False
    )
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now(), nullable=False
    )


class ReadingStatus(enum.StrEnum):
    WANT_TO_READ = "want_to_read"
    READING = "reading"
    FINISHED = "finished"
    ABANDONED = "abandoned"


class User(TimestampMixin, Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    email: Mapped[str] = mapped_column(String(320), unique=True, nullable=False)
    display_name: Mapped[str] = mapped_column(String(80), nullable=False)
    locale: Mapped[str] = mapped_column(String(16), default="en", nullable=False)
    is_partner: Mapped[bool] = mapped_column(default=False, nullable=False)

    shelves: Mapped[list[Shelf]] = relationship(back_populates="owner", cascade="all, delete-orphan")
    api_keys: Mapped[list[ApiKeyRow]] = relationship(back_populates="owner")


class Plan(Base):
    """Commercial plan of an API key. Limits are per key."""

    __tablename__ = "plans"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    requests_per_minute: Mapped[int] = mapped_column(Integer, nullable=False)
    burst: Mapped[int] = mapped_column(Integer, nullable=False)
    monthly_quota: Mapped[int | None] = mapped_column(BigInteger)
    description: Mapped[str] = mapped_column(Text, default="", nullable=False)

    __table_args__ = (
        CheckConstraint("requests_per_minute > 0", name="plans_rpm_positive"),
        CheckConstraint("burst > 0", name="plans_burst_positive"),
    )


class ApiKeyRow(TimestampMixin, Base):
    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    key_prefix: Mapped[str] = mapped_column(String(24), nullable=False)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True, nullable=False)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), nullable=False)
    plan: Mapped[str] = mapped_column(ForeignKey("plans.name"), default="free", nullable=False)
    label: Mapped[str] = mapped_column(String(80), default="", nullable=False)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    owner: Mapped[User] = relationship(back_populates="api_keys")

    __table_args__ = (Index("api_keys_owner_idx", "owner_id"),)


class Author(TimestampMixin, Base):
    __tablename__ = "authors"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), nullable=False)
    sort_name: Mapped[str] = mapped_column(String(200), nullable=False)
    birth_year: Mapped[int | None] = mapped_column(SmallInteger)
    death_year: Mapped[int | None] = mapped_column(SmallInteger)
    openlibrary_id: Mapped[str | None] = mapped_column(String(32), unique=True)

    books: Mapped[list[BookAuthor]] = relationship(back_populates="author")

    __table_args__ = (Index("authors_sort_name_idx", "sort_name"),)


class Publisher(Base):
    __tablename__ = "publishers"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True, nullable=False)
    country: Mapped[str | None] = mapped_column(String(2))


class Book(TimestampMixin, Base):
    __tablename__ = "books"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    isbn13: Mapped[str | None] = mapped_column(String(13), unique=True)
    title: Mapped[str] = mapped_column(String(500), nullable=False)
    subtitle: Mapped[str | None] = mapped_column(String(500))
    language: Mapped[str] = mapped_column(String(8), default="en", nullable=False)
    published_on: Mapped[date | None] = mapped_column(Date)
    page_count: Mapped[int | None] = mapped_column(Integer)
    publisher_id: Mapped[int | None] = mapped_column(ForeignKey("publishers.id"))
    description: Mapped[str | None] = mapped_column(Text)
    cover_url: Mapped[str | None] = mapped_column(String(1000))
    subjects: Mapped[list[str]] = mapped_column(JSONB, default=list, nullable=False)
    search_vector: Mapped[str | None] = mapped_column(TSVECTOR)
    ratings_count: Mapped[int] = mapped_column(Integer, default=0, nullable=False)
    ratings_sum: Mapped[int] = mapped_column(Integer, default=0, nullable=False)

    authors: Mapped[list[BookAuthor]] = relationship(
        back_populates="book", order_by="BookAuthor.position", cascade="all, delete-orphan"
    )
    publisher: Mapped[Publisher | None] = relationship()

    __table_args__ = (
        Index("books_search_idx", "search_vector", postgresql_using="gin"),
        Index("books_published_idx", "published_on"),
        CheckConstraint("page_count IS NULL OR page_count > 0", name="books_pages_positive"),
    )

    @property
    def average_rating(self) -> float | None:
        return round(self.ratings_sum / self.ratings_count, 2) if self.ratings_count else None


class BookAuthor(Base):
    __tablename__ = "book_authors"

    book_id: Mapped[int] = mapped_column(ForeignKey("books.id", ondelete="CASCADE"), primary_key=True)
    author_id: Mapped[int] = mapped_column(ForeignKey("authors.id"), primary_key=True)
    position: Mapped[int] = mapped_column(SmallInteger, default=0, nullable=False)
    role: Mapped[str] = mapped_column(String(32), default="author", nullable=False)

    book: Mapped[Book] = relationship(back_populates="authors")
    author: Mapped[Author] = relationship(back_populates="books")


class Shelf(TimestampMixin, Base):
    __tablename__ = "shelves"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), nullable=False)
    name: Mapped[str] = mapped_column(String(80), nullable=False)
    is_public: Mapped[bool] = mapped_column(default=False, nullable=False)
    position: Mapped[int] = mapped_column(Integer, default=0, nullable=False)

    owner: Mapped[User] = relationship(back_populates="shelves")
    entries: Mapped[list[ShelfEntry]] = relationship(
        back_populates="shelf", cascade="all, delete-orphan", order_by="ShelfEntry.added_at"
    )

    __table_args__ = (UniqueConstraint("owner_id", "name", name="shelves_owner_name_key"),)


class ShelfEntry(Base):
    __tablename__ = "shelf_entries"

    shelf_id: Mapped[int] = mapped_column(ForeignKey("shelves.id", ondelete="CASCADE"), primary_key=True)
    book_id: Mapped[int] = mapped_column(ForeignKey("books.id"), primary_key=True)
    status: Mapped[ReadingStatus] = mapped_column(
        Enum(ReadingStatus, name="reading_status"), default=ReadingStatus.WANT_TO_READ, nullable=False
    )
    rating: Mapped[int | None] = mapped_column(SmallInteger)
    note: Mapped[str | None] = mapped_column(Text)
    added_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    finished_on: Mapped[date | None] = mapped_column(Date)

    shelf: Mapped[Shelf] = relationship(back_populates="entries")
    book: Mapped[Book] = relationship()

    __table_args__ = (
        CheckConstraint("rating IS NULL OR rating BETWEEN 1 AND 5", name="entries_rating_range"),
    )


class ImportJob(TimestampMixin, Base):
    __tablename__ = "import_jobs"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), nullable=False)
    source: Mapped[str] = mapped_column(String(32), nullable=False)  # goodreads | storygraph | csv
    status: Mapped[str] = mapped_column(String(16), default="queued", nullable=False)
    rows_total: Mapped[int] = mapped_column(Integer, default=0, nullable=False)
    rows_done: Mapped[int] = mapped_column(Integer, default=0, nullable=False)
    errors: Mapped[list[dict[str, str]]] = mapped_column(JSONB, default=list, nullable=False)
