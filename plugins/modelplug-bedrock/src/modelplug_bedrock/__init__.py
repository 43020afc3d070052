"""modelplug-bedrock: AWS Bedrock's Converse API (ConverseStream over httpx2, SigV4).

Serves the provider type ``bedrock``: the ``bedrock`` provider and the user's providers
of this type. Only the hook implementations live here; the modules that do the work
(httpx2, and botocore for the credential chain, the signature and the event-stream
parser) are imported when a hook first needs them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from typing import TYPE_CHECKING

from modelplug import hookimpl

if TYPE_CHECKING:
    from modelplug import CallContext, Event, Provider, Request, Route, Settings

__all__ = [
    "modelplug_count_tokens",
    "modelplug_providers",
    "modelplug_resolve",
    "modelplug_stream",
]

TYPE = "bedrock"
# A Bedrock API key, sent as a bearer token instead of a SigV4 signature.
BEARER_ENV = "AWS_BEARER_TOKEN_BEDROCK"


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
    from modelplug import register_secret

    from .stream import stream_converse

    # A key variable the user's table names must be set; the API key of AWS's own
    # variable is optional (without it, the request is signed with AWS credentials).
    settings = client.settings
    if route.endpoint.api_key_env:
        bearer = settings.api_key(route.endpoint.api_key_env, route.provider)
    else:
        bearer = settings.getenv(BEARER_ENV) or None
        register_secret(bearer)
    return stream_converse(route, request, client, bearer)


@hookimpl
def modelplug_count_tokens(
    route: Route, content: str | Request, client: CallContext
) -> Awaitable[int | None] | None:
    if route.endpoint.type != TYPE:
        return None
    from .counting import count_tokens

    return count_tokens(route, content, client)
