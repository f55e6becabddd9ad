"""Keep secrets out of recordings: header values and URL query keys that carry credentials.

A recording is meant to be shared (attached to a bug, opened on another
machine), so nothing that authenticates the user may reach the file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

REDACTED = "[redacted]"

# A header or query parameter whose name says any of these carries a credential
# (x-api-key, x-goog-api-key, anthropic-api-key, x-auth-token, subscription-key,
# authorization, cookie...): redacted by rule, not by a list that falls behind.
SECRET_WORDS = ("key", "token", "secret", "auth", "password", "passwd", "cookie",
                "credential", "signature")
_PAIR = re.compile(r"(?P<name>[A-Za-z0-9_.\-]+)=(?P<value>[^&;\s'\"<>]+)")
_URL = re.compile(r"[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s'\"<>]+")


def is_secret(name: str) -> bool:
    """Whether a header or query parameter named ``name`` carries a credential."""
    low = name.lower()
    return any(w in low for w in SECRET_WORDS)


def redact_headers(items: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Headers as a lowercase-keyed dict with credential values replaced.

    Repeated headers are joined with ``", "`` (as HTTP allows), so the
    recording stays a plain JSON object.
    """
    out: dict[str, str] = {}
    for name, value in items:
        key = name.lower()
        if is_secret(key):
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
    return urlunsplit((parts.scheme, netloc, _redact_pairs(parts.path),
                       _redact_pairs(parts.query), parts.fragment))


def _redact_pairs(text: str) -> str:
    """``name=value`` pairs (split on ``&`` or ``;``) with secret names' values replaced."""
    return _PAIR.sub(lambda m: f"{m['name']}={REDACTED}" if is_secret(m["name"]) else m[0],
                     text)


def redact_text(text: str) -> str:
    """A message for people (an error, a log line) with the URLs in it redacted and any
    ``key=value`` credential pair replaced."""
    return _redact_pairs(_URL.sub(lambda m: redact_url(m[0]), text))
