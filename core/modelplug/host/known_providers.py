"""Which distribution serves each well-known provider name, for install hints, and
which vendor a bare model id belongs to (:data:`BARE_FAMILIES`).

Used only when no enabled plugin serves a spec's provider: the error then says whether
the plugin is installed but switched off (and by which setting) or which distribution
to install, with an example model of that provider. Every distribution named here is a
plugin of this repository (``tests/test_known_providers.py`` checks it); a new plugin
adds its provider names here.

The examples here are the one place a provider's example model is kept: the plugins
declare the same ones, the tests take theirs from :func:`example_spec`, and the docs
name them. When a model reaches its end of life, its replacement goes here first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "BARE_FAMILIES",
    "KNOWN_PROVIDERS",
    "PRICING_DISTRIBUTION",
    "KnownProvider",
    "example_spec",
    "vendor_of",
]


@dataclass(frozen=True)
class KnownProvider:
    """The distributions that can serve a provider name, best first, and an example
    model id for hints."""

    distributions: tuple[str, ...]
    example: str


_COMPAT = "modelplug-openai-compat"
KNOWN_PROVIDERS: dict[str, KnownProvider] = {
    "anthropic": KnownProvider(("modelplug-anthropic",), "claude-sonnet-4-6"),
    "anthropic-batch": KnownProvider(("modelplug-anthropic",), "claude-sonnet-4-6"),
    "openai": KnownProvider(("modelplug-openai", _COMPAT), "gpt-5"),
    "openai-chat": KnownProvider((_COMPAT,), "gpt-4.1"),
    "ollama": KnownProvider(("modelplug-ollama", _COMPAT), "qwen3:8b"),
    "ollama-openai": KnownProvider((_COMPAT,), "qwen3:8b"),
    "lmstudio": KnownProvider((_COMPAT,), "qwen/qwen3-8b"),
    "llamacpp": KnownProvider((_COMPAT,), "gemma-3-4b-it"),
    "vllm": KnownProvider((_COMPAT,), "Qwen/Qwen3-8B"),
    "openrouter": KnownProvider((_COMPAT,), "qwen/qwen3-coder"),
    # Hosted OpenAI-compatible services, presets of modelplug-openai-compat.
    "mistral": KnownProvider((_COMPAT,), "mistral-large-latest"),
    "groq": KnownProvider((_COMPAT,), "llama-3.3-70b-versatile"),
    "xai": KnownProvider((_COMPAT,), "grok-4.3"),
    "deepseek": KnownProvider((_COMPAT,), "deepseek-v4-flash"),
    "together": KnownProvider((_COMPAT,), "meta-llama/Llama-3.3-70B-Instruct-Turbo"),
    "fireworks": KnownProvider((_COMPAT,), "accounts/fireworks/models/llama-v3p3-70b-instruct"),
    "cerebras": KnownProvider((_COMPAT,), "gpt-oss-120b"),
    "deepinfra": KnownProvider((_COMPAT,), "meta-llama/Llama-3.3-70B-Instruct-Turbo"),
    "perplexity": KnownProvider((_COMPAT,), "sonar"),
    "gemini": KnownProvider(("modelplug-gemini",), "gemini-2.5-flash"),
    "vertex": KnownProvider(("modelplug-gemini",), "gemini-2.5-flash"),
}
PRICING_DISTRIBUTION = "modelplug-prices"


def example_spec(provider: str) -> str:
    """``provider/<its example model>``, e.g. ``example_spec("anthropic")``."""
    return f"{provider}/{KNOWN_PROVIDERS[provider].example}"


# A bare model id (no ``provider/``) is read as ``<provider>/<id>`` when it opens one of
# these vendors' model families: one rule for every vendor, applied by core before any
# plugin sees the spec, so ``gpt-5`` works as ``claude-sonnet-4-6`` does. Anything else
# bare goes to the plugins as it is (``echo``, an in-house adapter's own names).
# gpt-oss is OpenAI's open-weights family, served by local servers, not OpenAI's API.
BARE_FAMILIES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"claude-"), "anthropic"),
    (re.compile(r"gemini-"), "gemini"),
    (re.compile(r"(gpt-(?!oss)|chatgpt-|codex-|text-embedding-|o[1-9][0-9]*(-|$))"), "openai"),
)


def vendor_of(model: str) -> str | None:
    """The provider a bare model id belongs to by its family, or None."""
    for family, provider in BARE_FAMILIES:
        if family.match(model):
            return provider
    return None
