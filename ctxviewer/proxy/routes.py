"""Which API a request belongs to, and where it is forwarded.

Agents point their SDK at the proxy (``ANTHROPIC_BASE_URL`` /
``OPENAI_BASE_URL``), so the shape of a call says which provider it is for:

- Anthropic: everything under ``/v1/messages`` (count_tokens, batches) and
  ``/v1/complete``;
- OpenAI: ``chat/completions``, ``completions``, ``responses``,
  ``embeddings``, ``moderations``, ``audio``, ``images``, with or without the
  ``/v1`` an SDK base URL may carry;
- Gemini (``GOOGLE_GEMINI_BASE_URL``): ``/v1beta/…``, ``/v1alpha/…`` and
  ``/upload/…``, and any ``/<version>/models/<model>:<method>`` call
  (``generateContent``, ``streamGenerateContent``, ``countTokens``);
- both: ``/v1/models`` and ``/v1/files``, told apart by the headers: Anthropic's
  SDKs send ``anthropic-version`` (or ``x-api-key``), OpenAI's a Bearer key
  without them.

A call of none of these shapes is never forwarded (a credential must not reach the
wrong provider): the proxy answers 404 itself. Nor is a request whose target
could lead anywhere but the configured upstream (``request_target``): the
upstream URL is always the configured base plus the request's path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from ctxviewer.proxy.redact import redact_url

ANTHROPIC_UPSTREAM = "https://api.anthropic.com"
OPENAI_UPSTREAM = "https://api.openai.com"
GEMINI_UPSTREAM = "https://generativelanguage.googleapis.com"

# The API whose error shape a proxy-made error response uses.
OPENAI_APIS = frozenset({"openai-chat", "openai-responses", "openai-other"})
GEMINI_APIS = frozenset({"gemini", "gemini-count-tokens", "gemini-other"})

NOT_ROUTED = "unrouted"  # the ``api`` of a call of neither provider's shape

_ANTHROPIC_PREFIXES = ("/v1/messages", "/v1/complete")
_OPENAI_PREFIXES = (
    "/chat/completions",
    "/completions",
    "/responses",
    "/embeddings",
    "/moderations",
    "/audio/",
    "/images/",
)
_SHARED_PREFIXES = ("/v1/models", "/v1/files")
# (upstream, path prefixes, whether a leading /v1 is optional, POST path -> api,
# the api of any other call)
_PROVIDERS = (
    (
        "anthropic",
        _ANTHROPIC_PREFIXES,
        False,
        {"/v1/messages": "anthropic", "/v1/messages/count_tokens": "anthropic-count-tokens"},
        "other",
    ),
    (
        "openai",
        _OPENAI_PREFIXES,
        True,
        {"/chat/completions": "openai-chat", "/responses": "openai-responses"},
        "openai-other",
    ),
)


@dataclass(frozen=True, slots=True)
class Route:
    """Where one request goes: the recorded ``api`` name and the full upstream URL
    (None: not forwarded)."""

    api: str
    url: str | None


def _under(path: str, prefixes: tuple[str, ...]) -> bool:
    return any(
        path == p.rstrip("/") or path.startswith(p if p.endswith("/") else p + "/")
        for p in prefixes
    )


def _anthropic_headers(headers: Mapping[str, str] | None) -> bool:
    if not headers:
        return False
    names = {k.lower() for k in headers}
    return "anthropic-version" in names or "x-api-key" in names


_GEMINI_VERSIONS = ("/v1beta/", "/v1alpha/", "/upload/")  # paths only Google's API has
_GEMINI_CALL = re.compile(r"^/v\d[\w.]*/(?:tuned)?models/[^/:]+:(?P<method>\w+)$")
_GEMINI_POSTS = {
    "generateContent": "gemini",
    "streamGenerateContent": "gemini",
    "countTokens": "gemini-count-tokens",
}


def _gemini(post: bool, path: str) -> str | None:
    """The api of a Gemini API call (``/v1beta/models/gemini-x:streamGenerateContent``),
    None for a path of another API."""
    call = _GEMINI_CALL.match(path)
    if call is not None:
        return _GEMINI_POSTS.get(call["method"], "gemini-other") if post else "gemini-other"
    return "gemini-other" if path.startswith(_GEMINI_VERSIONS) else None


def classify(
    method: str, path: str, headers: Mapping[str, str] | None = None
) -> tuple[str, str | None]:
    """(api, upstream name) of a request; the upstream is None for a call of neither shape."""
    path = path.rstrip("/") or "/"
    post = method.upper() == "POST"
    gemini = _gemini(post, path)
    if gemini is not None:
        return gemini, "gemini"
    for upstream, prefixes, drop_v1, posts, other in _PROVIDERS:
        shape = path[3:] if drop_v1 and path.startswith("/v1/") else path
        if _under(shape, prefixes):
            return (posts.get(shape, other) if post else other), upstream
    if _under(path, _SHARED_PREFIXES):
        return ("other", "anthropic") if _anthropic_headers(headers) else ("openai-other", "openai")
    return NOT_ROUTED, None


class BadTarget(ValueError):
    """A request target the proxy does not forward (the message says why)."""


# a path segment that is . or .. (also percent-encoded), an encoded / or \, a \ or a
# control character: an upstream may resolve them into another API's path
_DOT_SEGMENT = re.compile(r"(?:^|/)(?:\.|%2e){1,2}(?:/|$)", re.IGNORECASE)
_AMBIGUOUS = re.compile(r"%2f|%5c|\\|%[01][0-9a-f]|%7f|[\x00-\x20\x7f]", re.IGNORECASE)


def request_target(raw: str) -> tuple[str, str]:
    """(decoded path, raw path and query) of a request line's target. Raises ``BadTarget``.

    Origin form (``/v1/messages?beta=true``) as is; absolute form
    (``POST http://host/v1/messages``, what a client taking the proxy for an HTTP
    proxy sends) gives its path and query, never its host. Anything else (another
    scheme, ``host:port``, ``*``) is refused, and so is a path with dot segments or
    encoded slashes, which an upstream could resolve into another API's path.
    """
    if raw.startswith("/"):
        path_qs = raw
    elif raw[:8].lower().startswith(("http://", "https://")):
        try:
            parts = urlsplit(raw)
            parts.port  # noqa: B018 - raises ValueError for a bad port
        except ValueError as e:
            raise BadTarget(f"not a URL ({e})") from None
        path_qs = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        if not path_qs.startswith("/"):
            raise BadTarget("not a URL with a path")
    else:
        raise BadTarget("the request target must be a path (/v1/messages) or an http(s) URL")
    raw_path = path_qs.split("?", 1)[0]
    if _DOT_SEGMENT.search(raw_path) or _AMBIGUOUS.search(raw_path):
        raise BadTarget("a path with . or .. segments, encoded slashes or control characters")
    return unquote(raw_path), path_qs


def upstream_base(url: str) -> str:
    """``url`` as an upstream base: http(s), a host, an optional path, nothing else.
    Raises ValueError (with the reason, the URL redacted) for anything else."""
    text = url.strip()
    shown = repr(redact_url(text))
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as e:
        raise ValueError(f"not an http(s) URL: {shown} ({e})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL with a host: {shown}")
    if parts.query or parts.fragment or text.endswith(("?", "#")):
        raise ValueError(f"an upstream URL takes no query or fragment: {shown}")
    return text.rstrip("/")


def join_url(base: str, raw_path_qs: str) -> str:
    """``base`` (which may carry a path prefix) + the request's raw path and query;
    always on ``base``'s scheme, host and port."""
    if not raw_path_qs.startswith("/"):
        raise BadTarget(f"not a path: {raw_path_qs!r}")
    return base.rstrip("/") + raw_path_qs


def route(
    method: str,
    path: str,
    raw_path_qs: str,
    upstreams: dict[str, str],
    headers: Mapping[str, str] | None = None,
) -> Route:
    """The route for a request, given the configured upstream base URLs by name."""
    api, upstream = classify(method, path, headers)
    return Route(api=api, url=join_url(upstreams[upstream], raw_path_qs) if upstream else None)
