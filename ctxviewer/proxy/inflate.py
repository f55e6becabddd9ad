"""Undo a body's ``Content-Encoding`` in bounded steps, refusing a decompression bomb.

A local client (or upstream) can send 130 KB of gzip that inflates to 128 MiB of
NULs. Decoding is therefore never done in one call: each decoder is asked for at
most ``STEP`` bytes at a time, and decoding stops as soon as the output passes
the body's budget (``budget``): ``FLOOR`` bytes, or ``RATIO`` times the bytes
received when that is more, and never more than the caller's cap. Real JSON
compresses 3 to 20 times; a bomb, a thousand.

gzip and deflate always; br with ``brotli`` 1.2 or later (it can bound its
output); zstd with ``backports.zstd`` or Python 3.14's ``compression.zstd``.
Stacked codings (``gzip, br``) are undone last first, at most ``MAX_CODINGS`` of
them, each within the same budget. A stream cut short yields the part that
decompresses.

Parsing multiplies too: 3 bytes of ``{},`` become a 64-byte dict, so 8 MiB of
them took the receiver past 300 MB. A body is parsed only when it holds at most
``MAX_VALUES`` JSON values (``json_values``, counted by its ``,``, ``{`` and
``[``: an upper bound, found at memchr speed).
"""

from __future__ import annotations

import importlib
import zlib
from collections.abc import Callable
from typing import Any

STEP = 1 << 20  # bytes of output asked of a decoder at a time
FLOOR = 8 << 20  # a body may always inflate to this many bytes
RATIO = 32  # ... or to this many times its compressed size
MAX_CODINGS = 3  # stacked content codings undone, at most
MAX_VALUES = 1_000_000  # JSON values a body may parse into (a 1M-token request: ~200k)


class Undecodable(ValueError):
    """A body that is not decoded; the message says why, for the recording or the client."""


class TooLarge(Undecodable):
    """A body that inflates past its budget (a decompression bomb, or just too big)."""


def budget(compressed: int, cap: int) -> int:
    """How many bytes a body of ``compressed`` bytes may inflate to."""
    return min(cap, max(FLOOR, RATIO * compressed))


def codings(encoding: str) -> list[str]:
    """The codings of a ``Content-Encoding`` value, in the order they were applied."""
    return [
        c.strip().lower()
        for c in encoding.split(",")
        if c.strip() and c.strip().lower() != "identity"
    ]


def inflate(data: bytes, encoding: str, cap: int) -> bytes:
    """``data`` with its ``Content-Encoding`` undone. Raises ``TooLarge`` past
    ``budget(len(data), cap)`` bytes, ``Undecodable`` for a coding without a decoder
    or a stream that is not of its coding."""
    stack = codings(encoding)
    if len(stack) > MAX_CODINGS:
        raise Undecodable(
            f"{len(stack)} stacked content codings (at most {MAX_CODINGS} are decoded)"
        )
    limit = budget(len(data), cap)
    for coding in reversed(stack):
        if not data:
            break
        decoder = _DECODERS.get(coding)
        if decoder is None:
            raise Undecodable(f"content-encoding {coding} has no decoder here")
        data = decoder(data, limit)
    return data


def json_values(data: bytes) -> int:
    """At most how many values ``data``, JSON text, parses into."""
    return data.count(b",") + data.count(b"{") + data.count(b"[") + 1


def too_many_values(data: bytes) -> str | None:
    """Why ``data`` is not parsed (None: it may be)."""
    n = json_values(data)
    if n > MAX_VALUES:
        return f"up to {n:,} JSON values (at most {MAX_VALUES:,} are parsed)"
    return None


def _mib(n: int) -> str:
    return f"{n / (1 << 20):g} MiB"


def _too_large(limit: int, sent: int) -> TooLarge:
    return TooLarge(
        f"inflates past {_mib(limit)} (from {sent} bytes): a decompression bomb "
        "or too large, not decoded"
    )


def _zlib(wbits: int, name: str) -> Callable[[bytes, int], bytes]:
    def decode(data: bytes, limit: int) -> bytes:
        out = bytearray()
        rest = data
        while rest:
            d = zlib.decompressobj(wbits)
            try:
                _drain(d, rest, out, limit, len(data))
                out += d.flush()
            except zlib.error as e:
                if out:  # a stream damaged past its start: keep what decompressed
                    break
                raise Undecodable(f"not a valid {name} stream ({e})") from None
            if not d.eof and not out:
                raise Undecodable(f"not a valid {name} stream (it ends before any data)")
            if not d.eof or wbits < 0:
                break  # cut short (what came is kept), or raw deflate (no members)
            rest = d.unused_data  # gzip may hold several members
            if name == "gzip" and not rest.startswith(b"\x1f\x8b"):
                break
        return bytes(out)

    return decode


def _deflate(data: bytes, limit: int) -> bytes:
    """HTTP's deflate is zlib's format; some servers send raw deflate."""
    try:
        return _zlib(15, "deflate")(data, limit)
    except TooLarge:
        raise
    except Undecodable:
        return _zlib(-15, "deflate")(data, limit)


def _drain(d: Any, data: bytes, out: bytearray, limit: int, sent: int) -> None:
    """Feed ``data`` to a zlib decompressor ``STEP`` bytes of output at a time, into
    ``out``."""
    chunk = d.decompress(data, STEP)
    while True:
        out += chunk
        if len(out) > limit:
            raise _too_large(limit, sent)
        pending = d.unconsumed_tail
        if not chunk and not pending:
            return
        chunk = d.decompress(pending, STEP)


def _brotli(data: bytes, limit: int) -> bytes:
    try:
        import brotli
    except ImportError:
        raise Undecodable("content-encoding br needs the brotli package") from None
    d = brotli.Decompressor()
    if not hasattr(d, "can_accept_more_data"):
        raise Undecodable(
            "content-encoding br needs brotli 1.2 or later (older ones cannot bound their output)"
        )
    out = bytearray()
    try:
        chunk = d.process(data, output_buffer_limit=STEP)
        while True:
            out += chunk
            if len(out) > limit:
                raise _too_large(limit, len(data))
            if d.is_finished() or (not chunk and d.can_accept_more_data()):
                break  # the end, or cut short: what came is kept
            chunk = d.process(b"", output_buffer_limit=STEP)
    except brotli.error as e:
        if not out:
            raise Undecodable(f"not a valid br stream ({e})") from None
    if not out and not d.is_finished():
        raise Undecodable("not a valid br stream (it ends before any data)")
    return bytes(out)


def _zstd_module() -> Any:
    """Python 3.14's ``compression.zstd``, or ``backports.zstd``, or None."""
    for name in ("compression.zstd", "backports.zstd"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


def _zstd(data: bytes, limit: int) -> bytes:
    zstd = _zstd_module()
    if zstd is None:
        raise Undecodable("content-encoding zstd needs backports.zstd (or Python 3.14)")
    out = bytearray()
    rest = data
    while rest:
        d = zstd.ZstdDecompressor()
        try:
            chunk = d.decompress(rest, STEP)
            while True:
                out += chunk
                if len(out) > limit:
                    raise _too_large(limit, len(data))
                if d.eof or d.needs_input:
                    break
                chunk = d.decompress(b"", STEP)
        except zstd.ZstdError as e:
            if not out:
                raise Undecodable(f"not a valid zstd stream ({e})") from None
            break
        if not d.eof and not out:
            raise Undecodable("not a valid zstd stream (it ends before any data)")
        if not d.eof:
            break  # cut short
        rest = d.unused_data  # zstd may hold several frames
    return bytes(out)


_DECODERS: dict[str, Callable[[bytes, int], bytes]] = {
    "gzip": _zlib(47, "gzip"),
    "x-gzip": _zlib(47, "gzip"),
    "deflate": _deflate,
    "br": _brotli,
    "zstd": _zstd,
}
