"""How ctxviewer writes numbers for people, the same in the CLI and the GUI."""

from __future__ import annotations


def fmt_tokens(n: int | float | None) -> str:
    """1234 -> '1.2k', 1_250_000 -> '1.2M', like /context prints; '-' when unknown."""
    if n is None:
        return "-"
    n = float(n)
    if abs(n) >= 1_000_000:
        return f"{n / 1_000_000:.1f}M".replace(".0M", "M")
    if abs(n) >= 1000:
        return f"{n / 1000:.1f}k"
    return f"{int(n)}"


def short_text(text: str, n: int = 60) -> str:
    """``text`` with its blanks collapsed, cut to ``n`` characters ("…" at the cut).

    Only as much of the start is looked at as the label needs: a 60 MB tool
    result is not split into millions of words for a 60-character label.
    """
    size = 4 * n
    while True:
        part = text[:size]
        collapsed = " ".join(part.split())
        if len(collapsed) > n or len(part) == len(text):
            break
        size *= 4
    return collapsed if len(collapsed) <= n else collapsed[: n - 1] + "…"


def plural(n: int, word: str, many: str | None = None) -> str:
    """'1 request', '2 requests' (``many`` for irregular plurals)."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def usd(x: float | None, unknown: str = "?") -> str:
    """Dollars as people read them: '$10.23', '$0.0585' (cents of a cent under $1);
    ``unknown`` where there is no price."""
    if x is None:
        return unknown
    return f"${x:,.2f}" if abs(x) >= 1 else f"${x:.4f}"
