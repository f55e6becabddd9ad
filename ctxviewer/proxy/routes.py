"""Which API a request belongs to, and where it is forwarded.

Agents point their SDK at the proxy (``ANTHROPIC_BASE_URL`` /
``OPENAI_BASE_URL``), so the path alone says which API a call is for.
"""

from __future__ import annotations

from dataclasses import dataclass

ANTHROPIC_UPSTREAM = "https://api.anthropic.com"
OPENAI_UPSTREAM = "https://api.openai.com"

# (method, path) -> (api, which upstream). Everything else is "other" -> anthropic.
_ROUTES: dict[tuple[str, str], tuple[str, str]] = {
    ("POST", "/v1/messages"): ("anthropic", "anthropic"),
    ("POST", "/v1/messages/count_tokens"): ("anthropic-count-tokens", "anthropic"),
    ("POST", "/v1/chat/completions"): ("openai-chat", "openai"),
    ("POST", "/v1/responses"): ("openai-responses", "openai"),
}

# The API whose error shape a proxy-made error response uses.
OPENAI_APIS = frozenset({"openai-chat", "openai-responses"})


@dataclass(frozen=True, slots=True)
class Route:
    """Where one request goes: the recorded ``api`` name and the full upstream URL."""

    api: str
    url: str


def classify(method: str, path: str) -> tuple[str, str]:
    """(api, upstream name) for a request; unknown calls are ``other`` on the Anthropic side."""
    return _ROUTES.get((method.upper(), path.rstrip("/") or "/"), ("other", "anthropic"))


def join_url(base: str, raw_path_qs: str) -> str:
    """``base`` (which may carry a path prefix) + the request's raw path and query."""
    return base.rstrip("/") + raw_path_qs


def route(method: str, path: str, raw_path_qs: str, upstreams: dict[str, str]) -> Route:
    """The route for a request, given the configured upstream base URLs by name."""
    api, upstream = classify(method, path)
    return Route(api=api, url=join_url(upstreams[upstream], raw_path_qs))
