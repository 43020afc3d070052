"""modelplug-gemini: Google Gemini through its own APIs.

Serves ``gemini/<model>`` (and bare ``gemini-*`` ids) through the Gemini API and
``vertex/<model>`` through Vertex AI, both over REST with httpx2. Only the hook
implementations live here: httpx2 is imported on the first call, google-auth on the
first Vertex call.
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
        TranscribeRequest,
        Transcript,
    )

__all__ = [
    "modelplug_count_tokens",
    "modelplug_embed",
    "modelplug_probe",
    "modelplug_providers",
    "modelplug_resolve",
    "modelplug_stream",
    "modelplug_transcribe",
]

_TYPES = ("gemini", "vertex")


@hookimpl
def modelplug_resolve(spec: str, settings: Settings, provider_type: str | None) -> Route | None:
    from .routes import resolve

    return resolve(spec, settings, provider_type)


@hookimpl
def modelplug_providers(settings: Settings) -> list[Provider]:
    from .routes import providers

    return providers(settings)


@hookimpl
def modelplug_stream(
    route: Route, request: Request, client: CallContext
) -> AsyncIterator[Event] | None:
    if route.endpoint.type not in _TYPES:
        return None
    from .auth import api_key
    from .stream import stream_generate

    if route.endpoint.type == "gemini":
        # Read the key now: a missing one fails before anything is sent.
        api_key(client, route)
    return stream_generate(route, request, client)


@hookimpl
def modelplug_probe(route: Route, client: CallContext) -> Awaitable[ModelInfo] | None:
    # Vertex AI's publisher models endpoint does not report token limits.
    if route.endpoint.type != "gemini":
        return None
    from .probe import probe_model

    return probe_model(route, client)


@hookimpl
def modelplug_transcribe(
    route: Route, request: TranscribeRequest, client: CallContext
) -> Awaitable[Transcript] | None:
    if route.endpoint.type not in _TYPES:
        return None
    from .auth import api_key
    from .transcribe import transcribe

    if route.endpoint.type == "gemini":
        api_key(client, route)  # a missing key fails before anything is sent
    return transcribe(route, request, client)


@hookimpl
def modelplug_embed(
    route: Route, request: EmbedRequest, client: CallContext
) -> Awaitable[Embeddings] | None:
    if route.endpoint.type not in _TYPES:
        return None
    from .auth import api_key
    from .embeddings import embed

    if route.endpoint.type == "gemini":
        api_key(client, route)  # a missing key fails before anything is sent
    return embed(route, request, client)


@hookimpl
def modelplug_count_tokens(
    route: Route, content: str | Request, client: CallContext
) -> Awaitable[int | None] | None:
    if route.endpoint.type not in _TYPES:
        return None
    from .counting import count_tokens

    return count_tokens(route, content, client)
