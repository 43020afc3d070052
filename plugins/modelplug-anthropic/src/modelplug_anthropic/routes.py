"""Which specs this plugin serves, and what it knows about Claude models' thinking.

Light on purpose: it runs on every ``resolve`` and must not import the SDK.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Literal

from modelplug import (
    Endpoint,
    ModelInfo,
    Provider,
    Route,
    Settings,
    declared_providers,
    user_endpoint,
)

__all__ = [
    "BATCH",
    "STREAMING",
    "ThinkingMode",
    "endpoint_for",
    "endpoint_types",
    "providers",
    "resolve",
    "same_model_names",
    "settings_source",
    "supports_effort",
    "thinking_mode",
]

STREAMING = "anthropic"
BATCH = "anthropic-batch"
endpoint_types = (STREAMING, BATCH)
DEFAULT_KEY_VARIABLE = "ANTHROPIC_API_KEY"
# Core's example for these names (modelplug.host.known_providers, the one place examples are
# kept; tests/test_known_providers.py checks that the two agree).
EXAMPLE = "claude-sonnet-4-6"

ThinkingMode = Literal["always", "optional"]

# Seed 000 (/thinking): the 5-series always thinks and refuses `thinking: disabled`;
# Opus 4.6 to 4.8 and Sonnet 4.6 think when asked. A date suffix does not change it.
_ALWAYS = re.compile(r"^claude-(opus|sonnet|fable|mythos)-5(\b|[-.@])")
_OPTIONAL = re.compile(r"^claude-(opus-4-[678]|sonnet-4-6)(\b|[-.@])")
# Native structured outputs (output_config.format): Opus 4.1, the 4.5 family and later.
_STRUCTURED = re.compile(
    r"^claude-(opus-4-1|(opus|sonnet|haiku)-4-[5-9]|(opus|sonnet|haiku|fable|mythos)-5)(\b|[-.@])"
)
# 4.6 has no xhigh effort level.
_NO_XHIGH = re.compile(r"^claude-(opus|sonnet)-4-6(\b|[-.@])")


def thinking_mode(model: str) -> ThinkingMode | None:
    """``always`` for models that always think, ``optional`` for models that think when
    asked, None when this table does not know the model."""
    if _ALWAYS.match(model):
        return "always"
    if _OPTIONAL.match(model):
        return "optional"
    return None


def supports_effort(model: str, effort: str) -> bool:
    """Whether ``effort`` is one of the model's levels (only the gaps we know of)."""
    return not (effort == "xhigh" and _NO_XHIGH.match(model))


def resolve(spec: str, settings: Settings, provider_type: str | None = None) -> Route | None:
    """The Route for ``anthropic/<model>``, ``anthropic-batch/<model>``, a bare
    ``claude-*`` id, or ``<name>/<model>`` where ``name`` is a provider of type
    ``anthropic`` or ``anthropic-batch`` in the user's own settings file.

    ``provider_type`` is core's word on the name's type (the user's table, else the
    declaring plugin's); a bare id belongs to ``anthropic`` while that name is ours."""
    provider, slash, model = spec.partition("/")
    if not slash and spec.startswith("claude-"):
        own = settings.providers.get(STREAMING)
        provider, model, provider_type = STREAMING, spec, own.type if own else STREAMING
    endpoint = endpoint_for(provider, provider_type, settings) if model else None
    if endpoint is None:
        return None
    return Route(
        provider=provider,
        model=model,
        endpoint=endpoint,
        info=ModelInfo(
            supports_tools=True,
            supports_images=True,
            thinking=thinking_mode(model),
            # Older models answer in a schema through a forced tool (core's tool mode).
            structured_output="native" if _STRUCTURED.match(model) else "tool",
        ),
    )


def endpoint_for(provider: str, kind: str | None, settings: Settings) -> Endpoint | None:
    """The endpoint of ``provider`` of type ``kind`` (None: not one of ours). Without a
    base URL it is Anthropic's, decided when sending. A batch provider without a table
    of its own reaches the ``anthropic`` table's server; the Batch API is Anthropic's
    own even through a loopback proxy, so it is never local by its address."""
    if kind not in endpoint_types:
        return None
    source = settings_source(provider, kind, settings) or provider
    endpoint = user_endpoint(
        settings,
        source,
        kind if source == provider else STREAMING,
        builtin=provider in endpoint_types,
        needs_base_url=False,
        api_key_env=DEFAULT_KEY_VARIABLE,
        local=False if kind == BATCH else None,
    )
    if endpoint is None or endpoint.type == kind:
        return endpoint
    return dataclasses.replace(endpoint, type=kind)


def settings_source(provider: str, kind: str, settings: Settings) -> str | None:
    """The provider whose ``[providers.NAME]`` entry sets up ``provider``'s endpoint
    (base URL, key variable, headers): its own, or for a batch provider with no entry
    of its own the ``anthropic`` one (the same server); None when there is none."""
    if provider in settings.providers:
        return provider
    # A batch provider with no entry of its own reaches the same server as `anthropic`.
    if kind == BATCH:
        fallback = settings.providers.get(STREAMING)
        if fallback is not None and fallback.type == STREAMING:
            return STREAMING
    return None


def providers(settings: Settings) -> list[Provider]:
    """The presets plus every user-defined provider of our endpoint types, all native
    (the Messages API is Anthropic's own)."""
    return [
        *declared_providers(settings, STREAMING, builtin=[STREAMING], native=True, example=EXAMPLE),
        *declared_providers(settings, BATCH, builtin=[BATCH], native=True, example=EXAMPLE),
    ]


def same_model_names(target: Route | str) -> set[str]:
    """The ``provider/model`` names whose thinking and server-tool blocks may go to
    ``target``: the target itself, and for the presets the same model through the other
    preset (the Batch API runs the same model as the streaming API)."""
    name = target.name if isinstance(target, Route) else target
    provider, _, model = name.partition("/")
    if provider in endpoint_types:
        return {f"{p}/{model}" for p in endpoint_types}
    return {name}
