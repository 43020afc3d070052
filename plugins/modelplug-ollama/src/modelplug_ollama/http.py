"""This plugin's options (``[ollama]`` in settings), the shared httpx2 client and the
headers every request sends.

httpx2 is imported here, on first use, never when the plugin module is imported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from modelplug.plugin import http_limits, read_options

if TYPE_CHECKING:
    import httpx2
    from modelplug.plugin import Client, Route, Settings

__all__ = ["HTTP_KEY", "SECTION", "Options", "request_headers", "shared_http"]

SECTION = "ollama"
HTTP_KEY = "modelplug-ollama"


@dataclass(frozen=True)
class Options:
    """``[ollama]`` in settings.

    ``read_timeout`` is the longest silence between two reads before a call fails as
    transient: loading a model and evaluating a long prompt may take minutes.
    ``keep_alive`` is sent with every request (Ollama's duration: ``"10m"``, or
    seconds; ``-1`` keeps the model loaded). ``probe`` asks ``/api/show`` once per
    client and model before the first call, for the model's trained context length
    and capabilities (a request with tools to a model without them is refused before
    sending); with ``probe = false`` only an explicit ``modelplug resolve --probe``
    fills that knowledge.
    """

    connect_timeout: float = field(default=10.0, metadata={"gt": 0})
    read_timeout: float = field(default=300.0, metadata={"gt": 0})
    write_timeout: float = field(default=60.0, metadata={"gt": 0})
    keep_alive: str | int | None = None
    probe: bool = True


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
    options raise ConfigError here, before anything is kept."""

    def make() -> _SharedHTTP:
        import httpx2

        options = read_options(client.settings, SECTION, Options)
        timeout = httpx2.Timeout(
            connect=options.connect_timeout,
            read=options.read_timeout,
            write=options.write_timeout,
            pool=options.connect_timeout,
        )
        http = httpx2.AsyncClient(
            timeout=timeout, follow_redirects=False, limits=http_limits(client.settings)
        )
        return _SharedHTTP(http, options)

    shared = client.async_http(HTTP_KEY, make)
    return shared.http, shared.options


def request_headers(route: Route, key: str | None, settings: Settings) -> dict[str, str]:
    """What every request sends: JSON, the provider's configured headers (a proxy's
    own; their values read from the user's settings now, since a route holds only
    their names), and the key as ``Authorization: Bearer`` when the provider names one."""
    headers = {"content-type": "application/json", "accept": "application/x-ndjson"}
    headers.update(settings.provider_headers(route.provider))
    if key:
        # One Authorization header: the key wins over a header of the same name.
        headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
        headers["authorization"] = f"Bearer {key}"
    return headers
