"""Price a modelplug Usage with genai-prices, split per token kind.

The one mapping that matters: genai-prices' ``input_tokens`` is the *total* input,
cache reads and writes included, and it subtracts the cache parts itself before pricing
the rest at the input rate. modelplug's ``Usage.input`` excludes them (see
:mod:`modelplug.contract.types`), so the total passed on is ``input + cache_read + cache_write``
and every input token is priced exactly once.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from modelplug import Cost, Route, Usage

from .table import Found, data_source, find, genai, provider_id

__all__ = [
    "TOKEN_KINDS",
    "WEB_SEARCH_USD",
    "breakdown",
    "genai_usage",
    "local_cost",
    "price_usage",
    "tidy",
]

log = logging.getLogger("modelplug.prices")

# Breakdown keys for token prices; price_factor (0.5 for batch) scales these only.
TOKEN_KINDS = ("input", "cache_read", "cache_write", "output")
# Anthropic's price for one web search ($10 per 1,000), used when the table has none
# for a Claude model. Per-use charges are never scaled by the batch factor.
WEB_SEARCH_USD = Decimal("0.01")


def genai_usage(usage: Usage) -> Any:
    """The genai-prices Usage for a modelplug Usage.

    Reasoning tokens are not passed on: they are part of ``usage.output`` and priced as
    output, so they are counted once.
    """
    return genai().Usage(
        input_tokens=usage.total_input,
        cache_read_tokens=usage.cache_read,
        cache_write_tokens=usage.cache_write,
        output_tokens=usage.output,
        web_searches=usage.web_searches,
    )


@functools.cache
def kinds_by_price_key() -> Mapping[str, str]:
    """Each genai-prices price key (``input_mtok``, ``cache_write_1h_mtok``,
    ``web_searches_kcount``...) mapped to its breakdown kind, from genai-prices' own
    unit dimensions."""
    from genai_prices.data_units import unit_data

    kinds: dict[str, str] = {}
    for usage_key, unit in unit_data.items():
        dims = unit.get("dimensions", {})
        kinds[unit["price_key"]] = _kind(usage_key, dims)
    return kinds


def _kind(usage_key: str, dims: Mapping[str, str]) -> str:
    if dims.get("family") == "tokens":
        token_type = dims.get("token_type")
        if token_type in ("cache_read", "cache_write"):
            return token_type
        return dims.get("direction", usage_key)
    if dims.get("tool_type") == "web_search":
        return "web_search"
    return usage_key.removesuffix("_tokens")


def breakdown(model_price: Any, usage: Any) -> dict[str, Decimal]:
    """The cost per kind at full price.

    Each kind is priced by genai-prices itself with every *other* price set to zero:
    the same price keys stay set, so genai-prices splits the tokens and picks the tier
    exactly as for the whole call, and the kinds add up to its total.
    """
    kinds = kinds_by_price_key()
    prices = {
        key: value
        for key, value in vars(model_price).items()
        if not key.startswith("_") and value is not None and key in kinds
    }
    parts: dict[str, Decimal] = {}
    for kind in dict.fromkeys(kinds[key] for key in prices):
        only = type(model_price)(
            **{key: value if kinds[key] == kind else Decimal(0) for key, value in prices.items()}
        )
        parts[kind] = only.calc_price(usage)["total_price"]
    return parts


def price_usage(
    provider: str,
    model: str,
    usage: Usage,
    price_factor: float,
    *,
    when: datetime | None = None,
) -> Cost | None:
    """The cost of ``usage`` on ``provider/model`` from genai-prices, or None when it
    does not know the model (unknown, never $0)."""
    found = find(provider, model)
    if found is None:
        return None
    try:
        return _cost(found, provider, usage, price_factor, when or datetime.now(tz=UTC))
    except ValueError as exc:
        # genai-prices refused the numbers; an unknown cost beats a wrong one.
        log.warning("genai-prices could not price %s/%s: %s", provider, model, exc)
        return None


def _cost(found: Found, provider: str, usage: Usage, price_factor: float, when: datetime) -> Cost:
    model_price = found.model.get_prices(when)
    full = breakdown(model_price, genai_usage(usage))
    factor = Decimal(str(price_factor))
    parts: dict[str, Decimal] = {kind: Decimal(0) for kind in TOKEN_KINDS}
    for kind, amount in full.items():
        scaled = amount * factor if kind in TOKEN_KINDS else amount
        parts[kind] = parts.get(kind, Decimal(0)) + scaled
    if usage.web_searches and "web_search" not in full and provider_id(provider) == "anthropic":
        parts["web_search"] = usage.web_searches * WEB_SEARCH_USD
    # Token kinds always show (the CLI prints them all); other kinds only when used.
    parts = {k: tidy(v) for k, v in parts.items() if k in TOKEN_KINDS or v}
    return Cost(
        amount=tidy(sum(parts.values(), Decimal(0))),
        currency="USD",
        source=data_source(),
        breakdown=parts,
    )


def tidy(amount: Decimal) -> Decimal:
    """The same amount without trailing zeros (``0.00250`` -> ``0.0025``), and whole
    amounts without a positive exponent (``1E+1`` -> ``10``)."""
    short = amount.normalize()
    return short if int(short.as_tuple().exponent) <= 0 else short.quantize(Decimal(1))


def local_cost(route: Route) -> Cost:
    """A model on this machine costs nothing (core's settings price, when the user set
    one, has already answered before this)."""
    zero = Decimal(0)
    return Cost(
        amount=zero,
        currency="USD",
        source=f"local provider {route.provider} (free)",
        breakdown={kind: zero for kind in TOKEN_KINDS},
    )
