from __future__ import annotations

import pytest
from httpx import AsyncClient

from tests.factories import make_author, make_book

pytestmark = pytest.mark.usefixtures("app")


async def test_list_requires_api_key(client: AsyncClient) -> None:
    resp = await client.get("/v1/books")
    assert resp.status_code == 401
    assert resp.json()["error"]["code"] == "missing_api_key"


async def test_list_rejects_unknown_key(client: AsyncClient) -> None:
    resp = await client.get("/v1/books", headers={"X-API-Key": "sk_test_nope0000_000000"})
    assert resp.status_code == 401
    assert resp.json()["error"]["code"] == "invalid_api_key"


async def test_list_books_empty(client: AsyncClient, free_headers: dict[str, str]) -> None:
    resp = await client.get("/v1/books", headers=free_headers)
    assert resp.status_code == 200
    assert resp.json() == {"items": [], "next_cursor": None}


async def test_list_books_returns_authors_in_order(
    client: AsyncClient, free_headers: dict[str, str], session_factory
) -> None:
    async with session_factory() as s:
        a1, a2 = make_author(s, "Ursula K. Le Guin"), make_author(s, "Ted Chiang")
        make_book(s, "The Dispossessed", authors=[a1])
        make_book(s, "Anthology", authors=[a2, a1])
        await s.commit()
    resp = await client.get("/v1/books", headers=free_headers)
    items = resp.json()["items"]
    assert [b["title"] for b in items] == ["The Dispossessed", "Anthology"]
    assert [a["name"] for a in items[1]["authors"]] == ["Ted Chiang", "Ursula K. Le Guin"]


async def test_list_books_pagination_walks_all_pages(
    client: AsyncClient, free_headers: dict[str, str], session_factory
) -> None:
    async with session_factory() as s:
        author = make_author(s, "Iain M. Banks")
        for i in range(45):
            make_book(s, f"Culture {i:02d}", authors=[author])
        await s.commit()
    seen: list[str] = []
    cursor = None
    for _ in range(30):
        params = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        resp = await client.get("/v1/books", headers=free_headers, params=params)
        assert resp.status_code == 200
        page = resp.json()
        seen += [b["title"] for b in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == 45
    assert seen == sorted(seen)


async def test_list_books_filters_by_language(
    client: AsyncClient, free_headers: dict[str, str], session_factory
) -> None:
    async with session_factory() as s:
        author = make_author(s, "Amélie Nothomb")
        make_book(s, "Stupeur et tremblements", authors=[author], language="fr")
        make_book(s, "Fear and Trembling", authors=[author], language="en")
        await s.commit()
    resp = await client.get("/v1/books", headers=free_headers, params={"language": "fr"})
    assert [b["title"] for b in resp.json()["items"]] == ["Stupeur et tremblements"]


async def test_invalid_cursor_is_400(client: AsyncClient, free_headers: dict[str, str]) -> None:
    resp = await client.get("/v1/books", headers=free_headers, params={"cursor": "not-a-cursor"})
    assert resp.status_code == 400
    assert resp.json()["error"]["code"] == "invalid_cursor"


@pytest.mark.parametrize("limit", [0, 101])
async def test_limit_bounds(client: AsyncClient, free_headers: dict[str, str], limit: int) -> None:
    resp = await client.get("/v1/books", headers=free_headers, params={"limit": limit})
    assert resp.status_code == 422


async def test_get_book_404(client: AsyncClient, free_headers: dict[str, str]) -> None:
    resp = await client.get("/v1/books/999", headers=free_headers)
    assert resp.status_code == 404
    assert resp.json()["error"]["code"] == "book_not_found"


async def test_get_book_by_isbn_normalises_hyphens(
    client: AsyncClient, free_headers: dict[str, str], session_factory
) -> None:
    async with session_factory() as s:
        make_book(s, "Exhalation", authors=[make_author(s, "Ted Chiang")], isbn13="9781101947883")
        await s.commit()
    resp = await client.get("/v1/books/by-isbn/978-1-101-94788-3", headers=free_headers)
    assert resp.status_code == 200
    assert resp.json()["title"] == "Exhalation"


async def test_get_book_by_isbn_rejects_bad_checksum(
    client: AsyncClient, free_headers: dict[str, str]
) -> None:
    resp = await client.get("/v1/books/by-isbn/9781101947884", headers=free_headers)
    assert resp.status_code == 400
    assert resp.json()["error"]["code"] == "invalid_isbn"


async def test_create_book_needs_partner_plan(
    client: AsyncClient, pro_headers: dict[str, str]
) -> None:
    resp = await client.post("/v1/books", headers=pro_headers, json={"title": "X", "author_ids": [1]})
    assert resp.status_code == 403
    assert resp.json()["error"]["code"] == "plan_forbidden"


async def test_create_book(
    client: AsyncClient, partner_headers: dict[str, str], session_factory
) -> None:
    async with session_factory() as s:
        author = make_author(s, "N. K. Jemisin")
        await s.commit()
        author_id = author.id
    resp = await client.post(
        "/v1/books",
        headers=partner_headers,
        json={"title": "The Fifth Season", "isbn13": "978-0-316-22929-6", "author_ids": [author_id],
              "subjects": ["fantasy", "science fiction"]},
    )
    assert resp.status_code == 201, resp.text
    body = resp.json()
    assert body["isbn13"] == "9780316229296"
    assert body["authors"] == [{"id": author_id, "name": "N. K. Jemisin", "role": "author"}]


async def test_create_book_duplicate_isbn_is_409(
    client: AsyncClient, partner_headers: dict[str, str], session_factory
) -> None:
    async with session_factory() as s:
        author = make_author(s, "Octavia E. Butler")
        make_book(s, "Kindred", authors=[author], isbn13="9780807083697")
        await s.commit()
        author_id = author.id
    resp = await client.post(
        "/v1/books",
        headers=partner_headers,
        json={"title": "Kindred (again)", "isbn13": "9780807083697", "author_ids": [author_id]},
    )
    assert resp.status_code == 409


async def test_create_book_unknown_author_is_422(
    client: AsyncClient, partner_headers: dict[str, str]
) -> None:
    resp = await client.post("/v1/books", headers=partner_headers, json={"title": "Ghost", "author_ids": [404]})
    assert resp.status_code == 422
    assert resp.json()["error"]["code"] == "unknown_author"


async def test_patch_book_partial_update(
    client: AsyncClient, partner_headers: dict[str, str], session_factory
) -> None:
    async with session_factory() as s:
        book = make_book(s, "Piranesi", authors=[make_author(s, "Susanna Clarke")], page_count=10)
        await s.commit()
        book_id = book.id
    resp = await client.patch(f"/v1/books/{book_id}", headers=partner_headers, json={"page_count": 272})
    assert resp.status_code == 200
    assert resp.json()["page_count"] == 272
    assert resp.json()["title"] == "Piranesi"


async def test_delete_book_internal_only(
    client: AsyncClient, partner_headers: dict[str, str], internal_headers: dict[str, str], session_factory
) -> None:
    async with session_factory() as s:
        book = make_book(s, "Doomed", authors=[make_author(s, "Anon")])
        await s.commit()
        book_id = book.id
    assert (await client.delete(f"/v1/books/{book_id}", headers=partner_headers)).status_code == 403
    assert (await client.delete(f"/v1/books/{book_id}", headers=internal_headers)).status_code == 204
    assert (await client.get(f"/v1/books/{book_id}", headers=internal_headers)).status_code == 404


async def test_similar_books_ranks_by_subject_overlap(
    client: AsyncClient, free_headers: dict[str, str], session_factory
) -> None:
    async with session_factory() as s:
        a = make_author(s, "Various")
        base = make_book(s, "Base", authors=[a], subjects=["space", "politics", "anarchism"])
        make_book(s, "Two", authors=[a], subjects=["space", "politics"])
        make_book(s, "One", authors=[a], subjects=["space"])
        make_book(s, "None", authors=[a], subjects=["cooking"])
        await s.commit()
        base_id = base.id
    resp = await client.get(f"/v1/books/{base_id}/similar", headers=free_headers)
    assert [b["title"] for b in resp.json()] == ["Two", "One"]
