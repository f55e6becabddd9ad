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
wrong provider): the proxy answers 404 itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

ANTHROPIC_UPSTREAM = "https://api.anthropic.com"
OPENAI_UPSTREAM = "https://api.openai.com"
GEMINI_UPSTREAM = "https://generativelanguage.googleapis.com"

# The API whose error shape a proxy-made error response uses.
OPENAI_APIS = frozenset({"openai-chat", "openai-responses", "openai-other"})
GEMINI_APIS = frozenset({"gemini", "gemini-count-tokens", "gemini-other"})

NOT_ROUTED = "unrouted"  # the ``api`` of a call of neither provider's shape

_ANTHROPIC_PREFIXES = ("/v1/messages", "/v1/complete")
_OPENAI_PREFIXES = ("/chat/completions", "/completions", "/responses", "/embeddings",
                    "/moderations", "/audio/", "/images/")
_SHARED_PREFIXES = ("/v1/models", "/v1/files")
# (upstream, path prefixes, whether a leading /v1 is optional, POST path -> api,
# the api of any other call)
_PROVIDERS = (
    ("anthropic", _ANTHROPIC_PREFIXES, False,
     {"/v1/messages": "anthropic", "/v1/messages/count_tokens": "anthropic-count-tokens"},
     "other"),
    ("openai", _OPENAI_PREFIXES, True,
     {"/chat/completions": "openai-chat", "/responses": "openai-responses"}, "openai-other"),
)


@dataclass(frozen=True, slots=True)
class Route:
    """Where one request goes: the recorded ``api`` name and the full upstream URL
    (None: not forwarded)."""

    api: str
    url: str | None


def _under(path: str, prefixes: tuple[str, ...]) -> bool:
    return any(path == p.rstrip("/") or path.startswith(p if p.endswith("/") else p + "/")
               for p in prefixes)


def _anthropic_headers(headers: Mapping[str, str] | None) -> bool:
    if not headers:
        return False
    names = {k.lower() for k in headers}
    return "anthropic-version" in names or "x-api-key" in names


_GEMINI_VERSIONS = ("/v1beta/", "/v1alpha/", "/upload/")  # paths only Google's API has
_GEMINI_CALL = re.compile(r"^/v\d[\w.]*/(?:tuned)?models/[^/:]+:(?P<method>\w+)$")
_GEMINI_POSTS = {"generateContent": "gemini", "streamGenerateContent": "gemini",
                 "countTokens": "gemini-count-tokens"}


def _gemini(post: bool, path: str) -> str | None:
    """The api of a Gemini API call (``/v1beta/models/gemini-x:streamGenerateContent``),
    None for a path of another API."""
    call = _GEMINI_CALL.match(path)
    if call is not None:
        return _GEMINI_POSTS.get(call["method"], "gemini-other") if post else "gemini-other"
    return "gemini-other" if path.startswith(_GEMINI_VERSIONS) else None


def classify(method: str, path: str,
             headers: Mapping[str, str] | None = None) -> tuple[str, str | None]:
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


def join_url(base: str, raw_path_qs: str) -> str:
    """``base`` (which may carry a path prefix) + the request's raw path and query."""
    return base.rstrip("/") + raw_path_qs


def route(method: str, path: str, raw_path_qs: str, upstreams: dict[str, str],
          headers: Mapping[str, str] | None = None) -> Route:
    """The route for a request, given the configured upstream base URLs by name."""
    api, upstream = classify(method, path, headers)
    return Route(api=api, url=join_url(upstreams[upstream], raw_path_qs) if upstream else None)
