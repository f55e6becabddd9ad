"""Per-model prices (USD per million tokens): the genai-prices catalogue, ctxviewer's
table for what it lacks, and the user's overrides.

``price`` is one model's rates and tiers, ``catalogue`` the genai-prices snapshot
and its matching rules, ``table`` the lookup in order (user, catalogue, ctxviewer).
May import ``ctxviewer.resources`` and the standard library; genai-prices only when
its snapshot is (re)built.
"""

from __future__ import annotations

from ctxviewer.analysis.pricing.price import FIELDS, PER, Price, Tier
from ctxviewer.analysis.pricing.table import (
    PriceTable,
    load_prices,
    normalize_model,
    user_prices_path,
)

__all__ = [
    "FIELDS",
    "PER",
    "Price",
    "PriceTable",
    "Tier",
    "load_prices",
    "normalize_model",
    "user_prices_path",
]
