"""Keep secrets out of recordings, the console and the proxy's own answers.

A recording is meant to be shared (attached to a bug, opened on another
machine), so nothing that authenticates the user may reach the file. A secret
is found two ways:

- by name: a header, query parameter or attribute whose name says it carries a
  credential (``is_secret``: ``x-api-key``, ``authorization``, ``k%65y``,
  ``x-gateway-creds``, ``sig``...); its whole value is replaced;
- by value: the shape of a key whatever its name (``SECRET_SHAPES``: Anthropic,
  OpenAI, Google, GitHub and AWS keys, JWTs, ``Bearer`` tokens); in a header or
  query value the whole value is replaced, in any other text the key itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import unquote_plus, urlsplit, urlunsplit

REDACTED = "[redacted]"

# A name is split into words at punctuation and camelCase humps (``x-api-key``,
# ``http.request.header.authorization``, ``accessToken``). It carries a credential
# when a word is one of ``SECRET_WORDS``, or begins or ends with one of the
# ``SECRET_STEMS`` (``apikey``, ``authorization``, ``xsrftoken``), or when the whole
# name (an ``x-`` prefix aside) is one of ``SECRET_NAMES``: words too common inside
# other names to be read as secrets there (``status_code``, ``browser-access``).
SECRET_WORDS = frozenset(
    {
        "key",
        "token",
        "secret",
        "secrets",
        "auth",
        "pass",
        "pwd",
        "pw",
        "passwd",
        "password",
        "passphrase",
        "passcode",
        "cookie",
        "cookies",
        "cred",
        "creds",
        "credential",
        "credentials",
        "sig",
        "signature",
        "jwt",
        "bearer",
        "otp",
    }
)
SECRET_STEMS = ("auth", "oauth", "apikey", "passw", "secret", "credential", "cookie", "signature")
SECRET_SUFFIXES = ("key", "token", "secret", "password", "passwd", "cookie", "creds", "jwt")
SECRET_NAMES = frozenset({"code", "access", "session", "sid", "pin", "ticket"})

# Key shapes: a match is a secret whatever it is called. Each starts at a word's
# start (``task-...`` is not ``sk-...``); ``Bearer`` needs a token of 16 or more
# characters with a digit, so prose ("a Bearer token") is left alone.
SECRET_SHAPES = (
    r"sk-ant-[A-Za-z0-9_\-]{16,}",  # Anthropic (api03, admin01, oat01...)
    r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",  # OpenAI
    r"AIza[0-9A-Za-z_\-]{35}",  # Google API key
    r"ya29\.[0-9A-Za-z_\-]{20,}",  # Google OAuth access token
    r"gh[pousr]_[A-Za-z0-9]{30,}",  # GitHub tokens
    r"github_pat_[A-Za-z0-9_]{22,}",
    r"(?:AKIA|ASIA)[0-9A-Z]{16}",  # AWS access key ids
    r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*",  # JWT
    r"[Bb](?:earer|EARER)\s+(?=[A-Za-z0-9._~+/\-]*[0-9])[A-Za-z0-9._~+/\-]{16,}=*",
)
_SHAPE = re.compile("|".join(f"(?:{s})" for s in SECRET_SHAPES))
_SHAPE_BYTES = re.compile("|".join(f"(?:{s})" for s in SECRET_SHAPES).encode())
_WORD_CHAR = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_ESCAPES = frozenset(b"nrtbf")  # ``\n`` before a key in JSON text still starts a word

_NAME_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_PAIR = re.compile(r"(?P<name>[^\s&;=?#/'\"<>]+)=(?P<value>[^&;\s'\"<>]*)")
_URL = re.compile(r"[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s'\"<>]+")


def is_secret(name: str) -> bool:
    """Whether a header, query parameter or attribute named ``name`` carries a
    credential (percent-encoding undone first, even twice: ``k%65y`` is ``key``)."""
    plain = name
    for _ in range(3):  # k%2565y: encoded twice
        plain, was = unquote_plus(plain), plain
        if plain == was:
            break
    plain = plain.strip()
    words = [w.lower() for w in _NAME_WORDS.findall(plain)]
    if any(
        w in SECRET_WORDS or w.startswith(SECRET_STEMS) or w.endswith(SECRET_SUFFIXES)
        for w in words
    ):
        return True
    bare = plain.lower().removeprefix("x-").removeprefix("x_")
    return bare in SECRET_NAMES


def has_secret_shape(text: str) -> bool:
    """Whether ``text`` holds a key by its shape (a word starting where the shape does)."""
    return any(_starts_word(text, m.start()) for m in _SHAPE.finditer(text))


def redact_value(name: str, value: str) -> str:
    """A header or parameter value as recorded: ``REDACTED`` when its name or its
    value says it is a credential."""
    return REDACTED if is_secret(name) or has_secret_shape(value) else value


def redact_headers(items: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Headers as a lowercase-keyed dict with credential values replaced.

    Repeated headers are joined with ``", "`` (as HTTP allows), so the
    recording stays a plain JSON object.
    """
    out: dict[str, str] = {}
    for name, value in items:
        key = name.lower()
        value = redact_value(key, value)
        if key in out and out[key] != REDACTED and value != REDACTED:
            out[key] = f"{out[key]}, {value}"
        elif key in out:
            out[key] = REDACTED
        else:
            out[key] = value
    return out


def redact_url(url: str) -> str:
    """``url`` with userinfo, credential query values and key shapes replaced."""
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL after all (a bad IPv6 literal...): redact it as text
        return redact_shapes(_redact_pairs(url))
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rsplit('@', 1)[1]}"
    return redact_shapes(
        urlunsplit(
            (
                parts.scheme,
                netloc,
                _redact_pairs(parts.path),
                _redact_pairs(parts.query),
                parts.fragment,
            )
        )
    )


def _redact_pairs(text: str) -> str:
    """``name=value`` pairs (split on ``&`` or ``;``) with secret ones' values replaced."""
    return _PAIR.sub(
        lambda m: (
            f"{m['name']}={REDACTED}"
            if redact_value(m["name"], unquote_plus(m["value"])) == REDACTED
            else m[0]
        ),
        text,
    )


def redact_text(text: str) -> str:
    """A message for people (an error, a log line, a console line, an answer) with the
    URLs in it redacted, ``key=value`` credential pairs and key shapes replaced."""
    return redact_shapes(_redact_pairs(_URL.sub(lambda m: redact_url(m[0]), text)))


def redact_shapes(text: str) -> str:
    """``text`` with every key shape replaced by ``REDACTED``."""
    return _SHAPE.sub(lambda m: REDACTED if _starts_word(text, m.start()) else m[0], text)


def redact_line(line: bytes) -> bytes:
    """A serialized line (JSON) with every key shape replaced by ``REDACTED``: a shape
    holds no quote or backslash, so the line stays valid JSON.

    Lines run to tens of MB: each shape's fixed part is looked for with
    ``bytes.find`` (memchr speed, one short call at a time, so the event loop's
    thread is never held for long), and only there is the whole shape matched.
    """
    spans: list[tuple[int, int]] = []
    for anchor, back in _ANCHORS:
        at = line.find(anchor)
        while at != -1:
            start = at - back
            m = _SHAPE_BYTES.match(line, start) if start >= 0 else None
            if m is not None and _starts_word(line, start):
                spans.append((start, m.end()))
            at = line.find(anchor, at + 1)
    if not spans:
        return line
    out, done = bytearray(), 0
    for start, end in sorted(spans):
        if end <= done:
            continue
        out += line[done : max(start, done)] + (REDACTED.encode() if start >= done else b"")
        done = end
    out += line[done:]
    return bytes(out)


# the fixed part of each shape, and how many bytes before it the shape starts
_ANCHORS = (
    (b"sk-", 0),
    (b"AIza", 0),
    (b"ya29.", 0),
    (b"hp_", 1),
    (b"ho_", 1),
    (b"hu_", 1),
    (b"hs_", 1),
    (b"hr_", 1),
    (b"github_pat_", 0),
    (b"AKIA", 0),
    (b"ASIA", 0),
    (b"eyJ", 0),
    (b"earer", 1),
    (b"EARER", 1),
)


def _starts_word(data: bytes | str, at: int) -> bool:
    """Whether ``data[at]`` starts a word: no letter or digit before it, or a JSON
    escape (``\\n``) that the line writes as one."""
    if isinstance(data, str):
        data = data[max(0, at - 2) : at].encode("utf-8", "surrogatepass")
        at = len(data)
    if at == 0 or data[at - 1] not in _WORD_CHAR:
        return True
    return at >= 2 and data[at - 2] == 0x5C and data[at - 1] in _ESCAPES
