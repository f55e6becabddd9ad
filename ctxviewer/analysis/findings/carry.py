"""What carrying some tokens in a request cost, priced by the tier the API billed.

The API bills a prompt as a prefix read from the cache, then the part written
to the cache, then uncached input, in prompt order (tools, system, messages).
``Carrier.span`` prices tokens at a known position of that order (tool
definitions, which lead the prompt); ``Carrier.share`` prices tokens whose
position is not worked out in proportion to the request's own tiers.
Positions are the estimator's counts, clamped to the API's prompt size.
"""

from __future__ import annotations

from ctxviewer.analysis.findings.model import Cost
from ctxviewer.analysis.insights.cost import Rates, billed_rates, split_billed
from ctxviewer.analysis.pricing import PriceTable
from ctxviewer.model import Request


class Carrier:
    def __init__(self, prices: PriceTable) -> None:
        self.prices = prices
        self._rates: dict[int, tuple[Request, Rates | None]] = {}  # id(request) -> its rates

    def rates(self, req: Request) -> Rates | None:
        """USD per token of ``req``'s prompt as billed (``insights.cost.billed_rates``),
        worked out once per request."""
        known = self._rates.get(id(req))
        if known is None or known[0] is not req:
            known = self._rates[id(req)] = (req, billed_rates(req, self.prices))
        return known[1]

    def span(self, req: Request, start: int, tokens: int, cost: Cost) -> None:
        """Add ``tokens`` at prompt position ``start`` of ``req`` to ``cost``."""
        if req.usage is None or tokens <= 0:
            return
        cost.add(*split_billed(req, start, tokens), self.rates(req))

    def share(self, req: Request, tokens: int, cost: Cost) -> None:
        """Add ``tokens`` of ``req`` to ``cost``, split as the request's prompt was billed."""
        u = req.usage
        if u is None or tokens <= 0:
            return
        total = u.prompt_tokens
        if not total:
            cost.add(0, 0, tokens, self.rates(req))
            return
        read = round(tokens * u.cache_read_input_tokens / total)
        write = round(tokens * u.cache_creation_input_tokens / total)
        read, write = min(read, tokens), min(write, tokens - min(read, tokens))
        cost.add(read, write, tokens - read - write, self.rates(req))

    def rewrite_usd(self, req: Request, tokens: int) -> float | None:
        """What writing ``tokens`` to the cache again cost over reading them from it."""
        r = self.rates(req)
        return None if r is None else tokens * (r[1] - r[0])
