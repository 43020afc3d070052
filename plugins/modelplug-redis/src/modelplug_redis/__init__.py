"""modelplug-redis: the stores that share cooldowns, rate windows and budgets across
processes and machines, in Redis.

A stores plugin: it implements no hook, and says what it is with ``modelplug_policy =
"stores"``. The fallback policy asks it for ``cooldown_store(client)``, the limits
policy for ``counter_store(client)``; each is None until a Redis URL is set in the
user's file (``[redis] url``) or the environment (``MODELPLUG_REDIS_URL``), never by a
project file. The ``redis`` library (its asyncio API) loads on the first store call.

For other plugins that keep their own state in the operator's Redis (modelplug-gateway's
virtual keys): :func:`connection_for` (the client's :class:`Connection`, with its
timeouts and outage state, or None when no URL is set), loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from modelplug import CallContext

    from .connection import Connection, connection_for
    from .cooldowns import RedisCooldowns
    from .counters import RedisCounters

__version__ = "2.0.0.dev0"
__all__ = ["Connection", "connection_for", "cooldown_store", "counter_store"]

modelplug_policy = "stores"
"""The fallback and limits policies find this module by this kind."""

_WHERE = {
    "Connection": "connection",
    "connection_for": "connection",
    "RedisCooldowns": "cooldowns",
    "RedisCounters": "counters",
    "RedisOptions": "connection",
    "StoreUnavailableError": "connection",
}


def cooldown_store(client: CallContext) -> RedisCooldowns | None:
    """The fallback policy's cooldown table in Redis, or None when no URL is set."""
    from .connection import connection_for

    connection = connection_for(client)
    if connection is None:
        return None
    from .cooldowns import RedisCooldowns

    return RedisCooldowns(connection)


def counter_store(client: CallContext) -> RedisCounters | None:
    """The limits policy's rate windows and budgets in Redis, or None when no URL is set."""
    from .connection import connection_for

    connection = connection_for(client)
    if connection is None:
        return None
    from .counters import RedisCounters

    return RedisCounters(connection)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is not None:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{module}"), name)
    raise AttributeError(f"module 'modelplug_redis' has no attribute {name!r}")
