"""modelplug-openai: OpenAI through the Responses API (``POST /v1/responses``).

Serves ``openai/<model>`` (declared native, so it wins over openai-compat's generic
``openai`` preset when both are installed) and the user's own providers of type
``openai-responses`` (Azure OpenAI's v1 endpoint, a LiteLLM proxy). Only the hook
implementations live here; httpx2 and the modules that do the work are imported when a
hook first needs them.
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
        Provider,
        Request,
        Route,
        Settings,
        TranscribeRequest,
        Transcript,
    )

__all__ = [
    "TYPE",
    "modelplug_count_tokens",
    "modelplug_embed",
    "modelplug_providers",
    "modelplug_resolve",
    "modelplug_stream",
    "modelplug_transcribe",
]

TYPE = "openai-responses"


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
    from .stream import stream_responses

    # Read the key now: a missing key fails before anything is sent, with
    # "Set VAR to use the provider NAME." (and the key is registered for redaction).
    key = client.settings.api_key(route.endpoint.api_key_env, route.provider)
    return stream_responses(route, request, client, key)


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
