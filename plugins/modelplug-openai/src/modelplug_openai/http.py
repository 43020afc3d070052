"""This plugin's HTTP path (the kit's, one per plugin) and the request headers.

httpx2 is imported by the kit on first use, never when the plugin module is imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from modelplug_kit import ProviderHTTP, provider_headers

from .errors import ERRORS
from .options import SECTION, Options
from .providers import is_azure

if TYPE_CHECKING:
    from modelplug import Route, Settings

__all__ = ["HTTP", "request_headers"]

HTTP = ProviderHTTP("modelplug-openai", section=SECTION, errors=ERRORS, options=Options)


def request_headers(
    route: Route, key: str | None, settings: Settings, accept: str = "text/event-stream"
) -> dict[str, str]:
    """The provider's configured headers and the key: ``Authorization: Bearer`` for
    OpenAI and proxies, ``api-key`` for Azure OpenAI."""
    auth = None
    if key:
        auth = {"api-key": key} if is_azure(route.endpoint) else {"authorization": f"Bearer {key}"}
    return provider_headers(route, settings, auth=auth, accept=accept)
