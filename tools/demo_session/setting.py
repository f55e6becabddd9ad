"""Who, where and when: the models, the clock, the paths, the identifiers, the random seed."""

from __future__ import annotations

import hashlib
import random
from datetime import UTC, datetime

MODEL = "claude-sonnet-4-5-20250929"
HAIKU = "claude-haiku-4-5-20251001"
START = datetime(2025, 11, 18, 13, 42, 7, 318000, tzinfo=UTC)
HOME = "/home/maya"
REPO = "/home/maya/code/shelfwise"
SESSION_ID = "5b0d7f3e-2c41-4a8e-9d55-7e1f0c93a6b2"
USER_ID = (
    "user_" + hashlib.sha256(b"maya@shelfwise-demo").hexdigest() + "_account__session_" + SESSION_ID
)

# One generator for the whole session (cache misses, latencies, pauses): the calls
# must happen in the same order for the same bytes.
rng = random.Random(20251118)


def ident(prefix: str, seed: str, n: int = 24) -> str:
    """An id that looks like Anthropic's (``msg_01...``, ``toolu_01...``), derived from ``seed``."""
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz123456789"
    digest = hashlib.sha256(seed.encode()).digest()
    return prefix + "".join(alphabet[b % len(alphabet)] for b in digest[:n])


def iso(t: datetime) -> str:
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")
