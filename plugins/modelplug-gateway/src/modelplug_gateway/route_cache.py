"""The routes the gateway calls: each model name resolved at most once a second, not
once a call.

Resolving a name (aliases and roles, the provider plugin's answer, the catalog's model
info, the probe cache, the user's model settings) was about 40 us of the gateway's own
path of some 450 us a call, measured in-process, the largest single piece. The
gateway's settings are the operator's user file, read once at start, so a route changes
while it runs only through what a plugin reads live (its environment) or what a probe of
a local server learned: both are seen within :data:`ROUTE_TTL`. The Client takes the
kept Route in place of the name (:meth:`modelplug.Client.astream`) and skips resolving.

A name that does not resolve is never kept: each call asks again and gets the error in
full. At most :data:`MAX_ROUTES` names are kept (the allow-list's, or what callers sent
that resolved): past that the cache starts over, so names chosen by callers cannot grow
the process.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from modelplug import Client, Route

__all__ = ["MAX_ROUTES", "ROUTE_TTL", "RouteCache"]

ROUTE_TTL = 1.0
MAX_ROUTES = 256


class RouteCache:
    """The Route each model name resolves to, resolved again once it is ``ttl`` seconds
    old (``clock`` is injected by tests)."""

    __slots__ = ("_client", "_clock", "_routes", "_size", "_ttl")

    def __init__(
        self,
        client: Client,
        *,
        ttl: float = ROUTE_TTL,
        size: int = MAX_ROUTES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._ttl = ttl
        self._size = size
        self._clock = clock
        self._routes: dict[str, tuple[Route, float]] = {}

    def get(self, model: str) -> Route:
        """The route for ``model``; raises what :meth:`Client.resolve` raises."""
        now = self._clock()
        kept = self._routes.get(model)
        if kept is not None and now < kept[1]:
            return kept[0]
        route = self._client.resolve(model)
        if len(self._routes) >= self._size:
            self._routes.clear()
        self._routes[model] = (route, now + self._ttl)
        return route
