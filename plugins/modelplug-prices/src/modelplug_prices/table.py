"""genai-prices, loaded on first use: which of its providers a route means, the model a
route names, and the name of the price data in use."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import UTC, datetime
from types import ModuleType
from typing import Any

# modelplug provider names whose genai-prices id differs. Names not listed go to
# genai-prices as they are; it also matches ids loosely itself ("xai" -> "x-ai").
PROVIDER_IDS = {
    "anthropic-batch": "anthropic",
    # A user's provider of modelplug-openai's type (a proxy) is priced as OpenAI.
    "openai-responses": "openai",
    "claude": "anthropic",
    "gemini": "google",
    "vertex": "google",
    "bedrock": "aws",
    "xai": "x-ai",
    "grok": "x-ai",
    "moonshot": "moonshotai",
    "together-ai": "together",
}


@functools.cache
def genai() -> ModuleType:
    """The genai_prices package, imported the first time it is needed."""
    import genai_prices

    return genai_prices


def provider_id(provider: str) -> str:
    """The genai-prices provider id for a modelplug provider name."""
    name = provider.strip().lower()
    return PROVIDER_IDS.get(name, name)


@dataclass(frozen=True)
class Found:
    """A model genai-prices knows: its provider and model entries (genai-prices types)."""

    provider: Any
    model: Any


def candidate_refs(model: str) -> list[str]:
    """The ids to try, in order: the model id as the route names it, then without a
    leading ``vendor/`` prefix (``openai/gpt-4o`` served by ``openai``)."""
    refs = [model]
    if "/" in model:
        refs.append(model.split("/", 1)[1])
    return refs


def find(provider: str, model: str) -> Found | None:
    """The model under the route's provider, matched as genai-prices matches (dated ids,
    ``vendor/`` ids on OpenRouter, ...), or None when genai-prices does not know it."""
    snapshot = genai().data_snapshot.get_snapshot()
    pid = provider_id(provider)
    for ref in candidate_refs(model):
        try:
            found_provider, found_model = snapshot.find_provider_model(ref, None, pid, None)
        except LookupError:
            continue
        return Found(found_provider, found_model)
    return None


def data_source() -> str:
    """The table and version a price came from, e.g. ``genai-prices 0.2.3 (data 0.2.3,
    bundled)`` or ``genai-prices 0.2.3 (data live, fetched 2026-11-30 00:12 UTC)``."""
    module = genai()
    version = module.__version__
    snapshot = module.data_snapshot.get_snapshot()
    if snapshot.from_auto_update:
        fetched: datetime = snapshot.timestamp
        stamp = fetched.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
        return f"genai-prices {version} (data live, fetched {stamp})"
    return f"genai-prices {version} (data {version}, bundled)"
