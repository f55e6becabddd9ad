"""Replay an access log against the rate limiter, offline, and report what it would have rejected.

    uv run python scripts/replay_ratelimit.py logs/access-2025-11-17.log [--plans plans.json]

The log format is the one our ingress writes (see app/logging.py):
    <iso time> <level> access <client ip> <method> <path> <status> <ms>ms key=<prefix> plan=<plan> ua="<user agent>"
Buckets are simulated in memory with the same arithmetic as the Lua script in app/ratelimit.py.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime

from app.ratelimit import ANONYMOUS, Limit

LINE = re.compile(
    r"^(?P<ts>\S+) \S+ +access (?P<ip>\S+) (?P<method>[A-Z]+) (?P<path>\S+) (?P<status>\d{3}) "
    r"(?P<ms>\d+)ms key=(?P<key>\S+) plan=(?P<plan>\S+)"
)

DEFAULT_PLANS = {
    "free": Limit(60, 20),
    "pro": Limit(600, 100),
    "partner": Limit(3000, 500),
    "internal": Limit(10_000, 2000),
}


@dataclass
class Bucket:
    tokens: float
    ts: float


def replay(lines: list[str], plans: dict[str, Limit]) -> tuple[Counter[str], Counter[str], dict[str, Counter[str]]]:
    buckets: dict[str, Bucket] = {}
    seen: Counter[str] = Counter()
    rejected: Counter[str] = Counter()
    paths: dict[str, Counter[str]] = defaultdict(Counter)
    for line in lines:
        m = LINE.match(line)
        if not m or m["path"] in ("/healthz", "/readyz"):
            continue
        who = m["key"] if m["key"] != "-" else f"ip:{m['ip']}"
        limit = plans.get(m["plan"], ANONYMOUS)
        now = datetime.fromisoformat(m["ts"].replace("Z", "+00:00")).timestamp()
        b = buckets.setdefault(who, Bucket(limit.burst, now))
        b.tokens = min(limit.burst, b.tokens + max(0.0, now - b.ts) * limit.rate)
        b.ts = now
        seen[who] += 1
        if b.tokens >= 1:
            b.tokens -= 1
        else:
            rejected[who] += 1
            paths[who][m["path"].split("?")[0]] += 1
    return seen, rejected, paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log")
    parser.add_argument("--plans", help="JSON file: {plan: [requests_per_minute, burst]}")
    args = parser.parse_args()
    plans = DEFAULT_PLANS
    if args.plans:
        with open(args.plans) as f:
            plans = {name: Limit(*v) for name, v in json.load(f).items()}
    with open(args.log) as f:
        seen, rejected, paths = replay(f.readlines(), plans)
    print(f"{'caller':<24} {'requests':>9} {'rejected':>9} {'share':>7}  top rejected paths")
    for who, total in seen.most_common(15):
        r = rejected[who]
        top = ", ".join(f"{p} ({c})" for p, c in paths[who].most_common(3))
        print(f"{who:<24} {total:>9} {r:>9} {r / total:>7.1%}  {top}")
    print(f"\n{sum(seen.values())} requests, {sum(rejected.values())} would have been rejected "
          f"({sum(rejected.values()) / max(1, sum(seen.values())):.1%}) across {len(seen)} callers")


if __name__ == "__main__":
    main()
