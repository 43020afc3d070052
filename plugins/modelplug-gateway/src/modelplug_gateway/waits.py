"""How long the gateway lets a call wait in silence: ``[gateway] max_wait`` at most.

A caller of the gateway sees nothing while a call waits before its answer starts (a
plain answer has no way to say "waiting"; its SDK only sees time pass). The policies a
call runs through may wait far longer than an SDK's timeout: the fallback policy waits
out a server's Retry-After (up to its ``max_retry_after``, 30 s, per retry) and
modelplug-limits waits for room in a rate limit (up to its ``max_wait``, 30 s), room a
429 closed for every process sharing the store. A gateway call whose upstream answered
429 with ``Retry-After: 30`` was held a minute, and one to the same model through
another gateway process, half a minute before it was even sent.

So the gateway's Client runs with those bounds cut to ``[gateway] max_wait`` (default
5 s): a wait longer than that is not made, and the call fails at once with the
rate-limit error the policy raises in its place (the server's Retry-After, or the time
the room stays closed), which the app answers as 429 with that Retry-After in the
caller's shape. Waits within the bound (a retry after 1 s, room in 2 s) are still made.
The operator's own lower values of those settings stand.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from modelplug import Client, Settings

    from .settings import GatewaySettings

__all__ = ["BOUNDED", "bounded_waits", "gateway_client"]

BOUNDED: dict[str, dict[str, float]] = {
    # plugin (its settings table) -> each setting that bounds a wait, and its default
    "modelplug-limits": {"max_wait": 30.0},
    "modelplug-fallback": {"max_retry_after": 30.0, "max_backoff": 30.0},
}


def gateway_client(options: GatewaySettings | None = None) -> Client:
    """The Client a gateway's app runs its calls through: the operator's user file (never
    a project file), with the policies' waits bounded by ``[gateway] max_wait``."""
    from modelplug import Client, load_settings

    from .settings import read_gateway

    settings = load_settings(use_project=False)
    if options is None:
        options = read_gateway(settings)
    bounded = bounded_waits(settings, options.max_wait)
    if bounded:
        settings = load_settings(use_project=False, explicit=bounded)
    return Client(settings=settings)


def bounded_waits(settings: Settings, bound: float) -> dict[str, dict[str, Any]]:
    """The settings that cut each installed policy's waits to ``bound`` seconds, as an
    explicit layer over ``settings`` (a value the operator set lower is kept)."""
    installed = {ep.name for ep in entry_points(group="modelplug")}
    layer: dict[str, dict[str, Any]] = {}
    for plugin, waits in BOUNDED.items():
        if plugin not in installed:
            continue  # a table no plugin reads would only earn a warning
        table = plugin.removeprefix("modelplug-")
        chosen = settings.plugin_options(table, project=False)
        cut = {}
        for name, default in waits.items():
            value = chosen.get(name, default)
            if isinstance(value, bool) or not isinstance(value, int | float):
                continue  # a wrong value is the policy's to report, naming its setting
            cut[name] = min(bound, float(value))
        layer[table] = cut
    return layer
