"""The session, in order: the request, reading and delegating, the plan; then the chapters.

13:42 Maya asks for per-key rate limiting (issue #142); the agent reads the
issue, an Explore sub-agent maps the code, the agent checks the database, loads
a skill, reads the RateLimit draft and proposes a design. Then ``implement``,
``replay`` (ending in the compaction) and ``finish``.
"""

from __future__ import annotations

from .calls import FILES, ORIGINAL, Call, read, step, text, todo
from .finish import finish
from .implement import implement
from .prompts import SYSTEM_MESSAGE_TEXT, main_tools, memory_reminder, system_blocks
from .recording import Conversation, Recording
from .replay import compact, replay_log
from .setting import HOME
from .side_calls import explore_agent, topic_call
from .texts import load


def build() -> Recording:
    rec = Recording()
    ORIGINAL.clear()
    ORIGINAL.update(FILES)
    main = Conversation(rec, "main", system_blocks("main"), main_tools(), thinking=10000)

    # -- 13:42 the request -----------------------------------------------------------
    first = (
        "We got hammered by a scraper last night, see issue #142 (shelfwise/shelfwise-api). "
        "Add rate limiting to the public API: per API key, limits from the plan the key is on, "
        "proper 429s with Retry-After and the RateLimit headers. With tests. Read the issue first, "
        "there are a few constraints from ops in the comments."
    )
    main.user([text(memory_reminder()), text(first)])
    main.system_message(SYSTEM_MESSAGE_TEXT)
    topic_call(rec, first, '{"isNewTopic": true, "title": "Per-key API rate limiting"}')
    rec.wait(1.2)

    explore_prompt = (
        "Map the request pipeline of the FastAPI service in /home/maya/code/shelfwise (medium thoroughness). "
        "I need to add per-API-key rate limiting. Find and report, with file:line references: where the app "
        "is built and middleware registered; how API keys are authenticated and where the key's plan becomes "
        "available on the request; how Redis is accessed (client creation, test fakes, Lua/script support); "
        "whether anything already enforces the plans table's requests_per_minute/burst; how the tests build "
        "the app and seed keys and plans. Read-only: do not modify anything."
    )
    issue = Call(
        "mcp__github__get_issue",
        {"owner": "shelfwise", "repo": "shelfwise-api", "issue_number": 142},
        load("results/github-issue-142.json"),
        seconds=0.8,
    )
    task = Call(
        "Task",
        {
            "description": "Map request pipeline",
            "prompt": explore_prompt,
            "subagent_type": "Explore",
        },
        load("results/explore-report.md"),
        seconds=0.5,
    )
    step(
        main,
        think="The user wants per-key rate limiting driven by the plan of the key. First: the issue for the "
        "constraints, and a map of the codebase. I can read the issue myself and delegate the "
        "exploration of the request pipeline to an Explore agent in parallel, so my context stays "
        "small.",
        say="I'll read the issue and, in parallel, have an explorer map the request pipeline.",
        calls=[issue, task],
        run=lambda: explore_agent(rec, explore_prompt),
    )

    step(
        main,
        think="Constraints from the issue comments:\n- limits from `plans`, loaded at startup (no Postgres "
        "per request);\n- /healthz and /readyz never limited (kubelet restarts pods on 429);\n- fail "
        "open if Redis is down;\n- unauthenticated traffic: small per-IP limit;\n- Retry-After + "
        "RateLimit-* headers.\n\nI should check the plans table in staging to make sure the numbers "
        "match tomasz's comment, and the api_keys schema.",
        say="Constraints are clear. Let me check the actual plan limits in the staging database and set up a plan.",
        calls=[
            Call(
                "mcp__postgres__query",
                {
                    "sql": "SELECT p.name, p.requests_per_minute, p.burst, p.monthly_quota, "
                    "count(k.id) AS keys FROM plans p LEFT JOIN api_keys k ON k.plan = p.name "
                    "AND k.revoked_at IS NULL GROUP BY p.name ORDER BY p.requests_per_minute"
                },
                load("results/postgres-plans.json"),
                seconds=0.4,
            ),
            Call(
                "mcp__postgres__describe_table",
                {"table": "api_keys"},
                load("results/postgres-describe-api_keys.json"),
                seconds=0.3,
            ),
            todo(
                [
                    (
                        "Read issue #142 and map the request pipeline",
                        "Reading issue #142 and mapping the request pipeline",
                        "completed",
                    ),
                    (
                        "Propose the design and wait for Maya's OK",
                        "Proposing the design",
                        "in_progress",
                    ),
                    (
                        "Implement token-bucket limiter in app/ratelimit.py",
                        "Implementing the token-bucket limiter",
                        "pending",
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
        ],
    )

    step(main, calls=[read("app/settings.py"), read("pyproject.toml")])
    step(
        main,
        say="Loading the team's testing conventions before I design the tests.",
        calls=[
            Call(
                "Skill",
                {"skill": "python-testing"},
                load("skills/python-testing.md", home=HOME),
                seconds=0.1,
            )
        ],
    )
    step(main, calls=[read("tests/conftest.py"), read("tests/test_books.py")])
    step(
        main,
        think="For the headers: the IETF draft changed the field names over time. Let me check what the "
        "current draft says vs what clients use, and whether Retry-After may be fractional.",
        calls=[
            Call(
                "WebFetch",
                {
                    "url": "https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/",
                    "prompt": "Which header fields does the current draft define, what did older "
                    "drafts use (RateLimit-Limit/Remaining/Reset), and what are the rules "
                    "for Retry-After values in 429 responses?",
                },
                load("results/webfetch-ratelimit-headers.md"),
                seconds=3.1,
            )
        ],
    )
    step(
        main,
        think=load("conversation/design-thinking.md"),
        say=load("conversation/design-proposal.md"),
    )
    implement(rec, main)
    replay_log(rec, main)
    rec.wait(2094)  # Maya discusses the numbers with ops
    compact(
        rec,
        main,
        "Agreed, search is what hurt. Make /v1/search cost 5 units and /v1/search/authors 2, "
        "everything else 1. Keep it simple, a table in ratelimit.py is fine. Re-run the replay "
        "with the costs so we see nobody legit gets hurt.",
    )
    finish(rec, main)
    return rec
