"""13:49-14:10: the limiter and its tests, three rounds of failures, a green suite."""

from __future__ import annotations

from .calls import bash, edit, multiedit, read, step, text, todo, write
from .outputs import dashboard_png, pytest_failure, pytest_quiet
from .recording import Conversation, Recording
from .side_calls import topic_call
from .texts import load, source

CLIENT = "client = <httpx.AsyncClient object at 0x7f3e2c91d6a0>"
FREE = "free_headers = {'X-API-Key': 'sk_test_free0001_3b9d1c0c4f7e4a5f'}"
PRO = "pro_headers = {'X-API-Key': 'sk_test_pro00002_5e2a9b7d10c34c1e'}"
TR = "tests/test_ratelimit.py"


def pytest_run_1() -> str:
    f = [
        pytest_failure(
            TR,
            "test_burst_is_allowed_then_429",
            [CLIENT, FREE],
            "assert codes[:FREE_BURST]",
            [
                "assert [200, 200, 200, 200, 200, 200, ...] == [200, 200, 200, 200, 200, 200, ...]",
                "  ",
                "  At index 10 diff: 429 != 200",
                "  Use -v to get more diff",
            ],
        ),
        pytest_failure(
            TR,
            "test_429_body_and_headers",
            [CLIENT, FREE],
            'assert resp.headers["RateLimit-Limit"]',
            ["AssertionError: assert '10' == '20'", "  ", "  - 20", "  + 10"],
        ),
        pytest_failure(
            TR,
            "test_retry_after_is_whole_seconds",
            [CLIENT, FREE],
            'assert resp.headers["Retry-After"]',
            ["AssertionError: assert '1.0' == '1'", "  ", "  - 1", "  + 1.0"],
        ),
        pytest_failure(
            TR,
            "test_headers_present_on_success",
            [CLIENT, FREE],
            'assert first.headers["RateLimit-Limit"]',
            ["KeyError: 'RateLimit-Limit'"],
            kind="KeyError",
        ),
        pytest_failure(
            TR,
            "test_bucket_refills_over_time",
            [CLIENT, FREE],
            "assert codes == [200] * 5",
            [
                "assert [200, 200, 429, 429, 429, 429] == [200, 200, 200, 200, 200, 429]",
                "  ",
                "  At index 2 diff: 429 != 200",
                "  Use -v to get more diff",
            ],
        ),
        pytest_failure(
            TR,
            "test_limits_are_per_key",
            [CLIENT, FREE, PRO],
            "headers=pro_headers)).status_code == 200",
            ["assert 429 == 200", " +  where 429 = <Response [429 Too Many Requests]>.status_code"],
        ),
        pytest_failure(
            TR,
            "test_pro_plan_has_bigger_burst",
            [CLIENT, PRO],
            "assert codes.count(200) == 100",
            [
                "assert 10 == 100",
                " +  where 10 = <built-in method count of list object at 0x7f3e2c7b9e40>(200)",
                " +    where <built-in method count of list object at 0x7f3e2c7b9e40> = "
                "[200, 200, 200, 200, 200, 200, ...].count",
            ],
        ),
    ]
    summary = [
        f"FAILED {TR}::test_burst_is_allowed_then_429 - assert [200, 200, 200, 200, 200, 200, ...] == [200, 200, 200, 200, 200, 2...",
        f"FAILED {TR}::test_429_body_and_headers - AssertionError: assert '10' == '20'",
        f"FAILED {TR}::test_retry_after_is_whole_seconds - AssertionError: assert '1.0' == '1'",
        f"FAILED {TR}::test_headers_present_on_success - KeyError: 'RateLimit-Limit'",
        f"FAILED {TR}::test_bucket_refills_over_time - assert [200, 200, 429, 429, 429, 429] == [200, 200, 200, 200, 200, 429]",
        f"FAILED {TR}::test_limits_are_per_key - assert 429 == 200",
        f"FAILED {TR}::test_pro_plan_has_bigger_burst - assert 10 == 100",
    ]
    return pytest_quiet("FFFFFFF....", f, summary, "7 failed, 4 passed", 2.31)


def pytest_run_2() -> str:
    f = [
        pytest_failure(
            TR,
            "test_retry_after_is_whole_seconds",
            [CLIENT, FREE],
            'assert resp.headers["Retry-After"]',
            ["AssertionError: assert '0' == '1'", "  ", "  - 1", "  + 0"],
        )
    ]
    return pytest_quiet(
        "..F........",
        f,
        [f"FAILED {TR}::test_retry_after_is_whole_seconds - AssertionError: assert '0' == '1'"],
        "1 failed, 10 passed",
        1.87,
    )


FULL_MARKS = (
    "." * 9 + "." * 17 + "....F" + "." * 14 + "." * 14 + "." * 12 + "." * 11 + "." * 21 + "." * 26
)


def pytest_full_1() -> str:
    f = [
        pytest_failure(
            "tests/test_books.py",
            "test_list_books_pagination_walks_all_pages",
            [
                CLIENT,
                FREE,
                "session_factory = async_sessionmaker(class_='AsyncSession', bind=<sqlalchemy.ext.asyncio.engine.AsyncEngine object at 0x7f3e2c8f1d10>, expire_on_commit=False)",
            ],
            "assert resp.status_code == 200",
            ["assert 429 == 200", " +  where 429 = <Response [429 Too Many Requests]>.status_code"],
        )
    ]
    return pytest_quiet(
        FULL_MARKS,
        f,
        [
            "FAILED tests/test_books.py::test_list_books_pagination_walks_all_pages - assert 429 == 200"
        ],
        "1 failed, 128 passed",
        7.84,
    )


def implement(rec: Recording, main: Conversation) -> None:
    rec.wait(418)  # Maya reads the plan, pulls up the dashboard
    approval = (
        "Token bucket is fine, go ahead. Here's last night's request-rate panel for context, "
        "the red part is the scraper."
    )
    main.user(
        [
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": dashboard_png()},
            },
            text(approval),
        ]
    )
    topic_call(rec, approval, '{"isNewTopic": false, "title": null}')
    rec.wait(0.8)
    step(
        main,
        think="The panel shows a spike of roughly 5x the baseline request rate for about 35 minutes, which "
        "matches the issue. Approved. app/ratelimit.py first: Lua script, Limit/Decision dataclasses, "
        "RateLimiter with lazy plan loading through db.session_scope() (need to check app/db.py has "
        "it), and the middleware: key from request.state.api_key, else the client IP.",
        say="Starting with the limiter module.",
        calls=[
            todo(
                [
                    (
                        "Read issue #142 and map the request pipeline",
                        "Reading issue #142",
                        "completed",
                    ),
                    (
                        "Propose the design and wait for Maya's OK",
                        "Proposing the design",
                        "completed",
                    ),
                    (
                        "Implement token-bucket limiter in app/ratelimit.py",
                        "Implementing the token-bucket limiter",
                        "in_progress",
                    ),
                    (
                        "Register middleware and load plan limits at startup",
                        "Registering the middleware",
                        "pending",
                    ),
                    ("Write tests/test_ratelimit.py", "Writing rate limiter tests", "pending"),
                    (
                        "Run the full test suite, ruff and mypy",
                        "Running tests and linters",
                        "pending",
                    ),
                ]
            ),
            write("app/ratelimit.py", source("written/app/ratelimit.py")),
        ],
    )
    step(
        main,
        say="Now registering it in `create_app()` (inside the request-id middleware, so 429s still get an "
        "`X-Request-Id`) and adding the setting.",
        calls=[
            read("app/db.py"),
            multiedit(
                "app/main.py",
                [
                    (
                        "from app.logging import configure_logging\n",
                        "from app.logging import configure_logging\nfrom app.ratelimit import RateLimiter, RateLimitMiddleware\n",
                    ),
                    (
                        "    app.add_middleware(RequestIdMiddleware)\n",
                        "    if settings.rate_limit_enabled:\n"
                        "        # Added before RequestIdMiddleware so that it runs inside it: 429s keep X-Request-Id.\n"
                        "        app.add_middleware(RateLimitMiddleware, limiter=RateLimiter())\n"
                        "    app.add_middleware(RequestIdMiddleware)\n",
                    ),
                ],
            ),
            edit(
                "app/settings.py",
                "    api_key_cache_ttl: float = 30.0\n",
                "    api_key_cache_ttl: float = 30.0\n    rate_limit_enabled: bool = True\n",
            ),
        ],
    )
    step(
        main,
        say="Now the tests, following the python-testing skill: time-machine for time, fakeredis, no sleeps.",
        calls=[write("tests/test_ratelimit.py", source("written/tests/test_ratelimit.py"))],
    )
    step(
        main,
        calls=[
            bash(
                "uv run pytest tests/test_ratelimit.py -q",
                "Run rate limiter tests",
                pytest_run_1(),
                error=True,
                seconds=41.5,
            )
        ],
    )  # incl. Maya approving `uv run pytest`
    step(
        main,
        think="7 failures, but look at the numbers: burst stops at 10, RateLimit-Limit is '10', pro gets 429 "
        "after free is drained, pro burst is 10. 10 is the ANONYMOUS burst. So every request is going to "
        "the per-IP anonymous bucket: request.state.api_key is never set when the middleware runs, "
        "because resolve_api_key is a route dependency and BaseHTTPMiddleware runs before routing. "
        "Exactly the gotcha in CLAUDE.md, and the explorer flagged it too; I missed it.\n\n"
        "Real bugs on top of that:\n1. Headers only on 429: need them on success too.\n2. Retry-After "
        "is str(float) -> '1.0'. RFC 9110 wants an integer: ceil.\n\nFix: resolve the key in the "
        "middleware with lookup_key() and a session from session_scope(); the in-process cache makes "
        "it one query per key per 30 s. Add Decision.headers().",
        say="Most of these failures have one cause: every request lands in the anonymous per-IP bucket (burst 10). "
        "`request.state.api_key` is set by the auth *dependency*, which runs after middleware, so the "
        "middleware never sees it (the gotcha from CLAUDE.md). Two real bugs on top: no headers on "
        "successful responses, and `Retry-After` rendered as a float. Fixing all three.",
        calls=[
            multiedit(
                "app/ratelimit.py",
                [
                    ("import logging\nimport time\n", "import logging\nimport math\nimport time\n"),
                    (
                        "from app.cache import get_redis\n",
                        "from app.auth import HEADER, ApiKey, lookup_key\nfrom app.cache import get_redis\n",
                    ),
                    (
                        "    retry_after: float  # seconds\n\n\nANONYMOUS",
                        "    retry_after: float  # seconds\n\n"
                        "    def headers(self) -> dict[str, str]:\n"
                        '        headers = {"RateLimit-Limit": str(self.limit), "RateLimit-Remaining": str(self.remaining)}\n'
                        "        if not self.allowed:\n"
                        "            # RFC 9110: delay-seconds is a non-negative integer.\n"
                        '            headers["Retry-After"] = str(math.ceil(self.retry_after))\n'
                        "        return headers\n\n\nANONYMOUS",
                    ),
                    (
                        """        api_key = getattr(request.state, "api_key", None)
        if api_key is not None:""",
                        """        # Auth is a route dependency, so request.state.api_key is not set yet here:
        # resolve the key ourselves (lookup_key caches it in-process).
        api_key = await self._api_key(request)
        if api_key is not None:""",
                    ),
                    (
                        """                headers={
                    "Retry-After": str(decision.retry_after),
                    "RateLimit-Limit": str(decision.limit),
                    "RateLimit-Remaining": "0",
                },
            )
        return await call_next(request)
""",
                        """                headers=decision.headers(),
            )
        response = await call_next(request)
        response.headers.update(decision.headers())
        return response

    async def _api_key(self, request: Request) -> ApiKey | None:
        raw = request.headers.get(HEADER)
        if not raw:
            return None
        ttl = request.app.state.settings.api_key_cache_ttl
        async with session_scope() as session:
            return await lookup_key(session, raw, ttl)
""",
                    ),
                ],
            )
        ],
    )
    step(
        main,
        calls=[
            bash(
                "uv run pytest tests/test_ratelimit.py -q",
                "Run rate limiter tests",
                pytest_run_2(),
                error=True,
                seconds=3.9,
            )
        ],
    )
    step(
        main,
        think="Retry-After is '0' now. Free refills 1 token/s; 0.25 s after draining there are 0.25 tokens, "
        "so wait = 0.75 s and ceil gives 1. Unless wait arrives as 0... Redis converts Lua numbers to "
        "integer replies: a float return value is truncated toward zero. 0.75 -> 0. That's also why "
        "run 1 showed '1.0' for what should have been 1.75. Return it as a string from the script "
        "(tostring) and parse with float() in Python, which the code already does.",
        say="`Retry-After: 0`: Redis truncates Lua numbers to integers in script replies, so a 0.75 s wait "
        "comes back as `0`. Returning it as a string from the script:",
        calls=[
            edit(
                "app/ratelimit.py",
                "return {allowed, math.floor(tokens), wait}",
                "-- Lua numbers become integers in Redis replies (0.75 -> 0): return the wait as a string.\n"
                "return {allowed, math.floor(tokens), tostring(wait)}",
            )
        ],
    )
    step(
        main,
        calls=[
            bash(
                "uv run pytest tests/test_ratelimit.py -q",
                "Run rate limiter tests",
                pytest_quiet("...........", [], [], "11 passed", 1.79),
                seconds=3.6,
            )
        ],
    )
    step(
        main,
        say="All 11 pass. Full suite now:",
        calls=[
            bash(
                "uv run pytest -q",
                "Run the full test suite",
                pytest_full_1(),
                error=True,
                seconds=9.6,
            )
        ],
    )
    step(
        main,
        think="The pagination test does 23 requests with the free key (burst 20). Other test modules should "
        "not be affected by the limiter at all; the cleanest fix: the limiter is off in the shared "
        "settings fixture and test_ratelimit.py turns it on by overriding the `settings` fixture.",
        say="The pagination test makes 23 requests with a free key and now hits the limit. The limiter shouldn't "
        "interfere with unrelated tests: I'll disable it in the shared `settings` fixture and enable it "
        "only in `tests/test_ratelimit.py`.",
        calls=[
            edit(
                "tests/conftest.py",
                "        api_key_cache_ttl=0.0,\n    )",
                "        api_key_cache_ttl=0.0,\n        rate_limit_enabled=False,  # on in tests/test_ratelimit.py\n    )",
            ),
            multiedit(
                TR,
                [
                    (
                        "from app.ratelimit import Limit, RateLimiter\n",
                        "from app.ratelimit import Limit, RateLimiter\nfrom app.settings import Settings\n",
                    ),
                    (
                        'pytestmark = pytest.mark.usefixtures("app")\n',
                        'pytestmark = pytest.mark.usefixtures("app")\n\n\n@pytest.fixture\n'
                        "def settings(settings: Settings) -> Settings:\n"
                        '    """The limiter is off in the shared fixture (tests/conftest.py); on here."""\n'
                        '    return settings.model_copy(update={"rate_limit_enabled": True})\n',
                    ),
                ],
            ),
        ],
    )
    step(
        main,
        calls=[
            bash(
                "uv run pytest -q",
                "Run the full test suite",
                pytest_quiet(FULL_MARKS.replace("F", "."), [], [], "129 passed", 7.62),
                seconds=9.2,
            )
        ],
    )
    step(
        main,
        calls=[
            bash(
                "uv run ruff check . && uv run ruff format --check . && uv run mypy app",
                "Lint, format check and type check",
                "All checks passed!\n58 files already formatted\nSuccess: no issues found in 21 source files",
                seconds=6.4,
            ),
            todo(
                [
                    (
                        "Read issue #142 and map the request pipeline",
                        "Reading issue #142",
                        "completed",
                    ),
                    (
                        "Propose the design and wait for Maya's OK",
                        "Proposing the design",
                        "completed",
                    ),
                    (
                        "Implement token-bucket limiter in app/ratelimit.py",
                        "Implementing the token-bucket limiter",
                        "completed",
                    ),
                    (
                        "Register middleware and load plan limits at startup",
                        "Registering the middleware",
                        "completed",
                    ),
                    ("Write tests/test_ratelimit.py", "Writing rate limiter tests", "completed"),
                    (
                        "Run the full test suite, ruff and mypy",
                        "Running tests and linters",
                        "completed",
                    ),
                ]
            ),
        ],
    )
    step(main, say=load("conversation/implementation-done.md"))
