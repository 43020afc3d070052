"""modelplug-openai-compat: every provider of type ``openai-compatible``.

Presets ollama, lmstudio, llamacpp, vllm, openrouter and openai, the hosted services
mistral, groq, xai, deepseek, together, fireworks, cerebras, deepinfra and perplexity,
plus the user's own providers of this type. Only the hook implementations live here; the
modules that do the work (and httpx2) are imported when a hook first needs them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from typing import TYPE_CHECKING

from modelplug import hookimpl

if TYPE_CHECKING:
    from modelplug import (
        CallContext,
        Embeddings,
        EmbedRequest,
        Event,
        KeyBudget,
        ModelInfo,
        Provider,
        Request,
        Route,
        Settings,
        TranscribeRequest,
        Transcript,
    )

__all__ = [
    "modelplug_count_tokens",
    "modelplug_embed",
    "modelplug_key_budget",
    "modelplug_list_models",
    "modelplug_probe",
    "modelplug_providers",
    "modelplug_resolve",
    "modelplug_stream",
    "modelplug_transcribe",
]

TYPE = "openai-compatible"


@hookimpl
def modelplug_resolve(spec: str, settings: Settings, provider_type: str | None) -> Route | None:
    from .providers import resolve

    return resolve(spec, settings, provider_type)


@hookimpl
def modelplug_providers(settings: Settings) -> list[Provider]:
    from .providers import provider_names

    return provider_names(settings)


@hookimpl
def modelplug_stream(
    route: Route, request: Request, client: CallContext
) -> AsyncIterator[Event] | None:
    if route.endpoint.type != TYPE:
        return None
    from .stream import stream_chat

    # Read the key now: a missing key fails before anything is sent, with
    # "Set VAR to use the provider NAME." (the key is registered for redaction).
    key = client.settings.api_key(route.endpoint.api_key_env, route.provider)
    return stream_chat(route, request, client, key)


@hookimpl
def modelplug_probe(route: Route, client: CallContext) -> Awaitable[ModelInfo] | None:
    if route.endpoint.type != TYPE:
        return None
    from .probe import probe_for

    return probe_for(route, client)


@hookimpl
def modelplug_list_models(route: Route, client: CallContext) -> Awaitable[list[str]] | None:
    if route.endpoint.type != TYPE:
        return None
    from .probe import list_models

    return list_models(client, route)


@hookimpl
def modelplug_embed(
    route: Route, request: EmbedRequest, client: CallContext
) -> Awaitable[Embeddings] | None:
    if route.endpoint.type != TYPE:
        return None
    from .embeddings import embed

    return embed(route, request, client)


@hookimpl
def modelplug_transcribe(
    route: Route, request: TranscribeRequest, client: CallContext
) -> Awaitable[Transcript] | None:
    if route.endpoint.type != TYPE:
        return None
    from .transcribe import transcribe

    return transcribe(route, request, client)


@hookimpl
def modelplug_count_tokens(
    route: Route, content: str | Request, client: CallContext
) -> Awaitable[int | None] | None:
    if route.endpoint.type != TYPE:
        return None
    from .counting import count_tokens

    return count_tokens(route, content, client)


@hookimpl
def modelplug_key_budget(
    route: Route, client: CallContext, source: str | None
) -> Awaitable[KeyBudget | None] | None:
    if route.endpoint.type != TYPE:
        return None
    from .budget import key_budget

    return key_budget(route, client, source)
