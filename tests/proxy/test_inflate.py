"""Bounded decompression (``proxy.inflate``): bombs in every coding the proxy decodes are
refused after a bounded amount of output, real bodies decode whole, damage is said."""

from __future__ import annotations

import gzip
import os
import zlib

import pytest

from ctxviewer.proxy.inflate import FLOOR, RATIO, TooLarge, Undecodable, budget, inflate

CAP = 64 << 20
NULS = bytes(48 << 20)  # 48 MiB of NULs: a few dozen KB in any coding


def _deflate_raw(data: bytes) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def _brotli(data: bytes) -> bytes:
    brotli = pytest.importorskip("brotli", reason="brotli is an optional decoder")
    return bytes(brotli.compress(data, quality=1))


def _zstd(data: bytes) -> bytes:
    zstd = pytest.importorskip("backports.zstd", reason="zstd is an optional decoder")
    return bytes(zstd.compress(data))


PACKERS = {
    "gzip": lambda d: gzip.compress(d, 9),
    "deflate": lambda d: zlib.compress(d, 9),
    "raw deflate": _deflate_raw,
    "br": _brotli,
    "zstd": _zstd,
}
HEADER = {
    "gzip": "gzip",
    "deflate": "deflate",
    "raw deflate": "deflate",
    "br": "br",
    "zstd": "zstd",
}


@pytest.mark.parametrize("kind", PACKERS)
def test_a_bomb_is_refused_in_every_coding(kind: str) -> None:
    packed = PACKERS[kind](NULS)
    assert len(packed) * 1000 < len(NULS) * 2  # a bomb: a ratio of hundreds
    with pytest.raises(TooLarge, match="inflates past 8 MiB"):
        inflate(packed, HEADER[kind], CAP)


@pytest.mark.parametrize("kind", PACKERS)
def test_a_real_body_decodes_whole_in_every_coding(kind: str) -> None:
    body = (
        b'{"messages": ['
        + b",".join(
            b'{"role": "user", "content": "%s"}' % os.urandom(600).hex().encode()
            for _ in range(10_000)
        )
        + b"]}"
    )  # 12 MB of JSON that compresses about 2 times
    assert len(body) > FLOOR
    assert inflate(PACKERS[kind](body), HEADER[kind], CAP) == body


def test_a_nested_bomb_is_refused_and_too_many_codings_are_not_tried() -> None:
    twice = gzip.compress(gzip.compress(NULS, 9), 9)  # 48 MiB in a few hundred bytes
    with pytest.raises(TooLarge):
        inflate(twice, "gzip, gzip", CAP)
    with pytest.raises(Undecodable, match="4 stacked content codings"):
        inflate(twice, "gzip, gzip, gzip, gzip", CAP)
    assert inflate(b"plain", "identity, identity", CAP) == b"plain"


@pytest.mark.parametrize(
    ("data", "coding", "said"),
    [
        (b"not gzip at all", "gzip", "not a valid gzip stream"),
        (b"\x1f\x8b\x08\x00garbage", "gzip", "not a valid gzip stream"),
        (b"not zlib", "deflate", "not a valid deflate stream"),
        (b"\x00\x01", "br", "not a valid br stream"),
        (b"abc", "compress", "content-encoding compress has no decoder here"),
    ],
)
def test_a_body_not_of_its_coding_says_so(data: bytes, coding: str, said: str) -> None:
    if coding == "br":
        pytest.importorskip("brotli")
    with pytest.raises(Undecodable, match=said):
        inflate(data, coding, CAP)


def test_several_gzip_members_and_a_cut_stream() -> None:
    assert inflate(gzip.compress(b"ab") + gzip.compress(b"cd"), "gzip", CAP) == b"abcd"
    text = os.urandom(3000).hex().encode()
    cut = gzip.compress(text)[:1000]
    start = inflate(cut, "gzip", CAP)
    assert start and text.startswith(start)  # what arrived is kept


def test_the_budget() -> None:
    assert budget(1000, CAP) == FLOOR
    assert budget(1 << 20, CAP) == RATIO << 20
    assert budget(100 << 20, CAP) == CAP


def test_a_body_of_too_many_values_is_not_parsed() -> None:
    """3 bytes of ``{},`` make a 64-byte dict: such a body is said, not parsed."""
    from ctxviewer.proxy.exchange import parse_json
    from ctxviewer.proxy.inflate import MAX_VALUES, json_values

    crowded = b"[" + b"{}," * MAX_VALUES + b"{}]"
    assert json_values(crowded) > MAX_VALUES
    assert parse_json(crowded) == {
        "_raw": f"[{len(crowded)} bytes, not parsed: up to "
        f"{json_values(crowded):,} JSON values (at most "
        f"{MAX_VALUES:,} are parsed)]"
    }
    fine = b"[" + b"{}," * 1000 + b"{}]"
    assert parse_json(fine) == [{}] * 1001
