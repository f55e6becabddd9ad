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
from ctxviewer.analysis.pricing import Price, PriceTable
from ctxviewer.model import Request

PER = 1_000_000  # prices are per million tokens

Rates = tuple[float, float, float]  # USD per token: cache read, cache write, uncached


class Carrier:
    def __init__(self, prices: PriceTable) -> None:
        self.prices = prices
        self._rates: dict[tuple[Price, float], Rates] = {}

    def rates(self, req: Request) -> Rates | None:
        """USD per token of ``req``'s model when it was sent, in its prompt's tier (cache
        writes at its own 5-minute / 1-hour mix); None when the model has no price."""
        u = req.usage
        p = self.prices.lookup(req.model, req.timestamp)
        if p is None:
            return None
        if u is not None:
            p = p.at(u.prompt_tokens)
        mix = round(u.cache_creation_1h_tokens / u.cache_creation_input_tokens, 3) \
            if u is not None and u.cache_creation_input_tokens else 0.0
        key = (p, mix)
        if key not in self._rates:
            self._rates[key] = (
                p.cache_read / PER, (p.cache_write_5m * (1 - mix) + p.cache_write_1h * mix) / PER,
                p.input / PER)
        return self._rates[key]

    def span(self, req: Request, start: int, tokens: int, cost: Cost) -> None:
        """Add ``tokens`` at prompt position ``start`` of ``req`` to ``cost``."""
        u = req.usage
        if u is None or tokens <= 0:
            return
        read_end = u.cache_read_input_tokens
        write_end = read_end + u.cache_creation_input_tokens
        end = start + tokens
        read = max(0, min(end, read_end) - start)
        write = max(0, min(end, write_end) - max(start, read_end))
        cost.add(read, write, tokens - read - write, self.rates(req))

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
