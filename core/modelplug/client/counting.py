"""Counting tokens before sending: the route's server asked through
``modelplug_count_tokens``, exact or not at all.

None is a fact, not an error (seed 004): an endpoint with no count API answers None,
and a caller falls back to estimating rather than failing. Such an answer is kept for
the Client's life, so a route that cannot count is not asked again. A failure to get a
count (the server unreachable, a 5xx, a refused key) is None too, for that one call
only: a count that could not be obtained is not a count, and the next call asks again.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

from modelplug.contract.errors import ModelplugError

if TYPE_CHECKING:
    from modelplug.contract.context import CallContext
    from modelplug.contract.hook_types import HookRelay
    from modelplug.contract.routes import Route
    from modelplug.contract.types import Request

__all__ = ["UncountableRoutes", "count_on_route"]

log = logging.getLogger("modelplug")


class UncountableRoutes:
    """The routes (and kind of content) whose endpoint said it cannot count."""

    def __init__(self) -> None:
        self._keys: set[str] = set()

    @staticmethod
    def key(route: Route, content: str | Request) -> str:
        kind = "text" if isinstance(content, str) else "prompt"
        return json.dumps([route.provider, route.endpoint.base_url or "", route.model, kind])

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def add(self, key: str) -> None:
        self._keys.add(key)


async def count_on_route(
    hook: HookRelay,
    client: CallContext,
    route: Route,
    content: str | Request,
    uncountable: UncountableRoutes,
) -> int | None:
    """The exact count of ``content`` on ``route``, or None (see the module)."""
    key = UncountableRoutes.key(route, content)
    if key in uncountable:
        return None
    waiting = hook.modelplug_count_tokens(route=route, content=content, client=client)
    if waiting is None:
        uncountable.add(key)  # no plugin counts for this provider type
        return None
    try:
        counted = await waiting
    except ModelplugError as exc:
        log.info("modelplug: no token count from %s this time: %s", route.name, exc)
        return None
    if counted is None:
        uncountable.add(key)
        return None
    if type(counted) is not int or counted < 0:
        log.warning(
            "modelplug: the %s plugin counted %r tokens, not a whole number; ignored",
            route.plugin or route.provider,
            counted,
        )
        return None
    return counted
