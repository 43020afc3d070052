"""The shared httpx2 client, this plugin's options with it, and the request headers.

httpx2 is imported here, on first use, never when the plugin module is imported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from modelplug.plugin import http_limits, read_options

from .options import SECTION, Options
from .providers import is_azure

if TYPE_CHECKING:
    import httpx2
    from modelplug.plugin import Client, Route, Settings

__all__ = ["HTTP_KEY", "request_headers", "shared_http"]

HTTP_KEY = "modelplug-openai"


@dataclass(frozen=True)
class _SharedHTTP:
    """An event loop's AsyncClient and the options it was made with: the options are
    read and checked once, not on every call."""

    http: httpx2.AsyncClient
    options: Options

    async def aclose(self) -> None:
        # Client.aclose closes what async_http keeps, and that is this pair.
        await self.http.aclose()


def shared_http(client: Client) -> tuple[httpx2.AsyncClient, Options]:
    """One AsyncClient per event loop (a connection pool belongs to one loop)."""

    def make() -> _SharedHTTP:
        import httpx2

        options = read_options(client.settings, SECTION, Options)
        timeout = httpx2.Timeout(
            connect=options.connect_timeout,
            read=options.read_timeout,
            write=options.write_timeout,
            pool=options.connect_timeout,
        )
        limits = http_limits(client.settings)
        http = httpx2.AsyncClient(timeout=timeout, follow_redirects=False, limits=limits)
        return _SharedHTTP(http, options)

    shared = client.async_http(HTTP_KEY, make)
    return shared.http, shared.options


def request_headers(route: Route, key: str | None, settings: Settings) -> dict[str, str]:
    """The provider's configured headers and the key: ``Authorization: Bearer`` for
    OpenAI and proxies, ``api-key`` for Azure OpenAI."""
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    # A route holds header names only; the values come from the user's settings now.
    headers.update(settings.provider_headers(route.provider))
    if key:
        name = "api-key" if is_azure(route.endpoint) else "authorization"
        # One header of that name: the key wins over a configured one.
        headers = {k: v for k, v in headers.items() if k.lower() != name}
        headers[name] = key if name == "api-key" else f"Bearer {key}"
    return headers
