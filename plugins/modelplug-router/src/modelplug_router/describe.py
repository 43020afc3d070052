"""``modelplug resolve GROUP``: each deployment of the group and its state now."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from modelplug import ModelplugError

from .groups import group_named
from .state import read_states

if TYPE_CHECKING:
    from modelplug import CallContext, Route
    from modelplug_kit import CounterStore

    from .groups import Deployment, Group
    from .state import State

    StoreFor = Callable[[CallContext], CounterStore]
    RouteOf = Callable[[CallContext, str], Route]

__all__ = ["describe_route"]


def describe_route(
    route: Route, client: CallContext, store_for: StoreFor, route_of: RouteOf
) -> Awaitable[dict[str, Any]] | None:
    """The router's section for a group's route (its state in ``store_for(client)``,
    each deployment's route by ``route_of``); None for any other route."""
    if route.endpoint.type != "group":
        return None
    group = group_named(client.settings, route.model)
    if group is None:
        return None
    return section(group, client, store_for(client), route_of)


async def section(
    group: Group, client: CallContext, store: CounterStore, route_of: RouteOf
) -> dict[str, Any]:
    states = await read_states(store, group, health=True)
    deployments = []
    lines = [f"group {group.name}: strategy {group.strategy}, store {store!r}"]
    for deployment, state in zip(group.deployments, states, strict=True):
        answers = answering(route_of, client, deployment.spec)
        facts = deployment_facts(deployment, state, answers)
        deployments.append(facts)
        lines.append(deployment_line(facts))
    return {
        "section": "router",
        "lines": lines,
        "group": group.name,
        "strategy": group.strategy,
        "store": type(store).__name__,
        "deployments": deployments,
    }


def answering(route_of: RouteOf, client: CallContext, spec: str) -> str:
    """The ``provider/model`` a deployment's spec resolves to, or why it does not."""
    try:
        return route_of(client, spec).name
    except ModelplugError as exc:
        return f"does not resolve: {exc}"


def deployment_facts(deployment: Deployment, state: State, answers: str) -> dict[str, Any]:
    return {
        "spec": deployment.spec,
        "route": answers,
        "weight": deployment.weight,
        "in_flight": state.busy,
        "max_parallel": deployment.max_parallel,
        "latency_ms": state.latency_ms,
        "rpm_used": state.rpm,
        "rpm": deployment.rpm,
        "tpm_used": state.tpm,
        "tpm": deployment.tpm,
        "cooldown_s": round(state.cooling, 1),
        "health_interval_s": deployment.health_interval,
        "last_probe": None
        if state.probe_ok is None
        else {"ok": state.probe_ok, "seconds_ago": round(state.probe_age, 1)},
    }


def deployment_line(facts: dict[str, Any]) -> str:
    def used(value: int, ceiling: int | None) -> str:
        return f"{value}" if ceiling is None else f"{value}/{ceiling}"

    latency = "-" if facts["latency_ms"] is None else f"{facts['latency_ms']} ms"
    cooling = f"cooling {facts['cooldown_s']:g} s" if facts["cooldown_s"] > 0 else "free"
    name = (
        facts["spec"] if facts["spec"] == facts["route"] else f"{facts['spec']} -> {facts['route']}"
    )
    return (
        f"{name}: weight {facts['weight']:g}, "
        f"in flight {used(facts['in_flight'], facts['max_parallel'])}, latency {latency}, "
        f"rpm {used(facts['rpm_used'], facts['rpm'])}, "
        f"tpm {used(facts['tpm_used'], facts['tpm'])}, {cooling}{health(facts)}"
    )


def health(facts: dict[str, Any]) -> str:
    """``, probed every 30 s, last probe ok 12 s ago`` (nothing without health checks)."""
    if facts["health_interval_s"] is None:
        return ""
    said = f", probed when idle {facts['health_interval_s']:g} s"
    last = facts["last_probe"]
    if last is None:
        return f"{said}, no probe yet"
    outcome = "ok" if last["ok"] else "failed"
    return f"{said}, last probe {outcome} {last['seconds_ago']:g} s ago"
