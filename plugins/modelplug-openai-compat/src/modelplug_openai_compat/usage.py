"""Usage, server-reported cost and rate-limit headers from a Chat Completions answer."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from modelplug.types import Cost, Usage

__all__ = ["estimate_usage", "parse_usage", "rate_limit_headers", "server_cost"]

CHARS_PER_TOKEN = 4
RATE_LIMIT_PREFIXES = (
    "x-ratelimit-",  # OpenAI, LiteLLM, fair-share proxies
    "anthropic-ratelimit-",  # Anthropic-style, forwarded by proxies
    "ratelimit-",  # the IETF draft
    "x-litellm-key-",  # LiteLLM key spend and budget
    "llm_provider-x-ratelimit-",  # LiteLLM forwarding the upstream's headers
    "retry-after",
)


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def parse_usage(raw: Any) -> Usage | None:
    """Usage from a ``usage`` object, or None when it is missing, partial or invalid:
    counts must be nonnegative integers and cached tokens cannot exceed the prompt."""
    if not isinstance(raw, Mapping):
        return None
    prompt = _count(raw.get("prompt_tokens"))
    completion = _count(raw.get("completion_tokens"))
    if prompt is None or completion is None:
        return None
    details = raw.get("prompt_tokens_details")
    cached: int | None = 0
    cache_write: int | None = 0
    if isinstance(details, Mapping):
        cached = _count(details.get("cached_tokens") or 0)
        cache_write = _count(details.get("cache_write_tokens") or 0)
    if cached is None or cache_write is None or cached + cache_write > prompt:
        return None
    reasoning: int | None = 0
    out_details = raw.get("completion_tokens_details")
    if isinstance(out_details, Mapping):
        reasoning = _count(out_details.get("reasoning_tokens") or 0)
    if reasoning is None or reasoning > completion:
        reasoning = 0
    return Usage(
        input=prompt - cached - cache_write,
        output=completion,
        cache_read=cached,
        cache_write=cache_write,
        reasoning=reasoning,
    )


def estimate_usage(sent_chars: int, got_chars: int) -> Usage:
    """The 4-characters-per-token estimate, flagged as not reported."""
    return Usage(
        input=-(-sent_chars // CHARS_PER_TOKEN),
        output=-(-got_chars // CHARS_PER_TOKEN),
        reported=False,
    )


def _decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        amount = Decimal(str(value).strip())
    except (InvalidOperation, ValueError):
        return None
    return amount if amount.is_finite() and amount >= 0 else None


def server_cost(usage: Any, headers: Mapping[str, str]) -> Cost | None:
    """What the server said the response cost: LiteLLM's header (USD) or OpenRouter's
    ``usage.cost`` (credits; their docs give no exchange rate, so it is not USD)."""
    header = headers.get("x-litellm-response-cost")
    if header is not None:
        amount = _decimal(header)
        if amount is not None:
            return Cost(amount=amount, currency="USD", source="litellm x-litellm-response-cost")
    if isinstance(usage, Mapping) and "cost" in usage:
        amount = _decimal(usage.get("cost"))
        if amount is not None:
            return Cost(amount=amount, currency="credits", source="openrouter usage.cost")
    return None


def rate_limit_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The rate-limit and budget headers of a response, names lowercased."""
    return {
        name.lower(): value
        for name, value in headers.items()
        if name.lower().startswith(RATE_LIMIT_PREFIXES)
    }
