"""The anthropic SDK, loaded on the first call, and the clients made from it.

Importing the SDK costs about a second, so nothing here runs at plugin import. The SDK
never retries on its own (``max_retries=0``): retries belong to the fallback policy,
which counts and announces them. Timeouts come from ``[anthropic]``
(:mod:`modelplug_anthropic.options`).
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import options as options_module
from .routes import settings_source

if TYPE_CHECKING:
    import httpx2
    from modelplug.plugin import Client, Settings
    from modelplug.types import Request, Route

    from .options import Options

__all__ = [
    "DEFAULT_BASE_URL",
    "Shared",
    "cache_enabled",
    "load_sdk",
    "make_http_client",
    "sdk_client",
    "shared",
    "split_params",
]

DEFAULT_BASE_URL = "https://api.anthropic.com"
HTTP_CLIENT_KEY = "modelplug-anthropic"


@functools.cache
def load_sdk() -> Any:
    """The ``anthropic`` module, imported once, on first use."""
    import anthropic

    return anthropic


def make_http_client(options: Options, settings: Settings) -> httpx2.AsyncClient:
    """The shared httpx2 client (one per event loop, closed by ``Client.aclose``), its
    pool sized by core's ``[http]`` table, not httpx2's default of 100 connections."""
    import httpx2
    from modelplug.plugin import http_limits

    return httpx2.AsyncClient(
        timeout=options_module.http_timeout(options),
        limits=http_limits(settings),
        # Never follow a redirect: it would carry x-api-key and the user's headers to
        # wherever the server points (httpx2 strips only Authorization off-host).
        follow_redirects=False,
    )


@dataclass(frozen=True)
class Shared:
    """One event loop's httpx2 client and the options it was made with, kept together
    so ``[anthropic]`` is read (and warned about) once, not on every call."""

    http: httpx2.AsyncClient
    options: Options

    async def aclose(self) -> None:
        # Client.aclose closes what async_http keeps, and that is this pair.
        await self.http.aclose()


def shared(client: Client) -> Shared:
    """The running loop's :class:`Shared` pair for ``client``, made on first use."""

    def make() -> Shared:
        options = options_module.read(client.settings)
        return Shared(make_http_client(options, client.settings), options)

    found: Shared = client.async_http(HTTP_CLIENT_KEY, make)
    return found


def sdk_client(route: Route, client: Client, key: str | None) -> tuple[Any, Options]:
    """An AsyncAnthropic for ``route`` on the shared httpx2 client, and the options.

    The base URL is always passed, so the SDK never takes one from ANTHROPIC_BASE_URL:
    only the user's own settings file may point the key at another server. Typed Any:
    the SDK is loaded lazily and its unions do not narrow on ``type``.
    """
    anthropic = load_sdk()
    pair = shared(client)
    sdk = anthropic.AsyncAnthropic(
        api_key=key,
        base_url=route.endpoint.base_url or DEFAULT_BASE_URL,
        http_client=pair.http,
        max_retries=0,
        timeout=options_module.http_timeout(pair.options),
        default_headers=_headers(route, client.settings) or None,
    )
    return sdk, pair.options


def _headers(route: Route, settings: Settings) -> dict[str, str]:
    """The user's header values for the route, read now: a Route holds only names."""
    source = settings_source(route.provider, route.endpoint.type, settings)
    return settings.provider_headers(source) if source is not None else {}


@functools.cache
def _create_kwargs() -> frozenset[str]:
    """The body fields ``messages.create`` takes as keyword arguments."""
    anthropic = load_sdk()
    signature = inspect.signature(anthropic.resources.messages.AsyncMessages.create)
    skip = {"self", "extra_headers", "extra_query", "extra_body", "timeout", "stream"}
    return frozenset(name for name in signature.parameters if name not in skip)


def split_params(params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(keyword arguments for ``messages.create``, the rest for ``extra_body``)."""
    known = _create_kwargs()
    kwargs = {k: v for k, v in params.items() if k in known}
    extra = {k: v for k, v in params.items() if k not in known}
    return kwargs, extra


def cache_enabled(request: Request, options: Options) -> bool:
    """Prompt caching: the request's ``cache`` wins, then ``[anthropic] cache``."""
    if request.cache is not None:
        return request.cache
    return options.cache
