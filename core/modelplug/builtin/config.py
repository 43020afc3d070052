"""Prices set in settings (the user's override, or a preset's price such as 0 for local
servers) win over any pricing table: this plugin's price hook runs first."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from modelplug.contract.hookspecs import hookimpl

if TYPE_CHECKING:
    from modelplug.contract.routes import Price, Route
    from modelplug.contract.types import Cost, Usage

MILLION = Decimal(1_000_000)


def cost_from_price(price: Price, usage: Usage, price_factor: float, source: str) -> Cost:
    """Cost of ``usage`` at ``price`` (USD per million tokens). Cache prices missing from
    ``price`` fall back to the input price; web searches are never scaled by the factor."""
    from modelplug.contract.types import Cost

    factor = Decimal(str(price_factor))
    cache_read = price.cache_read if price.cache_read is not None else price.input
    cache_write = price.cache_write if price.cache_write is not None else price.input
    breakdown = {
        "input": usage.input * price.input / MILLION * factor,
        "cache_read": usage.cache_read * cache_read / MILLION * factor,
        "cache_write": usage.cache_write * cache_write / MILLION * factor,
        "output": usage.output * price.output / MILLION * factor,
    }
    if usage.web_searches and price.web_search is not None:
        breakdown["web_search"] = usage.web_searches * price.web_search
    breakdown = {k: v for k, v in breakdown.items() if v}
    return Cost(amount=sum(breakdown.values(), Decimal(0)), source=source, breakdown=breakdown)


@hookimpl(tryfirst=True)
def modelplug_price(route: Route, usage: Usage, price_factor: float) -> Cost | None:
    price = route.info.price
    if price is None:
        return None
    return cost_from_price(price, usage, price_factor, route.info.price_source or "settings")
