"""The anthropic SDK, loaded on the first call, and the clients made from it.

Importing the SDK costs about a second, so nothing here runs at plugin import. The SDK
never retries on its own (``max_retries=0``): retries belong to the fallback policy,
which counts and announces them.

Timeouts: long thinking can keep a stream silent for minutes, so the read timeout —
the longest wait between two bytes of a streamed body — is 20 minutes, while the wait
until the response starts (its headers) is limited to 10 minutes by the caller.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from modelplug.settings import Settings

from .routes import endpoint_types, settings_source

if TYPE_CHECKING:
    import httpx2
    from modelplug.client import Client
    from modelplug.types import Request, Route

__all__ = [
    "DEFAULT_BASE_URL",
    "LIMITS",
    "Limits",
    "cache_enabled",
    "http_timeout",
    "load_sdk",
    "make_http_client",
    "sdk_client",
    "split_stream_params",
]

DEFAULT_BASE_URL = "https://api.anthropic.com"
HTTP_CLIENT_KEY = "modelplug-anthropic"


@dataclass
class Limits:
    """Time limits, in seconds. Tests replace :data:`LIMITS` to avoid real waits."""

    start: float = 600.0  # until the response starts (headers received)
    idle: float = 1200.0  # between bytes of a response body
    connect: float = 10.0
    write: float = 600.0


LIMITS = Limits()


@functools.cache
def load_sdk() -> Any:
    """The ``anthropic`` module, imported once, on first use."""
    import anthropic

    return anthropic


def http_timeout(limits: Limits) -> httpx2.Timeout:
    import httpx2

    # The pool wait counts toward the start limit; the caller enforces that limit.
    return httpx2.Timeout(
        connect=limits.connect, read=limits.idle, write=limits.write, pool=limits.start
    )


def make_http_client(limits: Limits) -> httpx2.AsyncClient:
    """The shared httpx2 client (one per event loop, closed by ``Client.aclose``)."""
    import httpx2

    return httpx2.AsyncClient(
        timeout=http_timeout(limits),
        limits=httpx2.Limits(max_connections=100, max_keepalive_connections=20),
        # Never follow a redirect: it would carry x-api-key and the user's headers to
        # wherever the server points (httpx2 strips only Authorization off-host).
        follow_redirects=False,
    )


def sdk_client(route: Route, client: Client, key: str | None) -> Any:
    """An AsyncAnthropic for ``route`` on the shared httpx2 client.

    The base URL is always passed, so the SDK never takes one from ANTHROPIC_BASE_URL:
    only the user's own settings file may point the key at another server. Typed Any:
    callers tell events and blocks apart by their ``type`` field, which the SDK's
    unions do not narrow on.
    """
    anthropic = load_sdk()
    limits = LIMITS
    http = client.async_http(HTTP_CLIENT_KEY, lambda: make_http_client(limits))
    sdk = anthropic.AsyncAnthropic(
        api_key=key,
        base_url=route.endpoint.base_url or DEFAULT_BASE_URL,
        http_client=http,
        max_retries=0,
        timeout=http_timeout(limits),
        default_headers=_headers(route, client.settings) or None,
    )
    return sdk


def _headers(route: Route, settings: Settings) -> dict[str, str]:
    """The user's header values for the route, read now: a Route holds only names."""
    source = settings_source(route.provider, route.endpoint.type, settings)
    return settings.provider_headers(source) if source is not None else {}


@functools.cache
def _stream_kwargs() -> frozenset[str]:
    """The body fields ``messages.stream`` takes as keyword arguments."""
    anthropic = load_sdk()
    signature = inspect.signature(anthropic.resources.messages.AsyncMessages.stream)
    skip = {"self", "extra_headers", "extra_query", "extra_body", "timeout", "output_format"}
    return frozenset(name for name in signature.parameters if name not in skip)


def split_stream_params(params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(keyword arguments for ``messages.stream``, the rest for ``extra_body``)."""
    known = _stream_kwargs()
    kwargs = {k: v for k, v in params.items() if k in known}
    extra = {k: v for k, v in params.items() if k not in known}
    return kwargs, extra


def cache_enabled(request: Request, settings: Settings) -> bool:
    """Prompt caching: the request's ``cache`` wins, then ``[anthropic] cache``, then on."""
    if request.cache is not None:
        return request.cache
    value = settings.plugin_options(endpoint_types[0]).get("cache")
    if value is None:
        return True
    if not isinstance(value, bool):
        from modelplug.errors import ConfigError

        raise ConfigError(f"[anthropic] cache must be true or false, not {value!r}")
    return value
