"""modelplug-ollama: Ollama through its native API (``POST /api/chat``, NDJSON).

Serves the provider type ``ollama``: the ``ollama`` provider (declared native, so it
wins over openai-compat's preset of the same name) and the user's providers of this
type. Only the hook implementations live here; the modules that do the work (and
httpx2) are imported when a hook first needs them.
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
        ModelInfo,
        Provider,
        Request,
        Route,
        Settings,
    )

__all__ = [
    "modelplug_embed",
    "modelplug_list_models",
    "modelplug_probe",
    "modelplug_providers",
    "modelplug_resolve",
    "modelplug_stream",
]

TYPE = "ollama"


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

    # No key by default; a hosted Ollama behind a proxy names one in the user's file.
    # Read now, so a missing one fails before anything is sent (and is redacted).
    key = client.settings.api_key(route.endpoint.api_key_env, route.provider)
    return stream_chat(route, request, client, key)


@hookimpl
def modelplug_probe(route: Route, client: CallContext) -> Awaitable[ModelInfo] | None:
    if route.endpoint.type != TYPE:
        return None
    from .probe import probe

    return probe(route, client)


@hookimpl
def modelplug_list_models(route: Route, client: CallContext) -> Awaitable[list[str]] | None:
    if route.endpoint.type != TYPE:
        return None
    from .probe import list_models

    return list_models(route, client)


@hookimpl
def modelplug_embed(
    route: Route, request: EmbedRequest, client: CallContext
) -> Awaitable[Embeddings] | None:
    if route.endpoint.type != TYPE:
        return None
    from .embeddings import embed

    key = client.settings.api_key(route.endpoint.api_key_env, route.provider)
    return embed(route, request, client, key)
