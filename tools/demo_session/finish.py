"""After the compaction: search costs more, a mypy slip, then the commit, the pull request and the issue comment."""

from __future__ import annotations

from .calls import Call, bash, edit, multiedit, read, step, text
from .implement import FULL_MARKS, TR
from .incident import LOG_PATH, fill, replay, replay_numbers
from .outputs import diff_stat, git_diff, line_of, pytest_quiet
from .prompts import GIT_STATUS
from .recording import Conversation, Recording
from .side_calls import topic_call
from .texts import load, source


def finish(rec: Recording, main: Conversation) -> None:
    step(
        main,
        think="Continuing from the summary. Maya wants /v1/search to cost 5 units, /v1/search/authors 2, "
        "everything else 1, as a simple table in ratelimit.py. hit() already takes a cost. I need the "
        "exact route paths: re-read app/routes/search.py since the summary replaced my earlier reads.",
        say="I'll add a small cost table to the limiter. First, the exact search routes:",
        calls=[read("app/routes/search.py")],
    )
    step(
        main,
        say="Adding the cost table and passing the cost to the bucket.",
        calls=[
            multiedit(
                "app/ratelimit.py",
                [
                    (
                        'EXEMPT_PATHS = frozenset({"/healthz", "/readyz", "/docs", "/redoc", "/openapi.json"})\n',
                        'EXEMPT_PATHS = frozenset({"/healthz", "/readyz", "/docs", "/redoc", "/openapi.json"})\n\n'
                        "# Quota units per request, by path prefix (first match wins). Search runs a ts_rank and two\n"
                        "# facet aggregations on every cache miss: it is what took the database down on Nov 17.\n"
                        'ROUTE_COSTS = (\n    ("/v1/search/authors", 2),\n    ("/v1/search", 5),\n)\n\n\n'
                        "def route_cost(path):\n"
                        "    return next((cost for prefix, cost in ROUTE_COSTS if path.startswith(prefix)), 1)\n",
                    ),
                    (
                        """        if api_key is not None:
            decision = await self.limiter.hit(f"key:{api_key.id}", api_key.plan)
        else:
            host = request.client.host if request.client else "unknown"
            decision = await self.limiter.hit(f"ip:{host}", None)""",
                        """        cost = route_cost(request.url.path)
        if api_key is not None:
            decision = await self.limiter.hit(f"key:{api_key.id}", api_key.plan, cost)
        else:
            host = request.client.host if request.client else "unknown"
            decision = await self.limiter.hit(f"ip:{host}", None, cost)""",
                    ),
                ],
            )
        ],
        after=[
            text(
                "<system-reminder>\nPostToolUse:MultiEdit hook: `uv run ruff format app/ratelimit.py` "
                "ran after your edit: 1 file left unchanged.\n</system-reminder>"
            )
        ],
    )
    step(
        main,
        think="Tests: /v1/search uses websearch_to_tsquery and ts_rank_cd, which the SQLite test database "
        "does not have (tests/test_search.py must stub them somewhere). Test the cost through "
        "/v1/search/authors (cost 2, plain ILIKE, works on SQLite) plus a parametrized unit test "
        "of route_cost().",
        calls=[
            multiedit(
                TR,
                [
                    (
                        "from app.ratelimit import Limit, RateLimiter\n",
                        "from app.ratelimit import Limit, RateLimiter, route_cost\n",
                    ),
                    (
                        "    assert decision.remaining == 20\n",
                        "    assert decision.remaining == 20\n"
                        + source("written/search-cost-tests.py"),
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
                pytest_quiet("." * 16, [], [], "16 passed", 1.94),
                seconds=3.8,
            )
        ],
    )
    fn = line_of("app/ratelimit.py", "def route_cost(path):")
    use = line_of("app/ratelimit.py", "cost = route_cost(request.url.path)")
    step(
        main,
        calls=[
            bash(
                "uv run ruff check . && uv run ruff format --check . && uv run mypy app",
                "Lint, format check and type check",
                "All checks passed!\n60 files already formatted\n"
                f"app/ratelimit.py:{fn}: error: Function is missing a type annotation  [no-untyped-def]\n"
                f'app/ratelimit.py:{use}: error: Call to untyped function "route_cost" in typed '
                "context  [no-untyped-call]\nFound 2 errors in 1 file (checked 21 source files)",
                error=True,
                seconds=6.8,
            )
        ],
    )
    step(
        main,
        say="I left `route_cost` unannotated; fixing.",
        calls=[
            edit(
                "app/ratelimit.py", "def route_cost(path):\n", "def route_cost(path: str) -> int:\n"
            )
        ],
    )
    step(
        main,
        calls=[
            bash(
                "uv run pytest -q && uv run mypy app",
                "Full test suite and type check",
                pytest_quiet(FULL_MARKS.replace("F", ".") + "." * 5, [], [], "134 passed", 7.91)
                + "\nSuccess: no issues found in 21 source files",
                seconds=15.2,
            )
        ],
    )
    step(
        main,
        think="Now the replay with costs. The script should not duplicate the table: import route_cost from "
        "app.ratelimit, like it already does for Limit and ANONYMOUS.",
        say="Now the replay with the costs; the script reuses `route_cost` so it can't drift from the app.",
        calls=[
            multiedit(
                "scripts/replay_ratelimit.py",
                [
                    (
                        "from app.ratelimit import ANONYMOUS, Limit\n",
                        "from app.ratelimit import ANONYMOUS, Limit, route_cost\n",
                    ),
                    (
                        "        if b.tokens >= 1:\n            b.tokens -= 1\n",
                        '        cost = route_cost(m["path"])\n        if b.tokens >= cost:\n            b.tokens -= cost\n',
                    ),
                ],
            )
        ],
    )
    costs = {"/v1/search/authors": 2, "/v1/search": 5}
    step(
        main,
        calls=[
            bash(
                f"uv run python scripts/replay_ratelimit.py {LOG_PATH}",
                "Replay the incident log with route costs",
                replay(costs),
                seconds=2.9,
            )
        ],
    )
    nums = replay_numbers(costs)
    extra = ""
    if nums["@RESTR@"] != "0":
        extra = (
            f" The only other rejections are {nums['@RESTR@']} requests from small free keys doing "
            "bursts of searches, which is the point."
        )
    step(main, say=fill(load("conversation/costs-done.md", extra=extra), nums))

    rec.wait(603)  # reviewing the cost change
    pr_ask = (
        "Great. Commit on a branch, push, and open a PR against main that closes #142. "
        "Also leave a comment on the issue with the replay numbers."
    )
    main.user(pr_ask)
    topic_call(rec, pr_ask, '{"isNewTopic": false, "title": null}')
    rec.wait(0.7)
    changed = ["app/main.py", "app/settings.py", "tests/conftest.py"]
    new = ["app/ratelimit.py", "scripts/replay_ratelimit.py", "tests/test_ratelimit.py"]
    step(
        main,
        calls=[
            bash(
                "git status",
                "Show working tree status",
                load("results/git-status.txt"),
                seconds=0.1,
            ),
            bash("git diff --stat", "Show diff summary", diff_stat(changed), seconds=0.1),
            bash(
                "git log --oneline -5",
                "Show recent commits",
                GIT_STATUS.split("Recent commits:\n")[1],
                seconds=0.1,
            ),
        ],
    )
    files = sorted(changed + new)
    step(
        main,
        think="notes/incident-2025-11-17.md was untracked before I started: it's Maya's, not part of this "
        "change. Stage only the six files, review the staged diff, then commit.",
        say="Staging the six files of the change (leaving your `notes/incident-2025-11-17.md` out) and reviewing the staged diff:",
        calls=[
            bash(
                f"git add {' '.join(files)} && git diff --cached",
                "Stage the change and show the staged diff",
                git_diff(files),
                seconds=0.3,
            )
        ],
    )
    message = load("conversation/commit-message.txt")
    step(
        main,
        calls=[
            bash(
                f"git checkout -b maya/per-key-rate-limits && git commit -m \"$(cat <<'EOF'\n{message}\nEOF\n)\" "
                "&& git push -u origin maya/per-key-rate-limits",
                "Create branch, commit and push",
                load("results/git-commit-and-push.txt", stat=diff_stat(files).split("\n")[-1]),
                seconds=11.0,
            )
        ],
    )
    n0 = replay_numbers(costs)
    body = fill(load("conversation/pull-request-body.md"), n0)
    pr = Call(
        "mcp__github__create_pull_request",
        {
            "owner": "shelfwise",
            "repo": "shelfwise-api",
            "title": "Add per-API-key rate limiting (#142)",
            "body": body,
            "head": "maya/per-key-rate-limits",
            "base": "main",
        },
        load("results/github-create-pull-request.json"),
        seconds=1.4,
    )
    comment = fill(load("conversation/issue-comment.md"), n0)
    note = Call(
        "mcp__github__add_issue_comment",
        {"owner": "shelfwise", "repo": "shelfwise-api", "issue_number": 142, "body": comment},
        load("results/github-add-issue-comment.json"),
        seconds=1.1,
    )
    step(main, say="Pushed. Opening the PR and commenting on the issue.", calls=[pr, note])
    step(main, say=load("conversation/pull-request-open.md"))
