"""This plugin's HTTP path (the kit's, one per plugin), its options (``[ollama]`` in
settings) and the headers every request sends.

httpx2 is imported by the kit on first use, never when the plugin module is imported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from modelplug_kit import ProviderHTTP, Timeouts, provider_headers

from .errors import ERRORS, SECTION

if TYPE_CHECKING:
    from modelplug import Route, Settings

__all__ = ["HTTP", "Options", "request_headers"]


@dataclass(frozen=True)
class Options(Timeouts):
    """``[ollama]`` in settings.

    The kit's timeouts (``connect_timeout``, ``first_byte_timeout``, ``read_timeout``,
    ``write_timeout``): loading a model and evaluating a long prompt may take minutes
    before the answer begins. ``keep_alive`` is sent with every request (Ollama's
    duration: ``"10m"``, or seconds; ``-1`` keeps the model loaded). ``probe`` asks
    ``/api/show`` once per client and model before the first call, for the model's
    trained context length and capabilities (a request with tools to a model without
    them is refused before sending); with ``probe = false`` only an explicit
    ``modelplug resolve --probe`` fills that knowledge.
    """

    keep_alive: str | int | None = None
    probe: bool = True


HTTP = ProviderHTTP("modelplug-ollama", section=SECTION, errors=ERRORS, options=Options)


def request_headers(
    route: Route, key: str | None, settings: Settings, accept: str = "application/x-ndjson"
) -> dict[str, str]:
    """The provider's configured headers (a proxy's own), and the key as
    ``Authorization: Bearer`` when the provider names one."""
    auth = {"authorization": f"Bearer {key}"} if key else None
    return provider_headers(route, settings, auth=auth, accept=accept)
