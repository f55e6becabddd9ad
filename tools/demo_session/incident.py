"""Last night's incident: the ingress access log (generated, deterministic) and the replay of the limiter on it."""

from __future__ import annotations

import base64
import random
from datetime import UTC, datetime, timedelta
from functools import cache

from .setting import iso

SCRAPER_KEY = "sk_live_9f2c71ab"
SCRAPER_KEY_2 = "sk_live_e07a55c9"
LOG_PATH = "logs/access-2025-11-17.log"

_WORDS = (
    "dune",
    "foundation",
    "hyperion",
    "neuromancer",
    "solaris",
    "ubik",
    "kindred",
    "piranesi",
    "circe",
    "gideon",
    "lagoon",
    "binti",
    "annihilation",
    "ancillary",
    "exhalation",
    "blindsight",
    "accelerando",
    "embassytown",
    "perdido",
    "parable",
    "wool",
    "silo",
    "jade city",
    "the expanse",
    "murderbot",
    "red rising",
    "earthsea",
    "the fifth season",
    "left hand of darkness",
    "the dispossessed",
    "station eleven",
)
_APP_PATHS = (
    "/v1/books/{b}",
    "/v1/books/{b}/similar",
    "/v1/shelves/{s}",
    "/v1/shelves/{s}/entries",
    "/v1/search?q={q}",
    "/v1/books/by-isbn/978{i}",
    "/v1/shelves",
    "/v1/imports/{j}",
)
_CALLERS = [
    # key, plan, ips, requests per second, user agent, paths
    (
        "sk_live_bff0a1c2",
        "internal",
        ("10.0.3.14", "10.0.3.15"),
        1.35,
        "shelfwise-bff/3.8.1",
        _APP_PATHS,
    ),
    (
        "sk_live_4be81d07",
        "partner",
        ("203.0.113.40",),
        0.22,
        "bookshop-sync/1.4 (+https://bookshop.example/bot)",
        ("/v1/books?cursor={c}&limit=100", "/v1/books/by-isbn/978{i}"),
    ),
    (
        "sk_live_c3d9e4f1",
        "pro",
        ("192.0.2.77", "192.0.2.78"),
        0.31,
        "ReadMoreApp/5.2 okhttp/4.12.0",
        ("/v1/search?q={q}", "/v1/books/{b}", "/v1/search/authors?q={q}"),
    ),
    (
        "sk_live_71aa0b3e",
        "pro",
        ("198.18.4.9",),
        0.12,
        "LitListBot/0.9",
        ("/v1/books/{b}", "/v1/books/{b}/similar"),
    ),
    (
        "sk_live_2d5f8c60",
        "free",
        ("203.0.113.201",),
        0.03,
        "curl/8.5.0",
        ("/v1/books/{b}", "/v1/search?q={q}"),
    ),
    (
        "sk_live_b81e3f22",
        "free",
        ("100.64.12.5",),
        0.05,
        "python-httpx/0.27.2",
        ("/v1/search?q={q}",),
    ),
    (
        "sk_live_0c6b9d41",
        "free",
        ("192.0.2.150",),
        0.02,
        "Mozilla/5.0 (X11; Linux x86_64) Firefox/132.0",
        ("/v1/books/{b}", "/v1/search?q={q}"),
    ),
]
SPIKE_START = datetime(2025, 11, 17, 22, 41, 9, tzinfo=UTC)
SPIKE_SWITCH = datetime(2025, 11, 17, 22, 58, 31, tzinfo=UTC)
SPIKE_END = datetime(2025, 11, 17, 23, 16, 44, tzinfo=UTC)


def _path(template: str, r: random.Random) -> str:
    return template.format(
        b=r.randint(1000, 98000),
        s=r.randint(10, 9000),
        j=r.randint(100, 900),
        q=r.choice(_WORDS).replace(" ", "+"),
        i=r.randint(1_000_000_000, 1_999_999_999),
        c=base64.urlsafe_b64encode(f'{{"after":{r.randint(1000, 90000)}}}'.encode())
        .decode()
        .rstrip("="),
    )


def access_log() -> list[str]:
    """~40k lines from 21:00 to 00:00 UTC, with the scraper from 22:41 to 23:16."""
    r = random.Random(1117)
    start = datetime(2025, 11, 17, 21, 0, 0, tzinfo=UTC)
    end = datetime(2025, 11, 18, 0, 0, 0, tzinfo=UTC)
    events: list[tuple[float, str]] = []
    total = (end - start).total_seconds()

    def load_at(t: float) -> float:  # DB saturation while the scraper runs (ramps up over ~2 min)
        ts = start + timedelta(seconds=t)
        if not (SPIKE_START <= ts <= SPIKE_END):
            return 1.0
        return 1.0 + 59.0 * min(1.0, (ts - SPIKE_START).total_seconds() / 120.0)

    def outcome(ms: int) -> tuple[int, int]:  # the ingress gives up after 5 s
        if ms >= 5000:
            return 504, 5000
        if ms > 2500 and r.random() < 0.35:
            return 503, ms
        return 200, ms

    for key, plan, ips, rps, ua, paths in _CALLERS:
        t = r.uniform(0, 2)
        while t < total:
            path = _path(r.choice(paths), r)
            slow = load_at(t) if "search" in path else (1 + (load_at(t) - 1) * 0.08)
            ms = int(r.lognormvariate(3.4 if "search" in path else 2.6, 0.45) * slow)
            status, ms = outcome(ms)
            if status == 200 and r.random() < 0.01:
                status = r.choice((404, 404, 422))
            events.append(
                (t, f'{r.choice(ips)} GET {path} {status} {ms}ms key={key} plan={plan} ua="{ua}"')
            )
            t += (
                r.expovariate(rps)
                if not (key == "sk_live_4be81d07" and 1800 < t < 2100)
                else r.expovariate(8.0)
            )  # the partner's nightly sync, 21:30
    t = 0.0
    while t < total:  # kubelet probes
        events.append(
            (t, f'10.0.0.2 GET /healthz 200 {r.randint(1, 3)}ms key=- plan=- ua="kube-probe/1.30"')
        )
        events.append(
            (
                t + 0.4,
                f'10.0.0.2 GET /readyz 200 {r.randint(2, 9)}ms key=- plan=- ua="kube-probe/1.30"',
            )
        )
        t += 10.0
    t = (SPIKE_START - start).total_seconds()
    stop = (SPIKE_END - start).total_seconds()
    switch = (SPIKE_SWITCH - start).total_seconds()
    while t < stop:
        key = SCRAPER_KEY if t < switch else SCRAPER_KEY_2
        ip = r.choice(("198.51.100.23", "198.51.100.24", "198.51.100.25"))
        if r.random() < 0.72:
            path = (
                f"/v1/search?q={r.choice(_WORDS).replace(' ', '+')}&page={r.randint(1, 40)}&size=50"
            )
            ms = int(r.lognormvariate(3.6, 0.5) * load_at(t))
        else:
            path = _path("/v1/books?cursor={c}&limit=100", r)
            ms = int(r.lognormvariate(2.9, 0.4) * (1 + (load_at(t) - 1) * 0.08))
        status, ms = outcome(ms)
        events.append(
            (t, f'{ip} GET {path} {status} {ms}ms key={key} plan=free ua="python-requests/2.32.3"')
        )
        t += r.expovariate(9.5)
    for _ in range(60):  # unauthenticated probing
        t = r.uniform(0, total)
        events.append(
            (
                t,
                f"{r.choice(('45.155.205.17', '185.220.101.4'))} GET "
                f"{r.choice(('/v1/books', '/.env', '/admin/keys', '/v1/search?q=test'))} 401 2ms "
                f'key=- plan=- ua="Mozilla/5.0 zgrab/0.x"',
            )
        )
    events.sort(key=lambda e: e[0])
    out = []
    for t, rest in events:
        ts = start + timedelta(seconds=t)
        level = "WARN " if (" 503 " in rest or " 504 " in rest) else "INFO "
        out.append(f"{iso(ts)} {level} access {rest}")
    return out


LOG = access_log()


@cache
def log_calls() -> list[tuple[datetime, str, str, str, str]]:
    """The log's requests: (time, client ip, path, caller (key or ``ip:<address>``), plan)."""
    out = []
    for line in LOG:
        parts = line.split()
        ts = datetime.fromisoformat(parts[0].replace("Z", "+00:00"))
        key = next(p[4:] for p in parts if p.startswith("key="))
        plan = next(p[5:] for p in parts if p.startswith("plan="))
        out.append((ts, parts[3], parts[5], key if key != "-" else f"ip:{parts[3]}", plan))
    return out


PLAN_LIMITS = {
    "free": (60, 20),
    "pro": (600, 100),
    "partner": (3000, 500),
    "internal": (10_000, 2000),
}
Replay = tuple[dict[str, int], dict[str, int], dict[str, dict[str, int]]]


def replay_data(costs: dict[str, int] | None = None) -> Replay:
    """What scripts/replay_ratelimit.py computes on the log (same arithmetic as the script):
    requests, rejections and rejected paths per caller. ``costs``: quota units by path prefix."""
    return _replay(tuple(costs.items()) if costs else ())


@cache  # the story quotes the same two replays many times
def _replay(costs: tuple[tuple[str, int], ...]) -> Replay:
    buckets: dict[str, list[float]] = {}
    seen: dict[str, int] = {}
    rejected: dict[str, int] = {}
    paths: dict[str, dict[str, int]] = {}
    for ts, _ip, path, who, plan in log_calls():
        if path in ("/healthz", "/readyz"):
            continue
        rpm, burst = PLAN_LIMITS.get(plan, (30, 10))
        rate = rpm / 60
        now = ts.timestamp()
        b = buckets.setdefault(who, [float(burst), now])
        b[0] = min(burst, b[0] + max(0.0, now - b[1]) * rate)
        b[1] = now
        cost = next((c for prefix, c in costs if path.startswith(prefix)), 1)
        seen[who] = seen.get(who, 0) + 1
        if b[0] >= cost:
            b[0] -= cost
        else:
            rejected[who] = rejected.get(who, 0) + 1
            p = paths.setdefault(who, {})
            p[path.split("?")[0]] = p.get(path.split("?")[0], 0) + 1
    return seen, rejected, paths


def replay(costs: dict[str, int] | None = None) -> str:
    """The output of scripts/replay_ratelimit.py on the log."""
    seen, rejected, paths = replay_data(costs)
    lines = [f"{'caller':<24} {'requests':>9} {'rejected':>9} {'share':>7}  top rejected paths"]
    for who, total in sorted(seen.items(), key=lambda kv: -kv[1])[:15]:
        r = rejected.get(who, 0)
        top = ", ".join(
            f"{p} ({c})" for p, c in sorted(paths.get(who, {}).items(), key=lambda kv: -kv[1])[:3]
        )
        lines.append(f"{who:<24} {total:>9} {r:>9} {r / total:>7.1%}  {top}".rstrip())
    all_seen, all_rej = sum(seen.values()), sum(rejected.values())
    lines.append(
        f"\n{all_seen} requests, {all_rej} would have been rejected "
        f"({all_rej / max(1, all_seen):.1%}) across {len(seen)} callers"
    )
    return "\n".join(lines)


def replay_numbers(costs: dict[str, int] | None = None) -> dict[str, str]:
    """Placeholders for the prose that quotes the replay: @S1@ (scraper key 1) etc."""
    seen, rejected, _ = replay_data(costs)
    out = {"@LINES@": f"{len(LOG):,}"}
    for tag, key in (
        ("S1", SCRAPER_KEY),
        ("S2", SCRAPER_KEY_2),
        ("BFF", "sk_live_bff0a1c2"),
        ("SHOP", "sk_live_4be81d07"),
        ("RM", "sk_live_c3d9e4f1"),
    ):
        out[f"@{tag}@"] = f"{seen[key]:,}"
        out[f"@{tag}R@"] = f"{rejected.get(key, 0):,}"
        out[f"@{tag}P@"] = f"{100 * rejected.get(key, 0) / seen[key]:.1f} %"
    big = {SCRAPER_KEY, SCRAPER_KEY_2, "sk_live_bff0a1c2", "sk_live_4be81d07", "sk_live_c3d9e4f1"}
    out["@REST@"] = f"{sum(v for k, v in seen.items() if k not in big):,}"
    out["@RESTR@"] = f"{sum(v for k, v in rejected.items() if k not in big):,}"
    return out


def fill(template: str, numbers: dict[str, str]) -> str:
    for k, v in numbers.items():
        template = template.replace(k, v)
    assert "@" not in template.replace("@shelfwise", "").replace("@example", ""), template[:80]
    return template


def key_counts() -> str:
    counts: dict[str, int] = {}
    for line in LOG:
        key = next(p for p in line.split() if p.startswith("key="))
        counts[key] = counts.get(key, 0) + 1
    return "\n".join(f"{c:>7} {k}" for k, c in sorted(counts.items(), key=lambda kv: -kv[1]))


def first_line_of(needle: str) -> int:
    return next(i for i, line in enumerate(LOG, 1) if needle in line)
