

async def test_author_search_costs_two_units(client: AsyncClient, free_headers: dict[str, str]) -> None:
    # /v1/search itself needs Postgres full-text functions, which the SQLite test database lacks;
    # the cost table is exercised through /v1/search/authors and route_cost() directly.
    with time_machine.travel(T0, tick=False):
        first = await client.get("/v1/search/authors", headers=free_headers, params={"q": "le guin"})
        codes = [
            (await client.get("/v1/search/authors", headers=free_headers, params={"q": "le guin"})).status_code
            for _ in range(10)
        ]
    assert first.headers["RateLimit-Remaining"] == "18"
    assert codes == [200] * 9 + [429]


@pytest.mark.parametrize(
    ("path", "cost"),
    [("/v1/search", 5), ("/v1/search/authors", 2), ("/v1/books/42", 1), ("/v1/shelves", 1)],
)
def test_route_cost(path: str, cost: int) -> None:
    assert route_cost(path) == cost
