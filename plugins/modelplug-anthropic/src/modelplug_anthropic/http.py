"""This plugin's HTTP path (the kit's, one per plugin) and what a Messages request sends.

The request is the one the anthropic SDK builds for ``messages.create(stream=True)``:
``POST {base_url}/v1/messages``, the key as ``Authorization: Bearer`` and the SDK's
``anthropic-version`` (what SDK 2.14 and 2.15 send), a JSON body. The tests build the
same request with the real SDK and compare them (tests/test_request_matches_sdk.py), so
a new SDK that sends something else shows up there. httpx2 is imported by the kit on
first use; the SDK not at all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from modelplug_kit import ProviderHTTP, provider_headers

from .errors import ERRORS
from .options import SECTION, Options

if TYPE_CHECKING:
    from collections.abc import Sequence

    from modelplug import Route, Settings

__all__ = ["API_VERSION", "DEFAULT_BASE_URL", "HTTP", "base_url", "messages_url", "request_headers"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2026-10-21"

HTTP = ProviderHTTP("modelplug-anthropic", section=SECTION, errors=ERRORS, options=Options)


def base_url(route: Route) -> str:
    """The server of ``route``: the user's own base URL, else Anthropic's. (The SDK's
    ANTHROPIC_BASE_URL is never read: only the user's settings file may point the key
    at another server.)"""
    return route.endpoint.base_url or DEFAULT_BASE_URL


def messages_url(route: Route) -> str:
    """Where the Messages API is: the SDK appends ``v1/messages`` to the base URL's path
    (a gateway's ``https://gw.example.com/anthropic`` included)."""
    return f"{base_url(route)}/v1/messages"


def request_headers(
    route: Route, key: str | None, settings: Settings, betas: Sequence[str] = ()
) -> dict[str, str]:
    """JSON in, an event stream out, the user's headers for the provider (a user's
    ``anthropic-version`` wins, as with the SDK), then the key, which wins over a
    configured header of the same name. ``betas`` (the request's ``extra["betas"]``)
    join the user's own ``anthropic-beta`` names, if any, in one header."""
    auth = {"authorization": f"Bearer {key}"} if key else None
    headers = provider_headers(route, settings, auth=auth)
    if not any(name.lower() == "anthropic-version" for name in headers):
        headers["anthropic-version"] = API_VERSION
    if betas:
        configured = [n for n in headers if n.lower() == "anthropic-beta"]
        names = [p.strip() for n in configured for p in headers.pop(n).split(",")]
        names += [b for b in betas if b not in names]
        headers["anthropic-beta"] = ",".join(n for n in names if n)
    return headers
