"""The ``[groups]`` settings: each group's deployments and its strategy, validated.

A plain dataclass reading (no pydantic): a group is read on a client's first call and
kept for as long as the client's settings are the same object.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_args

from modelplug import ConfigError, Endpoint, Route

if TYPE_CHECKING:
    from modelplug import Settings

__all__ = [
    "GROUP_TYPE",
    "STRATEGIES",
    "Deployment",
    "Group",
    "Strategy",
    "group_named",
    "group_route",
    "groups_in",
]

Strategy = Literal["weighted", "least-busy", "latency", "usage", "cost"]
STRATEGIES: tuple[str, ...] = get_args(Strategy)
SECTION = "groups"
GROUP_TYPE = "group"  # the provider and endpoint type of a group's route
GROUP_KEYS = ("deployments", "strategy", "health_interval")
DEPLOYMENT_KEYS = ("spec", "weight", "rpm", "tpm", "max_parallel", "health_interval")
UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0}


@dataclass(frozen=True)
class Deployment:
    """One place a group's calls may go: a spec or an alias, its share of the calls
    (``weight``, for ``weighted``), its own ceilings (None: none) and the seconds it
    may stay idle before a health probe (None: never probed; the group's when unset in
    its table)."""

    spec: str
    weight: float = 1.0
    rpm: int | None = None
    tpm: int | None = None
    max_parallel: int | None = None
    health_interval: float | None = None


@dataclass(frozen=True)
class Group:
    """A model group: one name for several deployments, and how a call picks one."""

    name: str
    deployments: tuple[Deployment, ...]
    strategy: Strategy = "weighted"
    probed: bool = False  # whether any deployment has a health_interval


_READ: weakref.WeakKeyDictionary[Settings, dict[str, Group]] = weakref.WeakKeyDictionary()


def groups_in(settings: Settings) -> dict[str, Group]:
    """Every group the settings name, read once per settings object."""
    found = _READ.get(settings)
    if found is None:
        raw = settings.plugin_options(SECTION)
        found = {name: read_group(name, table) for name, table in raw.items()}
        for group in found.values():
            refuse_nested(group, found)
        _READ[settings] = found
    return found


def refuse_nested(group: Group, groups: Mapping[str, Group]) -> None:
    """A ConfigError when a deployment of ``group`` is another group: the router opens a
    deployment's stream past itself, so a group there could never answer."""
    for deployment in group.deployments:
        if deployment.spec.removeprefix("group/") in groups:
            raise nested_group(group, deployment.spec)


def nested_group(group: Group, spec: str) -> ConfigError:
    """The error for a deployment ``spec`` of ``group`` that is (or names) a group."""
    return ConfigError(
        f"[groups.{group.name}] deployment {spec!r} is a group; a group's deployments "
        "are provider routes (list that group's deployments here, or put it in the "
        "fallback chain)"
    )


def group_named(settings: Settings, name: str) -> Group | None:
    """The group called ``name`` (or ``group/name``), or None when there is none."""
    raw = settings.options.get(SECTION)
    if not raw:
        return None
    name = name.removeprefix("group/")
    if name not in raw:
        return None
    return groups_in(settings)[name]


def group_route(settings: Settings, spec: str) -> Route | None:
    """The route of the group ``spec`` names (``NAME`` or ``group/NAME``): provider and
    endpoint type ``group``, model the group's name; None when no group has that name.
    A ConfigError names what is wrong in the group's table."""
    group = group_named(settings, spec)
    if group is None:
        return None
    return Route(provider=GROUP_TYPE, model=group.name, endpoint=Endpoint(type=GROUP_TYPE))


def read_group(name: str, table: Any) -> Group:
    """``[groups.NAME]`` as a Group; a ConfigError names what is wrong and how to fix it."""
    where = f"[groups.{name}]"
    if not isinstance(table, Mapping):
        raise ConfigError(f'{where} must be a table, e.g. deployments = ["a/m", "b/m"]')
    unknown = [key for key in table if key not in GROUP_KEYS]
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(GROUP_KEYS)})")
    strategy = table.get("strategy", "weighted")
    if strategy not in STRATEGIES:
        raise ConfigError(f"{where} strategy must be one of {', '.join(STRATEGIES)}")
    entries = table.get("deployments")
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f'{where} needs deployments = ["provider/model", ...] (one or more)')
    interval = read_interval(where, table.get("health_interval"))
    deployments = tuple(read_deployment(where, entry, interval) for entry in entries)
    specs = [d.spec for d in deployments]
    twice = next((s for s in specs if specs.count(s) > 1), None)
    if twice is not None:
        raise ConfigError(f"{where} names the deployment {twice!r} twice; give it a weight")
    if name in specs or f"group/{name}" in specs:
        raise ConfigError(f"{where} names itself as a deployment")
    probed = any(d.health_interval is not None for d in deployments)
    return Group(name=name, deployments=deployments, strategy=strategy, probed=probed)


def read_interval(where: str, value: Any) -> float | None:
    """``health_interval``: a duration such as ``"30s"``, ``"5m"`` or ``"1h"`` (or a
    number of seconds), above 0; None when unset."""
    if value is None:
        return None
    seconds: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str) and value.strip()[-1:] in UNITS:
        number = value.strip()[:-1].strip()
        try:
            seconds = float(number) * UNITS[value.strip()[-1]]
        except ValueError:
            seconds = None
    if seconds is None or not (math.isfinite(seconds) and seconds > 0):
        raise ConfigError(
            f'{where} health_interval must be a duration above 0 such as "30s", "5m" or '
            f'"1h", not {value!r}'
        )
    return seconds


def read_deployment(where: str, entry: Any, interval: float | None = None) -> Deployment:
    """One entry of ``deployments``: a spec, or a table with ``spec`` and its numbers
    (``interval``: the group's ``health_interval``, unless the table sets its own)."""
    if isinstance(entry, str) and entry.strip():
        return Deployment(spec=entry.strip(), health_interval=interval)
    if not isinstance(entry, Mapping) or not isinstance(entry.get("spec"), str):
        raise ConfigError(
            f"{where} deployments: each is a spec or a table with a spec, e.g. "
            '{ spec = "openai/gpt-4.1", weight = 2, rpm = 500 }'
        )
    unknown = [key for key in entry if key not in DEPLOYMENT_KEYS]
    if unknown:
        raise ConfigError(
            f"{where} deployment {entry['spec']!r}: unknown key {unknown[0]!r} "
            f"(known: {', '.join(DEPLOYMENT_KEYS)})"
        )
    weight = entry.get("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, int | float):
        raise ConfigError(f"{where} deployment {entry['spec']!r}: weight must be a number")
    if not (math.isfinite(weight) and weight > 0):
        raise ConfigError(f"{where} deployment {entry['spec']!r}: weight must be above 0")
    ceilings = {}
    for key in ("rpm", "tpm", "max_parallel"):
        value = entry.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ConfigError(f"{where} deployment {entry['spec']!r}: {key} must be a whole number")
        if value is not None and value < 1:
            raise ConfigError(f"{where} deployment {entry['spec']!r}: {key} must be 1 or more")
        ceilings[key] = value
    if "health_interval" in entry:
        interval = read_interval(f"{where} deployment {entry['spec']!r}:", entry["health_interval"])
    return Deployment(
        spec=entry["spec"].strip(), weight=float(weight), health_interval=interval, **ceilings
    )
