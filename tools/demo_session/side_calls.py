"""The side conversations: topic detection (Haiku, no tools) and the Explore sub-agent."""

from __future__ import annotations

from .calls import Call, bash, read, step, text
from .prompts import explore_tools, system_blocks
from .recording import Conversation, Recording
from .setting import HAIKU, REPO
from .texts import load


def topic_call(rec: Recording, message: str, answer: str) -> None:
    conv = Conversation(
        rec,
        "topic",
        system_blocks("topic", HAIKU, "Haiku 4.5"),
        [],
        model=HAIKU,
        max_tokens=512,
        cached=False,
    )
    conv.user(message)
    conv.call([text(answer)])


def explore_agent(rec: Recording, prompt: str) -> None:
    """The Task sub-agent: its own system prompt, read-only tools, 6 requests."""
    sub = Conversation(rec, "explore", system_blocks("explore"), explore_tools())
    sub.user(prompt)
    python_files = "\n".join(
        f"{REPO}/{p}" for p in load("results/glob-python-files.txt").split("\n")
    )
    step(
        sub,
        say="I'll start with the layout and the recent history of the entry points.",
        calls=[
            Call("Glob", {"pattern": "**/*.py"}, python_files, seconds=0.1),
            bash(
                "git -C /home/maya/code/shelfwise log --oneline -8 -- app/main.py app/auth.py app/cache.py",
                "Recent history of entry points",
                load("results/git-log-entry-points.txt"),
                seconds=0.2,
            ),
        ],
    )
    step(sub, calls=[read("app/main.py"), read("app/auth.py")])
    step(
        sub,
        say="Now how Redis is used and whether anything touches the plan limits.",
        calls=[
            Call(
                "Grep",
                {
                    "pattern": "get_redis|set_redis|redis\\.",
                    "path": f"{REPO}/app",
                    "output_mode": "content",
                    "-n": True,
                },
                load("results/grep-redis.txt", repo=REPO),
                seconds=0.2,
            ),
            Call(
                "Grep",
                {
                    "pattern": "requests_per_minute|burst|rate.?limit",
                    "path": REPO,
                    "output_mode": "content",
                    "-n": True,
                    "-i": True,
                },
                load("results/grep-plan-limits.txt", repo=REPO),
                seconds=0.3,
            ),
        ],
    )
    step(
        sub,
        calls=[read("app/cache.py"), read("app/errors.py"), read("tests/conftest.py", limit=60)],
    )
    step(
        sub,
        calls=[
            bash(
                "grep -n 'lua\\|fakeredis' /home/maya/code/shelfwise/pyproject.toml /home/maya/code/shelfwise/uv.lock | head -5",
                "Check fakeredis Lua support",
                load("results/grep-fakeredis.txt", repo=REPO),
                seconds=0.1,
            )
        ],
    )
    step(sub, say=load("results/explore-report.md"))
