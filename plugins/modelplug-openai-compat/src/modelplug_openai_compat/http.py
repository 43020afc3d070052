"""This plugin's HTTP path (the kit's, one per plugin) and its options, ``[openai-compat]``.

httpx2 is imported by the kit on first use, never when the plugin module is imported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from modelplug_kit import ProviderHTTP, Timeouts, provider_headers

from .errors import ERRORS

if TYPE_CHECKING:
    from modelplug import CallContext, Route, Settings

__all__ = ["HTTP", "Options", "options_of", "request_headers"]

SECTION = "openai-compat"
HTTP_KEY = "modelplug-openai-compat"


@dataclass(frozen=True)
class Options(Timeouts):
    """The kit's timeouts (``connect_timeout``, ``first_byte_timeout``,
    ``read_timeout``, ``write_timeout``): a local server evaluating a long prompt may
    say nothing for minutes.

    ``embed_concurrency``: how many batches of one embedding call are sent at once.
    """

    embed_concurrency: int = field(default=4, metadata={"gt": 0})


HTTP = ProviderHTTP(HTTP_KEY, section=SECTION, errors=ERRORS, options=Options)


def options_of(client: CallContext) -> Options:
    """The ``[openai-compat]`` table, checked once per event loop."""
    return HTTP.options(client)


def request_headers(
    route: Route, key: str | None, settings: Settings, accept: str = "text/event-stream"
) -> dict[str, str]:
    """The provider's configured headers, and the key as ``Authorization: Bearer``."""
    auth = {"authorization": f"Bearer {key}"} if key else None
    return provider_headers(route, settings, auth=auth, accept=accept)
