"""The anthropic SDK for the Batch API, loaded on the first batch call.

Importing the SDK costs seconds, so nothing here runs at plugin import, and the
Messages stream does not use it at all (:mod:`modelplug_anthropic.streaming`). The SDK
runs on the kit's shared httpx2 client (one pool per plugin and event loop) and never
retries on its own (``max_retries=0``): retries belong to the fallback policy, which
counts and announces them. Timeouts come from ``[anthropic]``.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from .http import HTTP, base_url
from .routes import settings_source

if TYPE_CHECKING:
    import httpx2
    from modelplug import CallContext, Route, Settings

    from .options import Options

__all__ = ["load_sdk", "sdk_client", "shared"]


@functools.cache
def load_sdk() -> Any:
    """The ``anthropic`` module, imported once, on first use."""
    import anthropic

    return anthropic


def shared(client: CallContext) -> Any:
    """The running loop's shared httpx2 client (``.http``) and options (``.options``)."""
    return HTTP.shared(client)


def sdk_client(route: Route, client: CallContext, key: str | None) -> tuple[Any, Options]:
    """An AsyncAnthropic for ``route`` on the shared httpx2 client, and the options.

    The base URL is always passed, so the SDK never takes one from ANTHROPIC_BASE_URL:
    only the user's own settings file may point the key at another server. Typed Any:
    the SDK is loaded lazily and its unions do not narrow on ``type``.
    """
    anthropic = load_sdk()
    pair = HTTP.shared(client)
    sdk = anthropic.AsyncAnthropic(
        api_key=key,
        base_url=base_url(route),
        http_client=pair.http,
        max_retries=0,
        timeout=_timeout(pair.options),
        default_headers=_headers(route, client.settings) or None,
    )
    return sdk, pair.options


def _timeout(options: Options) -> httpx2.Timeout:
    import httpx2

    return httpx2.Timeout(
        connect=options.connect_timeout,
        read=options.read_timeout,
        write=options.write_timeout,
        pool=options.connect_timeout,
    )


def _headers(route: Route, settings: Settings) -> dict[str, str]:
    """The user's header values for the route, read now: a Route holds only names. A
    batch provider with no entry of its own takes the ``anthropic`` entry's."""
    source = settings_source(route.provider, route.endpoint.type, settings)
    return settings.provider_headers(source) if source is not None else {}
