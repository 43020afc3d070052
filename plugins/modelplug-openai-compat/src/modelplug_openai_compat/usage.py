"""Usage, server-reported cost and rate-limit headers from a Chat Completions answer."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from modelplug import Cost, Usage

__all__ = ["rate_limit_headers", "server_cost", "usage_note"]

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
    """What the server said the response cost: LiteLLM's header or OpenRouter's
    ``usage.cost``, both US dollars (OpenRouter's credits are dollars: one credit is
    one USD in its docs)."""
    header = headers.get("x-litellm-response-cost")
    if header is not None:
        amount = _decimal(header)
        if amount is not None:
            return Cost(amount=amount, currency="USD", source="litellm x-litellm-response-cost")
    if isinstance(usage, Mapping) and "cost" in usage:
        amount = _decimal(usage.get("cost"))
        if amount is not None:
            return Cost(amount=amount, currency="USD", source="openrouter usage.cost")
    return None


def rate_limit_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The rate-limit and budget headers of a response, names lowercased."""
    return {
        name.lower(): value
        for name, value in headers.items()
        if name.lower().startswith(RATE_LIMIT_PREFIXES)
    }
