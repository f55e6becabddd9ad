"""Keep secrets out of recordings: header values and URL query keys that carry credentials.

A recording is meant to be shared (attached to a bug, opened on another
machine), so nothing that authenticates the user may reach the file.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "[redacted]"

SECRET_HEADERS = frozenset(
    {"x-api-key", "authorization", "proxy-authorization", "api-key", "cookie", "set-cookie"}
)

# Query parameters some gateways accept credentials in (e.g. ``?key=`` for Gemini).
SECRET_QUERY_KEYS = frozenset({"key", "api_key", "api-key", "apikey", "access_token", "token"})


def redact_headers(items: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Headers as a lowercase-keyed dict with credential values replaced.

    Repeated headers are joined with ``", "`` (as HTTP allows), so the
    recording stays a plain JSON object.
    """
    out: dict[str, str] = {}
    for name, value in items:
        key = name.lower()
        if key in SECRET_HEADERS:
            out[key] = REDACTED
        elif key in out:
            out[key] = f"{out[key]}, {value}"
        else:
            out[key] = value
    return out


def redact_url(url: str) -> str:
    """``url`` with userinfo and credential-like query values replaced."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rsplit('@', 1)[1]}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(k.lower() in SECRET_QUERY_KEYS for k, _ in pairs):
            query = urlencode(
                [(k, REDACTED if k.lower() in SECRET_QUERY_KEYS else v) for k, v in pairs]
            )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
