"""The candidates for one call: the route asked for, then its fallback chain."""

from __future__ import annotations

from typing import TYPE_CHECKING

from modelplug import Route

if TYPE_CHECKING:
    from modelplug import CallContext, Settings

__all__ = ["Candidates", "chain_specs"]


def chain_specs(settings: Settings, route: Route) -> list[str]:
    """The fallback specs for ``route``: ``fallbacks[role]``, else ``fallbacks[spec]``
    (what the caller asked for, e.g. an alias), else ``fallbacks["provider/model"]``."""
    for key in (route.role, route.spec, route.name):
        if key and key in settings.fallbacks:
            return list(settings.fallbacks[key])
    return []


class Candidates:
    """The route asked for (index 0) and its fallbacks, resolved only when needed.

    A fallback is resolved with ``client.resolve`` (so it may be an alias or a role)
    and, when its endpoint is not local and names a key variable, its key is looked up
    so a candidate without one is skipped before anything is sent. Both raise a
    :class:`~modelplug.contract.errors.ModelplugError` the caller reports as the skip reason.
    """

    def __init__(self, client: CallContext, first: Route) -> None:
        self.client = client
        self.specs = [first.name, *chain_specs(client.settings, first)]
        self._routes: dict[int, Route] = {0: first}

    def __len__(self) -> int:
        return len(self.specs)

    def route(self, index: int) -> Route:
        cached = self._routes.get(index)
        if cached is not None:
            return cached
        route = self.client.resolve(self.specs[index])
        variable = route.endpoint.api_key_env
        if variable and not route.endpoint.local:
            self.client.settings.api_key(variable, route.provider)
        self._routes[index] = route
        return route
