"""What the servers behind the user's providers serve now, asked together: for
``modelplug models`` and the gateway's ``GET /v1/models``.

Asked: each provider whose server is on this machine (a local endpoint) or that the
user's own settings file defines, when its plugin can ask (``modelplug_list_models``).
Hosted vendors are not asked: their catalogues run to hundreds of models, and their
example stands for them. Each server gets :data:`LIST_TIMEOUT` seconds, all at once,
so one that is down costs a listing that long at most, and is said to be down.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from modelplug.contract.errors import ModelError, ModelplugError

if TYPE_CHECKING:
    from modelplug.client.surface import ClientSurface

__all__ = ["LIST_TIMEOUT", "Served", "ask_servers", "askable_providers"]

LIST_TIMEOUT = 3.0  # seconds for one server's list


@dataclass
class Served:
    """One server's answer: the models it lists, or why there are none to show."""

    provider: str
    #: Where the server is (the route's base URL; None: the plugin's default).
    url: str | None
    #: The model ids it lists; None when it did not answer.
    models: list[str] | None = None
    #: Why it did not answer (a short reason, no secret).
    error: str | None = None


def askable_providers(client: ClientSurface) -> dict[str, str | None]:
    """The providers to ask, each with its server's address: local endpoints and the
    user's own providers."""

    found: dict[str, str | None] = {}
    for provider in client.declared_providers():
        try:
            route = client.resolve(f"{provider}/{example_model(client, provider, 'any')}")
        except ModelplugError:
            continue  # listed with its error by whoever lists it
        if route.endpoint.local or provider in client.settings.providers:
            found[provider] = route.endpoint.base_url
    return found


async def ask_servers(
    client: ClientSurface, providers: dict[str, str | None], timeout: float = LIST_TIMEOUT
) -> dict[str, Served]:
    """Each provider's :class:`Served`, asked at once; a provider whose plugin cannot
    ask its server is left out."""

    async def ask(provider: str, url: str | None) -> Served | None:
        served = Served(provider, url)
        try:
            models = await asyncio.wait_for(client.alist_models(provider), timeout)
        except TimeoutError:
            served.error = f"no answer within {timeout:g} s"
        except ModelError as exc:
            served.error = exc.error_class.reason or type(exc).__name__
        except ModelplugError as exc:
            served.error = str(exc)
        else:
            if models is None:
                return None
            served.models = models
        return served

    answers = await asyncio.gather(*(ask(p, url) for p, url in providers.items()))
    return {served.provider: served for served in answers if served is not None}


def example_model(client: ClientSurface, provider: str, unknown: str = "<model>") -> str:
    """A model name to show for ``provider``: its declaration's example, else the
    known provider's, else ``unknown``."""
    from modelplug.host.known_providers import KNOWN_PROVIDERS

    for entry, _plugin in client.declared_providers().get(provider, []):
        if entry.example:
            return entry.example
    known = KNOWN_PROVIDERS.get(provider)
    return known.example if known is not None else unknown
