"""modelplug-anthropic: Claude.

Serves ``anthropic/<model>`` (and bare ``claude-*`` ids) with the Messages API streamed
over the kit's HTTP path, and ``anthropic-batch/<model>`` through the Batch API (the
anthropic SDK) at half the token price. Only the hook implementations live here; httpx2
is imported on the first call, the SDK on the first batch call.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from typing import TYPE_CHECKING

from modelplug import hookimpl

if TYPE_CHECKING:
    from modelplug import CallContext, ErrorClass, Event, Provider, Request, Route, Settings


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
    from .routes import BATCH, STREAMING

    if route.endpoint.type not in (STREAMING, BATCH):
        return None
    # Read the key now, so a missing one fails before any network call.
    key = client.settings.api_key(route.endpoint.api_key_env, route.provider)
    if route.endpoint.type == BATCH:
        from .batch import stream_batch

        return stream_batch(route, request, client, key)
    from .streaming import stream_messages

    return stream_messages(route, request, client, key)


@hookimpl
def modelplug_classify_error(error: BaseException, route: Route | None) -> ErrorClass | None:
    from .errors import classify
    from .routes import endpoint_types

    return classify(error, ours=route is not None and route.endpoint.type in endpoint_types)


@hookimpl
def modelplug_count_tokens(
    route: Route, content: str | Request, client: CallContext
) -> Awaitable[int | None] | None:
    from .routes import BATCH, STREAMING

    if route.endpoint.type not in (STREAMING, BATCH):
        return None
    from .counting import count_tokens

    return count_tokens(route, content, client)
