"""Which headers cross the proxy, and how content encodings stay consistent.

The proxy forwards the client's headers upstream minus the hop-by-hop ones
and ``Host``, and hands the upstream's response headers back the same way.
Response bodies pass through byte-exact (still compressed when they were), so
the proxy only lets the upstream use encodings it can decode for the
recording: gzip and deflate (or none). The client always receives an encoding
it asked for, with the upstream's own ``Content-Encoding`` header.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set

from multidict import CIMultiDict, CIMultiDictProxy

Headers = CIMultiDict[str] | CIMultiDictProxy[str] | Mapping[str, str]

# RFC 9110 section 7.6.1 hop-by-hop headers, plus what aiohttp computes itself.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "expect",
    }
)
_REQUEST_DROP = HOP_BY_HOP | {"host", "content-length", "accept-encoding"}
_RESPONSE_DROP = HOP_BY_HOP

DECODABLE = ("gzip", "deflate", "identity")


def _connection_tokens(headers: CIMultiDict[str]) -> set[str]:
    """Headers the sender listed in ``Connection`` (also hop-by-hop)."""
    tokens = ",".join(headers.getall("connection", []))
    return {t.strip().lower() for t in tokens.split(",") if t.strip()}


def _filtered(items: Iterable[tuple[str, str]], drop: Set[str]) -> CIMultiDict[str]:
    out: CIMultiDict[str] = CIMultiDict()
    for name, value in items:
        if name.lower() not in drop:
            out.add(name, value)
    return out


def upstream_request_headers(headers: Headers) -> CIMultiDict[str]:
    """The client's headers as forwarded upstream, with a decodable ``Accept-Encoding``."""
    headers = CIMultiDict(headers)
    out = _filtered(headers.items(), _REQUEST_DROP | _connection_tokens(headers))
    out["Accept-Encoding"] = decodable_accept_encoding(headers.get("accept-encoding"))
    return out


def decodable_accept_encoding(client_value: str | None) -> str:
    """The client's ``Accept-Encoding`` limited to codings the recorder can decode."""
    if not client_value:
        return "identity"
    kept = []
    for item in client_value.split(","):
        coding = item.split(";", 1)[0].strip().lower()
        if coding in DECODABLE:
            kept.append(item.strip())
    return ", ".join(kept) or "identity"


def client_response_headers(headers: Headers) -> CIMultiDict[str]:
    """The upstream's response headers as handed to the client."""
    headers = CIMultiDict(headers)
    return _filtered(headers.items(), _RESPONSE_DROP | _connection_tokens(headers))
