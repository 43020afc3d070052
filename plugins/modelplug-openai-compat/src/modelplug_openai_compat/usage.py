"""Usage, server-reported cost and rate-limit headers from a Chat Completions answer."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from modelplug import Cost, Usage
from modelplug_kit import usage_from_openai

__all__ = ["rate_limit_headers", "read_usage", "server_cost", "usage_note"]

# xAI's usage.cost_in_usd_ticks: ten billion ticks to the US dollar (a grok-3-mini answer
# of 1,466,250 ticks is $0.000146625, its token prices applied to its usage).
XAI_TICKS_PER_USD = Decimal(10_000_000_000)

RATE_LIMIT_PREFIXES = (
    "x-ratelimit-",  # OpenAI, LiteLLM, fair-share proxies
    "anthropic-ratelimit-",  # Anthropic-style, forwarded by proxies
    "ratelimit-",  # the IETF draft
    "x-litellm-key-",  # LiteLLM key spend and budget
    "llm_provider-x-ratelimit-",  # LiteLLM forwarding the upstream's headers
    "retry-after",
)


def usage_note(raw: Any, usage: Usage) -> str | None:
    """Which stated rule of ``usage_from_openai`` read ``raw`` as ``usage``, in words,
    for ``Response.metadata["usage_note"]`` (None for the plain shape)."""
    prompt, completion = raw["prompt_tokens"], raw["completion_tokens"]
    notes = []
    cached = usage.cache_read + usage.cache_write
    if cached > prompt:
        notes.append(
            f"the cached tokens ({cached}) exceed prompt_tokens ({prompt}): prompt_tokens is "
            "taken as the uncached input and the cache counts are kept as reported"
        )
    if usage.reasoning and usage.output == completion + usage.reasoning:
        notes.append(
            f"reasoning_tokens ({usage.reasoning}) are outside completion_tokens "
            f"({completion}), as total_tokens shows: output includes them"
        )
    return "; ".join(notes) or None


def _decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        amount = Decimal(str(value).strip())
    except (InvalidOperation, ValueError):
        return None
    return amount if amount.is_finite() and amount >= 0 else None


def server_cost(usage: Any, headers: Mapping[str, str]) -> Cost | None:
    """What the server said the response cost, in US dollars: LiteLLM's header,
    OpenRouter's ``usage.cost`` (its credits are dollars: one credit is one USD in its
    docs), Perplexity's ``usage.cost.total_cost``, xAI's ``usage.cost_in_usd_ticks`` or
    DeepInfra's ``usage.estimated_cost``."""
    header = headers.get("x-litellm-response-cost")
    if header is not None:
        amount = _decimal(header)
        if amount is not None:
            return Cost(amount=amount, currency="USD", source="litellm x-litellm-response-cost")
    if not isinstance(usage, Mapping):
        return None
    for amount, source in _usage_costs(usage):
        if amount is not None:
            return Cost(amount=amount, currency="USD", source=source)
    return None


def _usage_costs(usage: Mapping[str, Any]) -> list[tuple[Decimal | None, str]]:
    """Each service's cost field in ``usage``, read (None where absent or no amount)."""
    cost = usage.get("cost")
    ticks = _decimal(usage.get("cost_in_usd_ticks"))
    return [
        (_decimal(cost), "openrouter usage.cost"),
        (
            _decimal(cost.get("total_cost")) if isinstance(cost, Mapping) else None,
            "perplexity usage.cost.total_cost",
        ),
        (None if ticks is None else ticks / XAI_TICKS_PER_USD, "xai usage.cost_in_usd_ticks"),
        (_decimal(usage.get("estimated_cost")), "deepinfra usage.estimated_cost"),
    ]


def read_usage(raw: Any) -> Usage | None:
    """``usage_from_openai`` with two services' own fields: DeepSeek's cache count as
    ``prompt_cache_hit_tokens`` (when no ``prompt_tokens_details.cached_tokens`` says
    it) and Perplexity's searches as ``num_search_queries``."""
    if not isinstance(raw, Mapping):
        return None
    details = raw.get("prompt_tokens_details")
    hits = raw.get("prompt_cache_hit_tokens")
    counted = isinstance(hits, int) and not isinstance(hits, bool) and hits >= 0
    if counted and not (isinstance(details, Mapping) and "cached_tokens" in details):
        details = dict(details) if isinstance(details, Mapping) else {}
        raw = {**raw, "prompt_tokens_details": {**details, "cached_tokens": hits}}
    usage = usage_from_openai(raw)
    searches = raw.get("num_search_queries")
    if usage is None or not isinstance(searches, int) or isinstance(searches, bool):
        return usage
    return usage.model_copy(update={"web_searches": max(searches, 0)})


def rate_limit_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The rate-limit and budget headers of a response, names lowercased."""
    return {
        name.lower(): value
        for name, value in headers.items()
        if name.lower().startswith(RATE_LIMIT_PREFIXES)
    }
