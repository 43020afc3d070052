"""The shared httpx2 client and this plugin's options (``[openai-compat]`` in settings).

httpx2 is imported here, on first use, never when the plugin module is imported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from modelplug.plugin import read_options

if TYPE_CHECKING:
    import httpx2
    from modelplug.plugin import Client, Route, Settings

__all__ = ["Options", "options_of", "request_headers", "shared_http"]

SECTION = "openai-compat"
HTTP_KEY = "modelplug-openai-compat"
POSITIVE = {"gt": 0}


@dataclass(frozen=True)
class Options:
    """``connect_timeout``: seconds to open a connection. ``read_timeout``: the longest
    silence between two reads of an answer before the call fails as transient (a local
    server evaluating a long prompt may say nothing for minutes). ``write_timeout``:
    seconds to send the request."""

    connect_timeout: float = field(default=10.0, metadata=POSITIVE)
    read_timeout: float = field(default=300.0, metadata=POSITIVE)
    write_timeout: float = field(default=60.0, metadata=POSITIVE)


def options_of(client: Client) -> Options:
    """The ``[openai-compat]`` table (the kit's rules: a wrong value is a ConfigError
    naming the key, an unknown key a warning)."""
    return read_options(client.settings, SECTION, Options)


def timeout_of(options: Options) -> httpx2.Timeout:
    import httpx2

    return httpx2.Timeout(
        connect=options.connect_timeout,
        read=options.read_timeout,
        write=options.write_timeout,
        pool=options.connect_timeout,
    )


@dataclass(frozen=True)
class _SharedHTTP:
    """An event loop's AsyncClient and the options it was made with, kept together so
    the options are read and checked once, not on every call."""

    http: httpx2.AsyncClient
    options: Options

    async def aclose(self) -> None:
        # Client.aclose closes what async_http keeps, and that is this pair.
        await self.http.aclose()


def shared_http(client: Client) -> tuple[httpx2.AsyncClient, Options]:
    """One AsyncClient per event loop (connection pools belong to one loop). Invalid
    options raise ConfigError here, on every call, since nothing is kept until they
    are valid."""

    def make() -> _SharedHTTP:
        import httpx2
        from modelplug.plugin import http_limits

        options = options_of(client)
        http = httpx2.AsyncClient(
            timeout=timeout_of(options), follow_redirects=False, limits=http_limits(client.settings)
        )
        return _SharedHTTP(http, options)

    shared = client.async_http(HTTP_KEY, make)
    return shared.http, shared.options


def request_headers(
    route: Route, key: str | None, settings: Settings, accept: str = "text/event-stream"
) -> dict[str, str]:
    """What every request to the provider sends: its configured headers (their values
    read from ``settings`` now: a route holds only their names), and the key as
    ``Authorization: Bearer`` when there is one."""
    headers = {"content-type": "application/json", "accept": accept}
    headers.update(settings.provider_headers(route.provider))
    if key:
        # One Authorization header: the key wins over a header of the same name.
        headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
        headers["authorization"] = f"Bearer {key}"
    return headers
