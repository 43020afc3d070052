"""modelplug-fallback: retries, fallback chains and cooldowns for every provider.

The hook wraps whatever stream the provider plugin opened (``wrapper=True``). The
policy itself lives in :mod:`modelplug_fallback.policy`, imported on the first call.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Generator
from typing import TYPE_CHECKING

from modelplug.plugins import hookimpl

if TYPE_CHECKING:
    from modelplug.client import Client
    from modelplug.types import Event, Request, Route

__version__ = "1.0.0"


@hookimpl(wrapper=True)
def modelplug_stream(
    route: Route, request: Request, client: Client
) -> Generator[None, AsyncIterator[Event] | None, AsyncIterator[Event] | None]:
    """Retry, fall back and cool down around the provider's stream (see the README).

    When a program registered its own FallbackPolicy on the client, that one applies
    and this default one steps aside, so two policies never wrap the same call.
    """
    from .policy import FallbackPolicy, default_policy

    if any(isinstance(p, FallbackPolicy) for p in client.host.pm.get_plugins()):
        return (yield)
    return (yield from default_policy().wrapper(route, request, client))
