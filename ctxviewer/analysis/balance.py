"""Rows that add up: every category of a breakdown is the sum of its rows, every row the
sum of its own rows.

The numbers of a breakdown come from two sources: a category's total (the API's count
less the estimated overhead, an inference, a scaled estimate) and its rows (local
estimates of each message, tool, skill, file). They need not agree, and a reader who
adds up the rows of a view (the tree, an export) must get the category. So, once every
row is in place (``balanced``, last):

- what a category holds beyond its rows is a row of its own, named for what it is
  (``REST``): the estimation error of the messages, the skill listing's own text, the
  part of the unrecorded overhead no file on disk explains;
- rows that hold more than their category (estimates beside a smaller API count) are
  scaled down to it, rounded so that they still add up exactly (largest remainder),
  and their own rows with them;
- a message's blocks do not hold the estimator's per-message tokens: those are a
  ``FRAMING`` row of the message.
"""

from __future__ import annotations

from dataclasses import replace

from ctxviewer.analysis.breakdown import Breakdown, Category, Item, apportion

REST = {
    "messages": "estimation error: the count of the messages beyond their rows' estimates",
    "skills": "the listing's own text: the skill tool's instructions, its format",
    "unrecorded_overhead": "the rest of the system prompt and the tool schemas",
}
REST_OTHER = "the rest of the category, itemised by no row"
FRAMING = "message framing: the estimator's tokens per message"
REST_KIND = "rest"


def _desc(items: list[Item]) -> tuple[Item, ...]:
    return tuple(sorted(items, key=lambda x: (-x.tokens, x.name)))


def fit(items: tuple[Item, ...], total: int, rest: str) -> tuple[Item, ...]:
    """``items`` (each fitted to its own rows first) adding up to ``total``: with a
    ``rest`` row for what they leave out, or scaled down when they hold more."""
    fitted = [_fit_item(x) for x in items]
    held = sum(x.tokens for x in fitted)
    if held == total:
        return items if all(a is b for a, b in zip(fitted, items, strict=True)) else tuple(fitted)
    if held < total:
        fitted.append(Item(rest, total - held, REST_KIND, ref=f"{rest}: {total - held:,} tokens"))
        return _desc(fitted)
    shares = apportion([x.tokens for x in fitted], max(0, total))
    return _desc([_scaled(x, v) for x, v in zip(fitted, shares, strict=True)])


def _scaled(x: Item, tokens: int) -> Item:
    if tokens == x.tokens:
        return x
    if not x.items:
        return replace(x, tokens=tokens)
    shares = apportion([c.tokens for c in x.items], tokens)
    return replace(
        x, tokens=tokens, items=tuple(_scaled(c, v) for c, v in zip(x.items, shares, strict=True))
    )


def _fit_item(x: Item) -> Item:
    if not x.items:
        return x
    items = fit(x.items, x.tokens, FRAMING if x.kind == "message" else REST_OTHER)
    return x if items is x.items else replace(x, items=items)


def balanced(b: Breakdown) -> Breakdown:
    """``b`` with every category's rows adding up to it (see the module docstring)."""
    cats: list[Category] = []
    for c in b.categories:
        items = fit(c.items, c.tokens, REST.get(c.name, REST_OTHER)) if c.items else c.items
        cats.append(c if items is c.items else replace(c, items=items))
    if all(a is c for a, c in zip(cats, b.categories, strict=True)):
        return b
    return replace(b, categories=tuple(cats))


def adds_up(b: Breakdown) -> list[str]:
    """Where ``b``'s numbers do not add up (empty when they do): a category or row whose
    rows do not sum to it, a negative count, categories that do not fill the window."""
    wrong: list[str] = []

    def check(name: str, tokens: int, items: tuple[Item, ...]) -> None:
        if tokens < 0:
            wrong.append(f"{name}: {tokens} tokens")
        if items and sum(x.tokens for x in items) != tokens:
            wrong.append(f"{name}: {tokens:,} but its rows sum to {sum(x.tokens for x in items):,}")
        for x in items:
            check(f"{name} / {x.name}", x.tokens, x.items)

    for c in b.categories:
        check(c.name, c.tokens, c.items)
    space = sum(c.tokens for c in b.categories)
    if space != max(b.window, b.used):
        wrong.append(f"categories sum to {space:,}, the window is {b.window:,} and {b.used:,} used")
    return wrong
