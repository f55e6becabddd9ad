"""14:12-14:40: the incident log replayed against the limiter and read raw; then the context is full and compacted."""

from __future__ import annotations

import re
from typing import Any

from .calls import FILES, Call, bash, numbered, read, step, text, write
from .incident import (
    LOG,
    LOG_PATH,
    SCRAPER_KEY,
    SCRAPER_KEY_2,
    fill,
    first_line_of,
    key_counts,
    replay,
    replay_numbers,
)
from .prompts import SYSTEM_MESSAGE_TEXT, memory_reminder, system_blocks
from .recording import Conversation, Recording
from .setting import REPO
from .texts import load, source


def replay_log(rec: Recording, main: Conversation) -> None:
    """Replay last night's access log against the limiter, then dig into the raw log."""
    rec.wait(912)  # Maya reviews the change in her editor
    ask = (
        "Nice. Before we ship: how would this have behaved last night? The ingress log of the incident "
        "is in logs/access-2025-11-17.log. Replay it against the limiter offline and tell me which keys "
        "would have been throttled and how much. I especially want to know we wouldn't have hurt the "
        "partners or the app."
    )
    main.user(ask)
    rec.wait(1.0)
    whole_log = "\n".join(LOG) + "\n"
    step(
        main,
        say="Let me look at the log's size and format first.",
        calls=[
            bash(
                f"wc -l {LOG_PATH} && head -n 5 {LOG_PATH}",
                "Log size and format",
                f"{len(LOG)} {LOG_PATH}\n" + "\n".join(LOG[:5]),
                seconds=0.2,
            ),
            bash(
                f"awk '{{print $10}}' {LOG_PATH} | sort | uniq -c | sort -rn",
                "Requests per API key",
                key_counts(),
                seconds=0.6,
            ),
        ],
    )
    step(
        main,
        think="47k lines, three hours. A script is the right tool: simulate one bucket per caller with the "
        "same arithmetic as the Lua script, skip health probes, and print per-caller requests, "
        "rejections and the paths rejected. Reuse Limit and ANONYMOUS from app.ratelimit so it stays "
        "in sync. Plans: hardcode the four plans as defaults (same as staging), optional JSON override.",
        say="Writing a small replay script that simulates the buckets with the same arithmetic as the Lua script.",
        calls=[write("scripts/replay_ratelimit.py", source("written/scripts/replay_ratelimit.py"))],
    )
    step(
        main,
        calls=[
            bash(
                f"uv run python scripts/replay_ratelimit.py {LOG_PATH}",
                "Replay the incident log",
                replay(),
                seconds=2.7,
            )
        ],
    )
    scraper_at = first_line_of(SCRAPER_KEY)
    step(
        main,
        think="Both scraper keys would have been cut to ~11 % of their traffic; nobody else is throttled, "
        "including the partner sync and the BFF. Before I report, I want to see the start of the "
        "spike: is the scraper the only thing going on, do latencies rise right away, does it come "
        "from several IPs?",
        say="The numbers look clean. Let me look at the raw traffic around the start of the spike to be sure.",
        calls=[read(LOG_PATH, whole_log, offset=scraper_at - 40, limit=300)],
    )
    switch_at = first_line_of(SCRAPER_KEY_2)
    step(
        main,
        think="Three IPs (198.51.100.23-25) in rotation, python-requests, search with size=50 and random "
        "deep pages, cursor walks on /v1/books. Search latency climbs from ~30 ms to several hundred "
        "ms within a minute. Now the key switch at 22:58.",
        calls=[read(LOG_PATH, whole_log, offset=switch_at - 150, limit=300)],
    )
    errors = [f"{i}:{line}" for i, line in enumerate(LOG, 1) if " 503 " in line or " 504 " in line]
    step(
        main,
        say="Now the errors: who got the 503/504s?",
        calls=[
            Call(
                "Grep",
                {
                    "pattern": " 50[34] ",
                    "path": f"{REPO}/{LOG_PATH}",
                    "output_mode": "content",
                    "-n": True,
                    "head_limit": 250,
                },
                "\n".join(errors[:250]),
                seconds=0.4,
            )
        ],
    )
    bff_pattern = re.compile(r"T22:4[1-9].*key=sk_live_bff0a1c2")
    bff_errors = [f"{i}:{line}" for i, line in enumerate(LOG, 1) if bff_pattern.search(line)][:200]
    step(
        main,
        think="Most 503/504 lines are the scraper's own searches, but the BFF shows up too. Let me see the "
        "app's traffic during the spike specifically.",
        calls=[
            Call(
                "Grep",
                {
                    "pattern": bff_pattern.pattern,
                    "path": f"{REPO}/{LOG_PATH}",
                    "output_mode": "content",
                    "-n": True,
                    "head_limit": 200,
                },
                "\n".join(bff_errors),
                seconds=0.4,
            )
        ],
    )
    sync_at = next(
        i for i, line in enumerate(LOG, 1) if "T21:30:" in line and "sk_live_4be81d07" in line
    )
    step(
        main,
        think="The app's requests during the spike got slow (search especially) and some 503s. Maya asked "
        "about the partners explicitly: the bookshop sync runs at 21:30. Let me look at it to "
        "understand its burst shape relative to the partner burst of 500.",
        say="Checking the bookshop partner's sync burst at 21:30, since you asked about partners.",
        calls=[read(LOG_PATH, whole_log, offset=sync_at - 10, limit=300)],
    )
    last = [f"{i}:{line}" for i, line in enumerate(LOG, 1) if SCRAPER_KEY_2 in line][-4:]
    step(
        main,
        say="Last checks: when the spike ended, and who owns these keys in staging.",
        calls=[
            bash(
                f"grep -n '{SCRAPER_KEY_2}' {LOG_PATH} | tail -n 4",
                "Last requests of the second scraper key",
                "\n".join(last),
                seconds=0.3,
            ),
            Call(
                "mcp__postgres__query",
                {
                    "sql": "SELECT k.key_prefix, k.plan, k.label, k.owner_id, "
                    "u.created_at AS owner_created_at, k.created_at AS key_created_at, "
                    "k.revoked_at, (SELECT count(*) - 1 FROM api_keys o WHERE o.owner_id = k.owner_id) "
                    "AS other_keys_of_owner FROM api_keys k JOIN users u ON u.id = k.owner_id "
                    "WHERE k.key_prefix IN ('sk_live_9f2c71ab', 'sk_live_e07a55c9', "
                    "'sk_live_4be81d07', 'sk_live_c3d9e4f1') ORDER BY k.created_at DESC"
                },
                load("results/postgres-scraper-keys.json"),
                seconds=0.5,
            ),
        ],
    )
    step(main, say=fill(load("conversation/replay-report.md"), replay_numbers()))


def summary_message() -> str:
    """The user message that replaces the history: the summary without its tags, framed."""
    return fill(SUMMARY_TEMPLATE, replay_numbers())


COMPACT_SUMMARY = load("conversation/compaction-summary.md")
SUMMARY_TEMPLATE = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The summary below covers the earlier portion of the conversation.\n\n"
    + COMPACT_SUMMARY.replace("<analysis>\n", "Analysis:\n")
    .replace("\n</analysis>\n\n<summary>\n", "\n\nSummary:\n")
    .replace("\n</summary>", "")
    + "\n\nContinue from where the conversation left off, without asking the user to repeat anything; "
    "the user's latest message follows."
)


def restored(path: str) -> dict[str, Any]:
    return text(
        f"<system-reminder>\nRe-attached after the conversation was summarised: {REPO}/{path} "
        f"(read or written earlier in this session). Current content:\n{numbered(FILES[path])}\n"
        "</system-reminder>"
    )


def compact(rec: Recording, main: Conversation, next_message: str) -> None:
    """Claude Code's auto-compaction: a summary call, then the history replaced by the summary."""
    rec.wait(3.1)
    summarizer = Conversation(
        rec, "compact", system_blocks("compact"), [], max_tokens=20000, cached=False
    )
    summarizer.messages = [dict(m) for m in main.messages]
    summarizer.user(load("conversation/compaction-request.md"))
    summarizer.call([text(fill(COMPACT_SUMMARY, replay_numbers()))])
    rec.wait(1.4)
    main.reset([{"role": "user", "content": [text(memory_reminder()), text(summary_message())]}])
    main.system_message(SYSTEM_MESSAGE_TEXT)
    main.user(
        [
            restored("app/ratelimit.py"),
            restored("tests/test_ratelimit.py"),
            restored("scripts/replay_ratelimit.py"),
            text(next_message),
        ]
    )
