"""Health checks (``health_interval``): a deployment idle that long is probed, and a
failed probe cools it as a failed call would.

No thread: the call that finds a deployment idle (at pick time) starts its probe as a
task on the running loop and goes on without waiting for it. The tasks of a loop are
kept in an object the client closes with its HTTP clients (:meth:`Client.async_http`),
so ``aclose`` (and ``close``) cancels any probe still running and waits for it. One
probe per deployment at a time, across processes too: a probe first claims the
deployment's ``seen`` counter, which only an idle deployment lets it take.

The probe is core's: :meth:`Client.aprobe` (the server's own models endpoint, through the
provider plugin's ``modelplug_probe``), else :meth:`Client.alist_models` (``GET
/v1/models`` and its kin). No answer in time, a transport failure, a 5xx or a refused key
fails it; a deployment no plugin can probe is left alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from modelplug import ModelplugError

from .state import cooldown_setting, keys_of, probe_claim, probe_setting

if TYPE_CHECKING:
    from modelplug import CallContext, Route
    from modelplug_kit import CounterStore

    from .groups import Deployment, Group
    from .state import State

__all__ = ["PROBE_TIMEOUT", "Probes", "probe", "start_probes"]

PROBE_TIMEOUT = 10.0  # seconds a probe may take (at most the interval itself)

RouteOf = Callable[["CallContext", str], "Route"]
CooldownFor = Callable[[Exception, "Route", "CallContext"], float | None]


PROBES_KEY = "modelplug-router:health-probes"


class Probes:
    """The health probes running on one event loop for one client; closed with the
    client's HTTP clients of that loop."""

    def __init__(self) -> None:
        self.tasks: set[asyncio.Task[None]] = set()

    def start(self, checking: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(checking)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def aclose(self) -> None:
        """Cancel every probe still running, and wait until each has stopped."""
        running = list(self.tasks)
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running)


def start_probes(
    group: Group,
    states: list[State],
    picked: int,
    store: CounterStore,
    client: CallContext,
    route_of: RouteOf,
    cooldown_for: CooldownFor,
) -> None:
    """A probe task for each idle deployment but the one picked (its call tells), and
    none of those cooling down (they are skipped anyway)."""
    probes: Probes | None = None
    for index, (deployment, state) in enumerate(zip(group.deployments, states, strict=True)):
        if deployment.health_interval is None or index == picked:
            continue
        if state.idle and state.cooling <= 0:
            if probes is None:
                probes = client.async_http(PROBES_KEY, Probes)
            probes.start(probe(group, deployment, store, client, route_of, cooldown_for))


async def probe(
    group: Group,
    deployment: Deployment,
    store: CounterStore,
    client: CallContext,
    route_of: RouteOf,
    cooldown_for: CooldownFor,
) -> None:
    """Claim the deployment's probe, ask its server, and keep the outcome; a failure
    cools the deployment for ``cooldown_for``'s seconds (None: the failure is the
    request's own, no sign of the deployment's health, so nothing is kept)."""
    interval = deployment.health_interval
    assert interval is not None
    keys = keys_of(group, deployment)
    claimed = await store.reserve([probe_claim(keys, interval)])
    if claimed.refused is not None:
        return  # a call or another probe took it meanwhile
    try:
        route = route_of(client, deployment.spec)
    except ModelplugError:
        return  # the spec does not resolve: picking passes it over already
    try:
        async with asyncio.timeout(min(PROBE_TIMEOUT, interval)):
            answered = await ask(client, deployment.spec, route)
    except asyncio.CancelledError:
        raise  # the client closes
    except Exception as exc:  # the server's failure, whatever the plugin raised
        seconds = cooldown_for(exc, route, client)
        if seconds is None:
            return
        await store.settle([], [probe_setting(keys, False), cooldown_setting(keys, seconds)])
        return
    if answered:
        await store.settle([], [probe_setting(keys, True)])


async def ask(client: CallContext, spec: str, route: Route) -> bool:
    """Whether the server answered (False: no plugin can ask it)."""
    if await client.aprobe(spec) is not None:
        return True
    return await client.alist_models(route.provider) is not None
