"""Context window and max output per model: genai-prices' model data first, then this
plugin's own small table for what it lacks.

Own-table lookup: the longest matching id prefix wins, and a prefix matches only when
what follows it is a date, ``-latest``, a version tag (``-v1:0``), a size (``-8b``) or
an Ollama tag (``:7b``). So ``claude-opus-5-5`` never falls back to ``claude-opus-5``
and ``gpt-4o-mini`` never to ``gpt-4o``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import NamedTuple, TypeVar

from modelplug import ModelInfo, Route, Settings

from .embedding_models import EMBEDDINGS
from .index import find_window

T = TypeVar("T")

__all__ = ["LOCAL_DEFAULT_WINDOW", "WINDOWS", "Window", "lookup", "model_info", "normalize"]

# What the openai-compat presets assume a local server loads when nothing says otherwise.
LOCAL_DEFAULT_WINDOW = 32_768


class Window(NamedTuple):
    context_window: int | None
    max_output_tokens: int | None


# Vendor documentation figures, keys normalized (see normalize). Hosted models first,
# then open-weight models as their native windows (a local server may load less).
WINDOWS: dict[str, Window] = {
    # Anthropic
    "claude-3-haiku": Window(200_000, 4_096),
    "claude-3-opus": Window(200_000, 4_096),
    "claude-3-5-haiku": Window(200_000, 8_192),
    "claude-3-5-sonnet": Window(200_000, 8_192),
    "claude-3-7-sonnet": Window(200_000, 64_000),
    "claude-sonnet-4": Window(200_000, 64_000),
    "claude-sonnet-4-0": Window(200_000, 64_000),
    "claude-sonnet-4-5": Window(200_000, 64_000),
    "claude-sonnet-4-6": Window(1_000_000, 128_000),
    "claude-opus-4": Window(200_000, 32_000),
    "claude-opus-4-0": Window(200_000, 32_000),
    "claude-opus-4-1": Window(200_000, 32_000),
    "claude-opus-4-5": Window(200_000, 64_000),
    "claude-haiku-4-5": Window(200_000, 64_000),
    # OpenAI
    "gpt-4-turbo": Window(128_000, 4_096),
    "gpt-4o": Window(128_000, 16_384),
    "gpt-4o-mini": Window(128_000, 16_384),
    "gpt-4-1": Window(1_047_576, 32_768),
    "gpt-4-1-mini": Window(1_047_576, 32_768),
    "gpt-4-1-nano": Window(1_047_576, 32_768),
    "gpt-5": Window(400_000, 128_000),
    "gpt-5-mini": Window(400_000, 128_000),
    "gpt-5-nano": Window(400_000, 128_000),
    "o1": Window(200_000, 100_000),
    "o3": Window(200_000, 100_000),
    "o3-mini": Window(200_000, 100_000),
    "o4-mini": Window(200_000, 100_000),
    # Google
    "gemini-2-0-flash": Window(1_048_576, 8_192),
    "gemini-2-5-flash": Window(1_048_576, 65_536),
    "gemini-2-5-pro": Window(1_048_576, 65_536),
    "gemini-3-pro-preview": Window(1_048_576, 65_536),
    # DeepSeek
    "deepseek-chat": Window(128_000, 8_192),
    "deepseek-reasoner": Window(128_000, 64_000),
    # Open-weight models (native windows)
    "gpt-oss": Window(131_072, None),
    "llama3-1": Window(131_072, None),
    "llama3-2": Window(131_072, None),
    "llama3-3": Window(131_072, None),
    "qwen2-5-coder": Window(32_768, None),
    "qwen3": Window(40_960, None),
    "qwen3-coder": Window(262_144, None),
}

_DOTTED_VERSION = re.compile(r"(?<=\d)\.(?=\d)")
# What may follow a table key for the key to still name the same model.
_SAME_MODEL_SUFFIX = re.compile(
    r"""^(
        [-@](\d{8}|\d{4}-\d{2}-\d{2}|\d{4}|latest)   # date or -latest
        (-v\d+(:\d+)?)?                              # then a Bedrock version
      | -v\d+(:\d+)?                                 # a Bedrock version alone
      | -\d+(-\d+)?b(-[a-z0-9_-]+)?                  # a size: -8b, -30b-a3b, -7b-instruct
      | :[a-z0-9._-]+                                # an Ollama tag: :7b, :latest
    )$""",
    re.VERBOSE,
)


def normalize(model: str) -> str:
    """Lower case, no ``vendor/`` prefix, ``4.5`` written ``4-5``."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    return _DOTTED_VERSION.sub("-", name)


def lookup(model: str, table: Mapping[str, T] = WINDOWS) -> tuple[str, T] | None:  # type: ignore[assignment]
    """The entry for ``model``: the longest key that is the id itself or the id minus a
    same-model suffix (date, tag, size); None when no key names this model."""
    name = normalize(model)
    best: tuple[str, T] | None = None
    for key, window in table.items():
        same = name == key or (
            name.startswith(key) and _SAME_MODEL_SUFFIX.match(name[len(key) :]) is not None
        )
        if same and (best is None or len(key) > len(best[0])):
            best = (key, window)
    return best


def model_info(route: Route, settings: Settings) -> ModelInfo:
    """What is known of the route's window and max output, with a note when the window
    is unknown and nobody (the provider plugin, the user's settings) has set one; for an
    embedding model, its vector size and whether its server cuts a long input."""
    embedding = lookup(route.model, EMBEDDINGS)
    if embedding is None:
        return _window_info(route, settings, None)
    found = embedding[1]
    info = _window_info(route, settings, found.input_limit)
    return dataclasses.replace(
        info, embedding_dimensions=found.dimensions, embedding_truncates=found.truncates
    )


def _window_info(route: Route, settings: Settings, input_limit: int | None) -> ModelInfo:
    own = lookup(route.model, WINDOWS)
    window, max_output = own[1] if own else (input_limit, None)
    if not route.endpoint.local:
        # From the compact index for the installed genai-prices: resolving a route
        # never imports genai-prices (see modelplug_prices.index).
        found = find_window(route.provider, route.model, settings)
        if found is not None and found.context_window:
            window = found.context_window
    user = settings.model_settings(route.provider, route.model)
    if route.info.context_window is not None or (user and user.context_window is not None):
        return ModelInfo(context_window=window, max_output_tokens=max_output)
    setting = f'models."{route.name}".context_window'
    if route.endpoint.local and window is None:
        return ModelInfo(
            context_window=LOCAL_DEFAULT_WINDOW,
            max_output_tokens=max_output,
            notes=[
                f"{route.name}: context window unknown; assuming {LOCAL_DEFAULT_WINDOW:,} as "
                f"the local presets do. Set {setting} to what your server loads."
            ],
        )
    if route.endpoint.local:
        return ModelInfo(
            context_window=window,
            max_output_tokens=max_output,
            notes=[
                f"{route.name}: {window:,} is the model's native window; your server may "
                f"load less (set {setting} to match it)."
            ],
        )
    if window is None:
        return ModelInfo(
            max_output_tokens=max_output,
            notes=[
                f"{route.name}: context window unknown (neither genai-prices nor the "
                f"modelplug-prices table has it); set {setting}."
            ],
        )
    return ModelInfo(context_window=window, max_output_tokens=max_output)
